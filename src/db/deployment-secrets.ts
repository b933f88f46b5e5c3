import type { Db } from './database.ts';

export async function readDeploymentSecret(db: Db, name: string): Promise<string> {
  const row = await db.selectFrom('deployment_secrets').select('value').where('name', '=', name).executeTakeFirst();
  if (!row) throw new Error(`deployment secret ${name} is missing; run the migrations`);
  return row.value;
}
