import type { MerchantApi } from './api.js';
import { selectNetwork } from './api.js';
import type { SimEvm } from './env/evm.js';
import type { Violation } from './contract.js';
import type { Prng } from './prng.js';
import { isEvmNetwork } from './env/chain.js';

// Canceled sessions in a seed (issue #20; docs/simulation.md "Scenario"): a session created and given a network, then
// canceled through the API (decisions.md: allowed while unpaid and not expired, `payment.cancelled`), and in some
// cases paid in full anyway. That money must never pay the session: it is an unmatched deposit, listed in the
// session's `payments` as `unmatched`, and the merchant refunds it by `deposit_id` (docs/refunds.md "Money back to
// customers"). Drawn from the seed's scenario stream.

export interface CancelPlan {
  at: number;
  merchant: number;
  network: string;
  token: 'USDT' | 'USDC';
  amountCents: number;
  paidAnyway: boolean;
}

export function buildCancelPlans(prng: Prng, o: { activeMs: number; networks: string[]; merchants: number }): CancelPlan[] {
  const evm = o.networks.filter(isEvmNetwork);
  if (evm.length === 0) return [];
  const count = prng.int(1, 2);
  const plans: CancelPlan[] = [];
  for (let i = 0; i < count; i++)
    plans.push({
      at: prng.int(0, Math.max(0, o.activeMs - 8000)),
      merchant: prng.int(0, o.merchants - 1),
      network: prng.pick(evm),
      token: prng.pick(['USDT', 'USDC'] as const),
      amountCents: prng.int(100, 5000),
      // The first one of a seed is always paid after its cancel: every seed has a payment to a canceled session.
      paidAnyway: i === 0 || prng.chance(0.5),
    });
  return plans.sort((a, b) => a.at - b.at);
}

export interface CancelDeps {
  base: string;
  api: MerchantApi;
  chain: SimEvm;
  key: string;
  ev: (kind: string, detail: Record<string, unknown>) => void;
  violations: Violation[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runCanceledSession(d: CancelDeps, plan: CancelPlan): Promise<void> {
  const { api, ev } = d;
  const created = await api.call(
    'POST',
    '/api/v1/checkout/sessions/create',
    { amount: (plan.amountCents / 100).toFixed(2), currency: 'USD', order_id: `oc-${d.key}` },
    { idempotencyKey: `sc-${d.key}` },
  );
  if (created.status !== 200) {
    d.violations.push({ invariant: 'api', message: `session create answered ${created.status}: ${JSON.stringify(created.json)}` });
    return;
  }
  const id = String(created.json.id);
  const sel = await selectNetwork(d.base, id, plan.network, plan.token);
  if (sel.status !== 200) {
    d.violations.push({ invariant: 'api', message: `select answered ${sel.status}: ${JSON.stringify(sel.json)}`, subject: id });
    return;
  }
  const due = BigInt(sel.json.amount_due_base);
  const address = String(sel.json.deposit_address);
  const c = await api.call('POST', `/api/v1/checkout/sessions/${id}/cancel`, {}, { idempotencyKey: `cancel-${id}` });
  ev('session.canceled', { sessionId: id, network: plan.network, token: plan.token, status: c.status, state: c.json?.status, address });
  if (c.status !== 200 || c.json?.status !== 'canceled') {
    d.violations.push({ invariant: 'api', message: `session cancel answered ${c.status}: ${JSON.stringify(c.json)}`, subject: id });
    return;
  }
  if (!plan.paidAnyway) return;
  const hash = await d.chain.pay(plan.token, address, due);
  ev('payment.sent', { sessionId: id, amount: due.toString(), hash, toCanceled: true });

  // The deposit shows in the session's payments once final, unmatched; the merchant pays it back by deposit_id.
  const end = Date.now() + 240_000;
  let deposit: any;
  while (Date.now() < end && !deposit) {
    const s = await api.call('GET', `/api/v1/checkout/sessions/${id}`).catch(() => undefined);
    deposit = (s?.json?.payments ?? []).find((p: any) => String(p.transaction_hash).toLowerCase() === hash.toLowerCase());
    if (!deposit) await sleep(500);
  }
  if (!deposit) return void ev('refund.skipped', { sessionId: id, reason: 'deposit to the canceled session not listed within 240 s' });
  ev('deposit.unmatched', { sessionId: id, depositId: deposit.id, status: deposit.status, reason: deposit.unmatched_reason });
  const refundId = `rc-${d.key}`;
  const r = await api.call(
    'POST',
    '/api/v1/refunds/create',
    { deposit_id: deposit.id, refund_id: refundId, amount: plan.amountCents, currency: plan.token },
    { idempotencyKey: refundId },
  );
  ev('refund.created', { sessionId: id, depositId: deposit.id, status: r.status, kind: 'unmatched-deposit' });
  if (r.status !== 201)
    d.violations.push({
      invariant: 'api',
      message: `refund of unmatched deposit answered ${r.status}: ${JSON.stringify(r.json)}`,
      subject: id,
    });
}
