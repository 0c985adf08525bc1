import type { Invariant, Violation } from '../contract.js';
import { evmChain, receipt, receiptTransfers } from './evm-chain.js';
import { solanaReader } from './solana-chain.js';
import { tronAsEvm, tronHex } from './tron-chain.js';

export const SINGLE_CREDIT = 'no-transfer-credited-twice';

// No on-chain transfer is credited twice (docs/journal.md, src/ledger/payments/deposits.ts):
// - one live deposit row per (network, mode, tx hash, log index): orphaned rows (a reorg took their block) aside;
// - every credited deposit names a transfer that is on the canonical chain, to its address, of its token and amount
//   (EVM and TRON: the receipt's log at that index; Solana: the balance increase of the token account at that index);
// - no two sessions are paid by one deposit, and a session's received amount is the sum of its credited deposits.
export const noTransferCreditedTwice: Invariant = async (ctx) => {
  const out: Violation[] = [];
  const deposits = await ctx.db
    .selectFrom('deposits')
    .select(['id', 'network', 'mode', 'tx_hash', 'log_index', 'to_address', 'token', 'amount_base', 'session_id', 'status', 'disposition'])
    .where('status', '!=', 'orphaned')
    .execute();
  const byKey = new Map<string, typeof deposits>();
  for (const d of deposits) {
    const key = depositKey(d);
    byKey.set(key, [...(byKey.get(key) ?? []), d]);
  }
  for (const [key, rows] of byKey) {
    if (rows.length > 1)
      out.push({
        invariant: SINGLE_CREDIT,
        subject: key,
        message: `transfer ${key} has ${rows.length} live deposit rows (${rows.map((r) => `${r.id}→${r.session_id ?? 'none'}:${r.disposition ?? r.status}`).join(', ')})`,
      });
  }

  const solana = ctx.chains.solana ? solanaReader(ctx.chains.solana) : undefined;
  const tron = tronAsEvm(ctx.chains);
  // The recipient as the chain's reader reports it: 0x lowercase (TRON's canonical 41… converted), Solana as is.
  const chainForm = (network: string, a: string) => (network === 'solana' ? a : network === 'tron' ? (tronHex(a) ?? a) : a.toLowerCase());
  for (const d of deposits) {
    if (d.disposition !== 'credited') continue;
    const key = depositKey(d);
    let log: { to: string; value: bigint; token: string } | undefined;
    const chain = evmChain(ctx.chains.evm, d.network) ?? (d.network === 'tron' ? tron : undefined);
    if (chain) {
      const r = await receipt(chain, d.tx_hash);
      log = r?.status === '0x1' ? receiptTransfers(chain, r).find((t) => t.logIndex === d.log_index) : undefined;
    } else if (d.network === 'solana' && solana) {
      const c = (await solana.credits(d.tx_hash)).credits.find((x) => x.accountIndex === d.log_index);
      log = c && { to: c.owner, value: c.amount, token: c.token };
    } else continue;
    if (!log)
      out.push({
        invariant: SINGLE_CREDIT,
        subject: key,
        message: `deposit ${d.id} credits ${key} to session ${d.session_id}, but no such transfer is on the canonical chain`,
      });
    else if (log.to !== chainForm(d.network, d.to_address) || log.value !== d.amount_base || log.token !== d.token)
      out.push({
        invariant: SINGLE_CREDIT,
        subject: key,
        message: `deposit ${d.id} credits ${d.amount_base} ${d.token} to ${d.to_address}, the chain's transfer ${key} moved ${log.value} ${log.token} to ${log.to}`,
      });
  }

  const settlements = await ctx.db.selectFrom('session_settlements').select(['session_id', 'paying_deposit_id']).execute();
  const payers = new Map<string, string[]>();
  for (const s of settlements) payers.set(s.paying_deposit_id, [...(payers.get(s.paying_deposit_id) ?? []), s.session_id]);
  for (const [dep, sessions] of payers)
    if (sessions.length > 1)
      out.push({
        invariant: SINGLE_CREDIT,
        subject: dep,
        message: `deposit ${dep} pays ${sessions.length} sessions: ${sessions.join(', ')}`,
      });
  const credited = new Map<string, { sessions: Set<string> }>();
  for (const d of deposits) {
    if (d.disposition !== 'credited' || !d.session_id) continue;
    const key = depositKey(d);
    const c = credited.get(key) ?? { sessions: new Set<string>() };
    c.sessions.add(d.session_id);
    credited.set(key, c);
  }
  for (const [key, c] of credited)
    if (c.sessions.size > 1)
      out.push({
        invariant: SINGLE_CREDIT,
        subject: key,
        message: `transfer ${key} is credited to ${c.sessions.size} sessions: ${[...c.sessions].join(', ')}`,
      });

  const sums = new Map<string, bigint>();
  for (const d of deposits)
    if (d.disposition === 'credited' && d.session_id) sums.set(d.session_id, (sums.get(d.session_id) ?? 0n) + d.amount_base);
  const sessions = await ctx.db.selectFrom('payment_sessions').select(['id', 'received_base']).where('received_base', '>', 0n).execute();
  const seen = new Set<string>();
  for (const s of sessions) {
    seen.add(s.id);
    const sum = sums.get(s.id) ?? 0n;
    if (sum !== s.received_base)
      out.push({
        invariant: SINGLE_CREDIT,
        subject: s.id,
        message: `session ${s.id} says it received ${s.received_base} base units, its credited deposits sum to ${sum}`,
      });
  }
  for (const [id, sum] of sums)
    if (!seen.has(id))
      out.push({
        invariant: SINGLE_CREDIT,
        subject: id,
        message: `session ${id} has credited deposits summing to ${sum} but says it received 0`,
      });
  return out;
};

/** `network/mode/tx:logIndex`; EVM and TRON hashes lowercase (hex), Solana signatures as they are (base58). */
function depositKey(d: { network: string; mode: string; tx_hash: string; log_index: number }): string {
  return `${d.network}/${d.mode}/${d.network === 'solana' ? d.tx_hash : d.tx_hash.toLowerCase()}:${d.log_index}`;
}
