import type { Db } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';

export const confirmationsRepository = {
  /** Records a confirmation's use; false when it was used before (by this process or another). */
  async markUsed(db: Db, row: { nonce: string; organisation_id: string; used_at: string; expires_at: string }): Promise<boolean> {
    try {
      await db.insertInto('mcp_confirmations_used').values(row).execute();
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  },
  /** Rows whose confirmation has expired: the signature refuses those anyway. */
  async purgeExpired(db: Db, now: string): Promise<void> {
    await db.deleteFrom('mcp_confirmations_used').where('expires_at', '<', now).execute();
  },
};
