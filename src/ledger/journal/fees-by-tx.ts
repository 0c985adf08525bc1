import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ChainRef } from '../core/chain-ref.js';
import { feesAccount, journalAsset } from './accounts.js';

// The network fee each of our transactions burnt, as the journal booked it (fees:<network>, in the native coin): the
// fee of a confirmed or reverted payout attempt, shown beside it. Entries undone by a reorg (a reversal entry names
// them) count for nothing; a transaction the journal has not booked (not final yet, or never mined) has no fee.

/** Net fee per transaction hash, in native base units; hashes without a booked fee are absent. */
export async function feesByTx(db: Kysely<Database>, chain: ChainRef, hashes: readonly string[]): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  if (hashes.length === 0) return out;
  const rows = await db
    .selectFrom('journal_entries as e')
    .innerJoin('journal_legs as l', 'l.entry_id', 'e.id')
    .select(['e.tx_hash', (eb) => eb.fn.sum<string>('l.amount').as('fee')])
    .where('e.network', '=', chain.network)
    .where('e.mode', '=', chain.mode)
    .where('e.tx_hash', 'in', [...new Set(hashes)])
    .where('e.reverses_id', 'is', null)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('journal_entries as r').select('r.id').whereRef('r.reverses_id', '=', 'e.id'))))
    .where('l.account', '=', feesAccount(chain.network))
    .where('l.asset', '=', journalAsset(chain.network, chain.mode, 'native'))
    .groupBy('e.tx_hash')
    .execute();
  for (const r of rows) out.set(r.tx_hash, BigInt(r.fee));
  return out;
}
