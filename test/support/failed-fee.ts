import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import type { FailpointAction } from '../../src/outbound/failpoints.js';
import type { FakeSolanaValidator } from '../../scripts/devnet/solana-rpc/fake-validator.js';

// Shared steps of the failed-transaction tests (docs/journal.md "Failed transactions: the fee is still burnt"): land a
// transaction of ours that fails on the LiteSVM endpoint, read what the journal holds for it, and compare a sender's
// journal balance with the chain. Used by journal-failed-*.test.ts for refunds, charges, sweep steps and deposit setups.

type Db = Kysely<Database>;

export interface BurntFee {
  kind: 'refund_payout' | 'charge' | 'sweep' | 'deposit_setup';
  object: { type: 'refund' | 'invoice' | 'sweep' | 'session'; id: string };
  network: 'solana' | 'tron';
  txHash: string;
  merchantId: string;
  blockHeight: bigint;
  /** Canonical address of the account that paid the fee. */
  sender: string;
  fee: bigint;
}

/** Every journal entry recorded for one transaction hash, whatever its kind or object. */
export function entriesOfTx(db: Db, txHash: string) {
  return db.selectFrom('journal_entries').selectAll().where('tx_hash', '=', txHash).execute();
}

/**
 * Asserts the failed transaction's fee is journaled exactly once: one entry for its hash (nothing else booked it, not
 * as unexplained either), of the business object's kind, leg key `reverted`, on the object, legs sender →
 * fees:<network> in the native asset for the fee.
 */
export async function expectBurntFeeOnce(db: Db, b: BurntFee): Promise<void> {
  const entries = await entriesOfTx(db, b.txHash);
  expect(entries).toHaveLength(1);
  expect(entries[0]).toMatchObject({
    kind: b.kind,
    leg_key: 'reverted',
    object_type: b.object.type,
    object_id: b.object.id,
    merchant_id: b.merchantId,
    block_height: b.blockHeight,
  });
  const legs = await db
    .selectFrom('journal_legs')
    .select(['account', 'asset', 'amount'])
    .where('entry_id', '=', entries[0]!.id)
    .orderBy('amount')
    .execute();
  expect(legs).toEqual([
    { account: `address:${b.network}:test:${b.sender}`, asset: `${b.network}:test:native`, amount: -b.fee },
    { account: `fees:${b.network}`, asset: `${b.network}:test:native`, amount: b.fee },
  ]);
}

/** The journal's balance of one account in one asset (sum of its legs). */
export async function journalBalance(db: Db, account: string, asset: string): Promise<bigint> {
  const rows = await db.selectFrom('journal_legs').select('amount').where('account', '=', account).where('asset', '=', asset).execute();
  return rows.reduce((sum, r) => sum + r.amount, 0n);
}

/** The opening balances booked for one account, by asset. */
export function openingBalances(db: Db, account: string) {
  return db
    .selectFrom('journal_entries as e')
    .innerJoin('journal_legs as l', 'l.entry_id', 'e.id')
    .select(['l.asset', 'l.amount'])
    .where('e.kind', '=', 'opening_balance')
    .where('l.account', '=', account)
    .execute();
}

/**
 * Lands one of our Solana transactions failed, as a validator would: landing is held while `broadcast` waits until
 * the service has broadcast it (the node's preflight accepted it), then `spoil` changes the chain so that it fails
 * (a token account frozen by its issuer, an account taken at the address it creates) and the held transaction lands
 * in the same tick, with its error and its fee paid. Answers what `broadcast` answered (the transaction's hash).
 */
export async function landFailedOnSolana(
  validator: FakeSolanaValidator,
  broadcast: () => Promise<string>,
  spoil: () => void,
): Promise<string> {
  validator.pauseLanding('hold');
  try {
    return await broadcast();
  } finally {
    spoil();
    validator.resumeLanding();
  }
}

/** What the in-process interruption at `outbound:after_burnt_fee` throws. */
export class StoppedAtBurntFee extends Error {}

/**
 * The in-process stand-in for a process killed at `outbound:after_burnt_fee` (for kinds driven in the test's own
 * process, such as the subscription scheduler): deps whose outbound step throws there, once, so the burnt fee is
 * journaled and nothing after it runs (the job is not failed). `stopped()` tells whether it was reached.
 */
export function stopOnceAtBurntFee<D extends object>(deps: D): { deps: D & { failpoint: FailpointAction }; stopped: () => boolean } {
  let reached = false;
  const failpoint: FailpointAction = (name) => {
    if (name !== 'outbound:after_burnt_fee' || reached) return;
    reached = true;
    throw new StoppedAtBurntFee(name);
  };
  return { deps: { ...deps, failpoint }, stopped: () => reached };
}

/**
 * Waits until the fake java-tron's solidified state holds `sun` for `address` (what reconcile reads on TRON: the
 * solidity API, docs/journal.md), mining with `mine` meanwhile when blocks do not come by themselves. An operator's
 * TRX funding set just before becomes readable only a few blocks later; a reconcile before that reads the wallet
 * unfunded and books no opening for it.
 */
export async function untilTrxSolidified(
  fake: { url: string },
  address: string,
  sun: bigint,
  mine?: () => Promise<unknown>,
  ms = 60_000,
): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const res = await fetch(`${fake.url}/walletsolidity/getaccount`, { method: 'POST', body: JSON.stringify({ address }) });
    const a = (await res.json()) as { balance?: number };
    if (BigInt(a.balance ?? 0) === sun) return;
    if (Date.now() > end) throw new Error(`the solidified TRX of ${address} never reached ${sun} sun (last ${a.balance ?? 0})`);
    await mine?.();
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A wallet's opening entries with their height and the wallet's registration height (TRON/Solana openings). */
export function openingsWithHeights(db: Db, address: string, account: string) {
  return db
    .selectFrom('journal_entries as e')
    .innerJoin('journal_legs as l', 'l.entry_id', 'e.id')
    .innerJoin('journal_wallets as w', (j) => j.onRef('w.address', '=', 'e.object_id'))
    .select(['e.block_height', 'w.registered_height', 'l.asset', 'l.amount'])
    .where('e.kind', '=', 'opening_balance')
    .where('e.object_id', '=', address)
    .where('l.account', '=', account)
    .execute();
}
