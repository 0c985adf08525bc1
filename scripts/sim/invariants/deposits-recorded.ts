import type { Invariant, Violation } from '../contract.js';
import { transfers } from './evm-chain.js';
import { solanaReader } from './solana-chain.js';
import { tronAsEvm, tronHex } from './tron-chain.js';

export const DEPOSITS_RECORDED = 'deposits-recorded-below-cursor';

// The watcher's cursor never passes a deposit it did not record (src/watcher/network-watcher.ts: a step's deposits and
// its cursor commit in one transaction): every transfer of a configured token to a deposit address of ours, on the
// canonical chain in a block at or below the watcher's committed cursor tip (`chain_cursors.tip_height`), has a live
// (not orphaned) deposit row, whatever the session (paid, under- or late-paid, canceled). A transfer above the tip is
// not judged (the watcher has not reached it yet), nor one of zero value. This is what `session-paid-iff-chain` sees
// only when the lost transfer would have paid a session; here an underpayment, a late payment or money to a canceled
// session lost past the cursor counts as well. The watch set cannot miss an address whose payment is in the range: a
// poll reads the head before it syncs the addresses, and a payment is made after its address is committed
// (src/watcher/watch-set.ts). EVM networks and TRON (its Ethereum-compatible JSON-RPC), and Solana: there the cursor's
// tip is the confirmed slot its poll read before any listing (chains/solana/deposit-scanner.ts), a transfer is a
// balance increase of a registry mint in an account the deposit address owns, keyed by signature and that account's
// index in the transaction (the deposit row's log_index), read at the service's commitment, and signatures compare
// exactly (base58).
export const depositsRecordedBelowCursor: Invariant = async (ctx) => {
  const out: Violation[] = [];
  const cursors = await ctx.db.selectFrom('chain_cursors').select(['chain_key', 'tip_height']).execute();
  const tron = tronAsEvm(ctx.chains);
  const bare = (hash: string) => hash.toLowerCase().replace(/^0x/, '');
  for (const chain of [...ctx.chains.evm, ...(tron ? [tron] : [])]) {
    const hex = (a: string) => (chain.network === 'tron' ? (tronHex(a) ?? a) : a.toLowerCase());
    for (const { c, addresses, rows } of await watched(ctx, cursors, chain.network)) {
      const sessionOf = new Map(addresses.map((a) => [hex(a.address), a.session_id]));
      const live = new Set(rows.map((r) => `${bare(r.tx_hash)}:${r.log_index}`));
      for (const t of await transfers(chain, { to: [...sessionOf.keys()], toBlock: c.tip_height })) {
        if (t.value === 0n || live.has(`${bare(t.txHash)}:${t.logIndex}`)) continue;
        const session = sessionOf.get(t.to) ?? 'none';
        out.push({
          invariant: DEPOSITS_RECORDED,
          subject: session,
          message:
            `${t.value} ${t.token} to ${t.to} (session ${session}) in ${t.txHash} at block ${t.blockNumber} is not recorded as a ` +
            `deposit, but the ${c.chain_key} watcher's committed cursor is past it (tip ${c.tip_height})`,
        });
      }
    }
  }
  if (ctx.chains.solana) out.push(...(await solanaDeposits(ctx, cursors)));
  return out;
};

type Ctx = Parameters<Invariant>[0];
type Cursor = { chain_key: string; tip_height: bigint };

/** Each cursor of `network` (test and live) with its deposit addresses (none: left out) and its live deposit rows. */
async function watched(ctx: Ctx, cursors: Cursor[], network: string) {
  const out = [];
  for (const c of cursors) {
    const [net, mode] = c.chain_key.split(':');
    if (net !== network || (mode !== 'test' && mode !== 'live')) continue;
    const addresses = await ctx.db
      .selectFrom('deposit_addresses')
      .select(['address', 'session_id'])
      .where('network', '=', network)
      .where('mode', '=', mode)
      .execute();
    if (addresses.length === 0) continue;
    const rows = await ctx.db
      .selectFrom('deposits')
      .select(['tx_hash', 'log_index'])
      .where('network', '=', network)
      .where('mode', '=', mode)
      .where('status', '!=', 'orphaned')
      .execute();
    out.push({ c, addresses, rows });
  }
  return out;
}

async function solanaDeposits(ctx: Ctx, cursors: Cursor[]): Promise<Violation[]> {
  const out: Violation[] = [];
  const reader = solanaReader(ctx.chains.solana!);
  for (const { c, addresses, rows } of await watched(ctx, cursors, 'solana')) {
    const live = new Set(rows.map((r) => `${r.tx_hash}:${r.log_index}`));
    for (const a of addresses)
      for (const t of await reader.creditsTo(a.address)) {
        if (BigInt(t.slot) > c.tip_height || live.has(`${t.signature}:${t.accountIndex}`)) continue;
        out.push({
          invariant: DEPOSITS_RECORDED,
          subject: a.session_id,
          message:
            `${t.amount} ${t.token} to ${a.address} (session ${a.session_id}) in ${t.signature} at slot ${t.slot} is not recorded as a ` +
            `deposit, but the ${c.chain_key} watcher's committed cursor is past it (tip ${c.tip_height})`,
        });
      }
  }
  return out;
}
