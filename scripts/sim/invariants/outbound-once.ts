import type { NetworkId } from '../../../chains/vocabulary.js';
import type { Invariant, Violation } from '../contract.js';
import { type EvmLike, evmChain, receipt, receiptTransfers, transfers } from './evm-chain.js';
import { solanaCreditingSignatures, solanaReader } from './solana-chain.js';
import { evmLikeOf, tronAsEvm, tronHex, tronSucceeded } from './tron-chain.js';

export const OUTBOUND_ONCE = 'outbound-moved-money-at-most-once';

// Each refund, subscription charge and sweep step moved money on chain at most once, and exactly once when it reports
// completed (docs/outbound.md: every transaction is persisted as an attempt before broadcast, so the attempts are the
// complete list of what the service may have put on chain for it):
// - refund: attempts (payout_attempts, plus refunds.transaction_hash) whose canonical receipt succeeded and carries a
//   Transfer of the refund's token from the attempt's sender to the destination. Two = paid twice; `completed` needs
//   exactly one, with that hash in `transaction_hash`; `failed` or `canceled` needs none;
// - charge: the same over subscription_charge_attempts, a Transfer of the token from the customer's address to the
//   destination; `succeeded` needs exactly one;
// - sweep step: attempts whose canonical receipt succeeded; `succeeded` needs exactly one, any other status none;
// - and no Transfer out of a payout hot wallet that none of those attempts explains (money moved with no record).
// EVM networks for all of it; on Solana, refunds (a landed, successful attempt crediting the destination's account of
// the token counts as moving money); on TRON, refunds, read like EVM through java-tron's JSON-RPC, and the hot-wallet
// scan; on Solana also the hot-wallet scan (a decrease of a registry token in an account the hot wallet owns, in a
// transaction no attempt names); charges and sweep steps on every network (the scenario runs both everywhere).
export const outboundMovedMoneyAtMostOnce = async (
  ctx: Parameters<Invariant>[0],
  o: { scanHotWallets?: boolean } = {},
): ReturnType<Invariant> => {
  const out: Violation[] = [];
  const v = (subject: string, message: string) => out.push({ invariant: OUTBOUND_ONCE, subject, message });
  const evmNetworks = ctx.chains.evm.map((c) => c.network);
  const solana = ctx.chains.solana ? solanaReader(ctx.chains.solana) : undefined;
  const tron = tronAsEvm(ctx.chains);
  const networks: NetworkId[] = [...evmNetworks, ...(solana ? (['solana'] as const) : []), ...(tron ? (['tron'] as const) : [])];
  if (networks.length === 0) return out;
  // EVM hashes compare lowercase; Solana signatures are base58 and compare as they are.
  const norm = (network: string, h: string) => (network === 'solana' ? h : h.toLowerCase());

  const refunds = await ctx.db
    .selectFrom('refunds')
    .select(['id', 'status', 'network', 'token', 'destination_address', 'transaction_hash'])
    .where('network', 'in', networks)
    .execute();
  const attempts = await ctx.db
    .selectFrom('payout_attempts')
    .select(['refund_id', 'tx_hash', 'sender', 'network'])
    .where('network', 'in', networks)
    .execute();
  const byRefund = new Map<string, typeof attempts>();
  for (const a of attempts) byRefund.set(a.refund_id, [...(byRefund.get(a.refund_id) ?? []), a]);
  for (const r of refunds) {
    const mine = byRefund.get(r.id) ?? [];
    const hashes = new Set(mine.map((a) => norm(r.network, a.tx_hash)));
    if (r.transaction_hash) hashes.add(norm(r.network, r.transaction_hash));
    let moved: string[];
    if (r.network === 'solana') {
      moved = [];
      for (const h of hashes) {
        const t = await solana!.credits(h);
        if (t.landed && !t.failed && t.credits.some((c) => c.token === r.token && c.owner === r.destination_address)) moved.push(h);
      }
    } else {
      const chain = r.network === 'tron' ? tron! : evmChain(ctx.chains.evm, r.network)!;
      const hex = (x: string) => (r.network === 'tron' ? (tronHex(x) ?? x) : x.toLowerCase());
      const senders = new Set(mine.map((x) => hex(x.sender)));
      moved = await movingHashes(
        chain,
        [...hashes],
        (t) => t.token === r.token && senders.has(t.from) && t.to === hex(r.destination_address),
      );
    }
    const txHash = r.transaction_hash === null ? null : norm(r.network, r.transaction_hash);
    if (moved.length > 1) v(r.id, `refund ${r.id} (${r.status}) moved money ${moved.length} times: ${moved.join(', ')}`);
    else if (r.status === 'completed' && moved.length === 0)
      v(r.id, `refund ${r.id} is completed but none of its transactions moved money on the canonical chain`);
    else if (r.status === 'completed' && txHash !== moved[0])
      v(r.id, `refund ${r.id} is completed with transaction ${r.transaction_hash}, but the canonical transfer is ${moved[0]}`);
    else if ((r.status === 'failed' || r.status === 'canceled') && moved.length > 0)
      v(r.id, `refund ${r.id} is ${r.status} but its transaction ${moved[0]} moved money on the canonical chain`);
  }

  // Charges on every network run (an empty list when the seed runs none). Solana: a landed, successful signature
  // crediting the destination's account of the token counts as moving money (solana-chain.ts), as for refunds.
  const charges = await ctx.db
    .selectFrom('subscription_charges')
    .select(['id', 'state', 'network', 'token', 'owner_address', 'destination_address', 'tx_hash'])
    .where('network', 'in', networks)
    .execute();
  const chargeAttempts = await ctx.db.selectFrom('subscription_charge_attempts').select(['charge_id', 'tx_hash']).execute();
  const byCharge = new Map<string, string[]>();
  for (const a of chargeAttempts) byCharge.set(String(a.charge_id), [...(byCharge.get(String(a.charge_id)) ?? []), a.tx_hash]);
  for (const c of charges) {
    const hashes = new Set((byCharge.get(String(c.id)) ?? []).map((h) => norm(c.network, h)));
    if (c.tx_hash) hashes.add(norm(c.network, c.tx_hash));
    let moved: string[];
    if (c.network === 'solana') moved = await solanaCreditingSignatures(solana!, hashes, c.token, c.destination_address);
    else {
      const { chain, hex } = evmLikeOf(ctx.chains, c.network)!;
      moved = await movingHashes(
        chain,
        [...hashes],
        (t) => t.token === c.token && t.from === hex(c.owner_address) && t.to === hex(c.destination_address),
      );
    }
    const subject = `charge:${c.id}`;
    if (moved.length > 1) v(subject, `charge ${c.id} (${c.state}) moved money ${moved.length} times: ${moved.join(', ')}`);
    else if (c.state === 'succeeded' && moved.length === 0)
      v(subject, `charge ${c.id} succeeded but none of its transactions moved money on the canonical chain`);
    else if (c.state === 'failed' && moved.length > 0)
      v(subject, `charge ${c.id} failed but its transaction ${moved[0]} moved money on the canonical chain`);
  }

  // Sweep steps on every network run (an empty list when the seed sweeps nowhere): a step's attempt "landed" when its
  // transaction is canonical and succeeded (EVM and TRON's TRC-20 calls alike, but TRON's TRX transfers and
  // (un)delegations have no JSON-RPC receipt: TRON reads java-tron's solidified wallet API for every step; Solana a
  // landed transaction without error).
  const steps = await ctx.db
    .selectFrom('sweep_steps as st')
    .innerJoin('sweeps as sw', 'sw.id', 'st.sweep_id')
    .select(['st.id', 'st.sweep_id', 'st.status', 'sw.network'])
    .where('sw.network', 'in', networks)
    .execute();
  const stepAttempts = await ctx.db.selectFrom('sweep_step_attempts').select(['step_id', 'tx_hash']).execute();
  const byStep = new Map<string, string[]>();
  for (const a of stepAttempts) byStep.set(a.step_id, [...(byStep.get(a.step_id) ?? []), a.tx_hash]);
  const tronWalletApi = ctx.chains.tron?.walletApiUrl;
  for (const s of steps) {
    const hashes = [...new Set((byStep.get(s.id) ?? []).map((h) => norm(s.network, h)))];
    let moved: string[];
    if (s.network === 'solana')
      moved = await landedOk(hashes, async (h) => {
        const t = await solana!.credits(h);
        return t.landed && !t.failed;
      });
    else if (s.network === 'tron') moved = await landedOk(hashes, (h) => tronSucceeded(tronWalletApi!, h));
    else moved = await movingHashes(evmChain(ctx.chains.evm, s.network)!, hashes, () => true, true);
    const subject = `sweep:${s.sweep_id}/${s.id}`;
    if (moved.length > 1)
      v(subject, `sweep step ${s.id} of ${s.sweep_id} (${s.status}) landed ${moved.length} transactions: ${moved.join(', ')}`);
    else if (s.status === 'succeeded' && moved.length === 0)
      v(subject, `sweep step ${s.id} of ${s.sweep_id} succeeded but none of its transactions is on the canonical chain`);
    else if (s.status !== 'succeeded' && s.status !== 'processing' && moved.length > 0)
      v(subject, `sweep step ${s.id} of ${s.sweep_id} is ${s.status} but its transaction ${moved[0]} succeeded on the canonical chain`);
  }

  // The continuous rounds keep only the "moved money N times" findings, and skip the scans below (`scanHotWallets`
  // false): a payout can be on chain a moment before the service records it, so those are judged at the end.
  if (o.scanHotWallets === false) return out;

  // Transfers out of the payout hot wallets that no attempt explains (EVM and TRON; TRON txIDs are stored bare, the
  // JSON-RPC names them 0x-prefixed: both spellings are known).
  const known = new Set(
    [...attempts.map((a) => a.tx_hash), ...chargeAttempts.map((a) => a.tx_hash), ...stepAttempts.map((a) => a.tx_hash)].flatMap((h) =>
      hashForms(h),
    ),
  );
  for (const r of refunds) if (r.transaction_hash) for (const h of hashForms(r.transaction_hash)) known.add(h);
  for (const chain of [...ctx.chains.evm, ...(tron ? [tron] : [])]) {
    const hex = (x: string) => (chain.network === 'tron' ? (tronHex(x) ?? x) : x.toLowerCase());
    const senders = [...new Set(attempts.filter((a) => a.network === chain.network).map((a) => hex(a.sender)))];
    for (const t of await transfers(chain, { from: senders }))
      if (!known.has(t.txHash))
        v(
          t.txHash,
          `${t.value} ${t.token} left hot wallet ${t.from} for ${t.to} in ${t.txHash} (${chain.network}), a transaction no refund, charge or sweep recorded`,
        );
  }
  // Solana: the token debits of each refund hot wallet, against the exact signatures recorded (base58 is case-sensitive).
  if (solana) {
    const recorded = new Set([
      ...[...attempts, ...chargeAttempts, ...stepAttempts].map((a) => a.tx_hash),
      ...refunds.flatMap((r) => (r.network === 'solana' && r.transaction_hash ? [r.transaction_hash] : [])),
    ]);
    for (const sender of new Set(attempts.filter((a) => a.network === 'solana').map((a) => a.sender)))
      for (const d of await solana.debitsFrom(sender))
        if (!recorded.has(d.signature))
          v(
            d.signature,
            `${d.amount} ${d.token} left hot wallet ${sender} in ${d.signature} (solana), a transaction no refund, charge or sweep recorded`,
          );
  }
  return out;
};

const hashForms = (h: string): string[] => {
  const bare = h.toLowerCase().replace(/^0x/, '');
  return [bare, `0x${bare}`];
};

/** The hashes among `hashes` for which `ok` holds, in order. */
async function landedOk(hashes: string[], ok: (h: string) => Promise<boolean>): Promise<string[]> {
  const out: string[] = [];
  for (const h of hashes) if (await ok(h)) out.push(h);
  return out;
}

/** The hashes among `hashes` whose canonical receipt succeeded and (unless `any`) carries a matching Transfer. */
async function movingHashes(
  chain: EvmLike,
  hashes: string[],
  matches: (t: ReturnType<typeof receiptTransfers>[number]) => boolean,
  any = false,
): Promise<string[]> {
  const out: string[] = [];
  for (const h of hashes) {
    const r = await receipt(chain, h);
    if (!r || r.status !== '0x1') continue;
    if (any || receiptTransfers(chain, r).some((t) => matches(t) && t.value > 0n)) out.push(h.toLowerCase());
  }
  return out;
}
