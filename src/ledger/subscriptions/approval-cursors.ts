import type { Db } from '../../db/database.js';

// How far the approval poller has scanned each chain's Approval logs: blocks at or below it are never scanned again.

export async function loadApprovalCursor(db: Db, chainKey: string): Promise<bigint | undefined> {
  const row = await db.selectFrom('approval_scan_cursors').select('last_block').where('chain_key', '=', chainKey).executeTakeFirst();
  return row?.last_block;
}

export async function saveApprovalCursor(db: Db, chainKey: string, lastBlock: bigint): Promise<void> {
  await db
    .insertInto('approval_scan_cursors')
    .values({ chain_key: chainKey, last_block: lastBlock })
    .onConflict((oc) => oc.column('chain_key').doUpdateSet({ last_block: lastBlock, updated_at: new Date() }))
    .execute();
}
