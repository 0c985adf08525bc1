import { stablecoinMinorToBase } from '../../../src/domain/money.js';
import { settlesAsPaid } from '../../../src/domain/settlement-rule.js';
import type { Invariant, Violation } from '../contract.js';
import { blockTimes, confirmedHeight, tokenDecimals, transfers } from './evm-chain.js';
import { solanaReader } from './solana-chain.js';
import { tronAsEvm, tronHex } from './tron-chain.js';

export const SESSION_PAID = 'session-paid-iff-chain';

// A session is paid iff the canonical chain holds enough confirmed transfers of its selected token to its deposit
// address in blocks timestamped at or before its expiry (src/ledger/payments/deposits.ts `confirmFinalDeposits`): "enough" by
// the settlement rule (src/domain/settlement-rule.ts: in full, within a sub-unit remainder, or within the merchant's
// underpayment tolerance), the amount due being the session's target amount in the token's base units. Zero-value
// transfers count for nothing. A canceled session is never paid (the chain's money then is an unmatched deposit), so
// only the "paid ⇒ enough on chain" direction applies to it. EVM networks (confirmed: head − confirmations + 1) and
// TRON (its Ethereum-compatible JSON-RPC, addresses converted) and Solana (the balance increases of the deposit
// owner's accounts at the required commitment).
export const sessionPaidIffChain: Invariant = async (ctx) => {
  const out: Violation[] = [];
  const judge = (
    s: { id: string; status: string; token: string | null; deposit_address: string | null; underpayment_tolerance_bps: number },
    received: bigint,
    due: bigint,
    decimals: number,
    network: string,
  ) => {
    const enough = settlesAsPaid(due, received, decimals, s.underpayment_tolerance_bps);
    const paid = s.status === 'paid';
    const holds = `the canonical chain holds ${received} of ${due} base units of ${s.token} confirmed before its expiry at ${s.deposit_address} (${network})`;
    if (paid && !enough) out.push({ invariant: SESSION_PAID, subject: s.id, message: `session ${s.id} is paid but ${holds}` });
    else if (!paid && enough && s.status !== 'canceled')
      out.push({ invariant: SESSION_PAID, subject: s.id, message: `session ${s.id} is ${s.status} but ${holds}` });
  };
  const sessions = await ctx.db
    .selectFrom('payment_sessions as s')
    .innerJoin('merchants as m', 'm.id', 's.merchant_id')
    .select([
      's.id',
      's.status',
      's.network',
      's.token',
      's.deposit_address',
      's.target_amount_minor',
      's.expires_at',
      'm.underpayment_tolerance_bps',
    ])
    .where('s.deposit_address', 'is not', null)
    .where('s.network', 'is not', null)
    .where('s.token', 'is not', null)
    .execute();
  const tron = tronAsEvm(ctx.chains);
  for (const chain of [...ctx.chains.evm, ...(tron ? [tron] : [])]) {
    // Addresses as the JSON-RPC speaks them: EVM lowercase 0x; TRON's canonical 41… hex as 0x.
    const hex = (a: string) => (chain.network === 'tron' ? (tronHex(a) ?? a) : a.toLowerCase());
    const mine = sessions.filter((s) => s.network === chain.network);
    if (mine.length === 0) continue;
    const height = await confirmedHeight(chain);
    const time = blockTimes(chain);
    const decimalsOf = new Map<string, Promise<number>>(); // one decimals() read per token per check
    const all = await transfers(chain, { to: mine.map((s) => hex(s.deposit_address!)), toBlock: height });
    const byTo = new Map<string, typeof all>();
    for (const t of all) byTo.set(t.to, [...(byTo.get(t.to) ?? []), t]);
    for (const s of mine) {
      if (!chain.tokens[s.token!]) continue;
      const decimals = await (decimalsOf.get(s.token!) ?? decimalsOf.set(s.token!, tokenDecimals(chain, s.token!)).get(s.token!)!);
      const due = stablecoinMinorToBase(s.target_amount_minor, decimals);
      let received = 0n;
      for (const t of byTo.get(hex(s.deposit_address!)) ?? []) {
        if (t.token !== s.token || t.value === 0n) continue;
        if ((await time(t.blockNumber)) > s.expires_at.getTime()) continue;
        received += t.value;
      }
      judge(s, received, due, decimals, chain.network);
    }
  }
  if (ctx.chains.solana) {
    const reader = solanaReader(ctx.chains.solana);
    for (const s of sessions) {
      if (s.network !== 'solana' || !ctx.chains.solana.mints[s.token!]) continue;
      const decimals = await reader.decimals(s.token!);
      const due = stablecoinMinorToBase(s.target_amount_minor, decimals);
      let received = 0n;
      for (const c of await reader.creditsTo(s.deposit_address!))
        if (c.token === s.token && c.blockTimeMs <= s.expires_at.getTime()) received += c.amount;
      judge(s, received, due, decimals, 'solana');
    }
  }
  return out;
};
