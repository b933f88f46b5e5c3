// Used by .ci/run: creates (or drops) a fresh PostgreSQL database for one test run.
// Usage: node scripts/test-database.ts create|drop <admin-url> <name>   (exit 3 when PostgreSQL does not answer)
import pg from 'pg';

const [command, adminUrl, name] = process.argv.slice(2);
if (!['create', 'drop'].includes(command) || !adminUrl || !/^[a-z0-9_]+$/.test(name ?? '')) {
  process.stderr.write('usage: node scripts/test-database.ts create|drop <admin-url> <name>\n');
  process.exit(2);
}
const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
try {
  await client.connect();
} catch {
  process.exit(3);
}
await client.query(command === 'create' ? `create database ${name}` : `drop database if exists ${name} with (force)`);
await client.end();
