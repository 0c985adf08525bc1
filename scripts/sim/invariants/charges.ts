import type { Invariant, Violation } from '../contract.js';
import { deliveredEvents } from './delivered.js';
import { receipt, receiptTransfers } from './evm-chain.js';
import { solanaCreditingSignatures, solanaReader } from './solana-chain.js';
import { evmLikeOf } from './tron-chain.js';

export const CHARGES = 'renewal-period-charged-once';

// Subscriptions (docs/subscriptions.md "Scheduling guarantees"): each (subscription, period) is charged at most once,
// counted on the canonical chain across every charge of its invoice (a retry creates a new charge after the previous
// failed; outbound-once checks each charge's own attempts): at most one successful transaction carrying a Transfer of
// the token from the customer to the settlement address, and exactly one when the invoice is paid, with
// `amount_paid` = `amount_due`. A paid invoice has one succeeded charge; a subscription that is `active` has its latest
// invoice paid; one invoice per (subscription, period). The webhook side: every paid invoice's `invoice.paid`, every
// failed charge's invoice `invoice.payment_failed` and every canceled subscription's `subscription.canceled` reached the
// receiver with a 2xx (their order per subscription is the webhooks invariant's). EVM networks and TRON (read through
// java-tron's JSON-RPC, addresses in 0x form); Solana, where a charge's signature counts when it landed at the
// commitment the service requires, did not fail, and credited the settlement wallet's account of the token
// (solana-chain.ts `solanaCreditingSignatures`; base58 signatures compared as they are).
export const renewalPeriodChargedOnce: Invariant = async (ctx) => {
  const out: Violation[] = [];
  const v = (subject: string, message: string) => out.push({ invariant: CHARGES, subject, message });
  const invoices = await ctx.db
    .selectFrom('invoices')
    .select(['id', 'subscription_id', 'period_number', 'status', 'amount_due_minor', 'amount_paid_minor'])
    .execute();
  if (invoices.length === 0) return out;
  const charges = await ctx.db
    .selectFrom('subscription_charges')
    .select(['id', 'invoice_id', 'state', 'network', 'token', 'owner_address', 'destination_address', 'tx_hash'])
    .execute();
  const attempts = await ctx.db.selectFrom('subscription_charge_attempts').select(['charge_id', 'tx_hash']).execute();
  const subs = await ctx.db.selectFrom('subscriptions').select(['id', 'status', 'latest_invoice_id']).execute();
  const { acked: delivered } = await deliveredEvents(ctx);
  const solana = ctx.chains.solana ? solanaReader(ctx.chains.solana) : undefined;

  const periods = new Map<string, string>();
  for (const inv of invoices) {
    const key = `${inv.subscription_id}#${inv.period_number}`;
    const other = periods.get(key);
    if (other)
      v(inv.subscription_id, `subscription ${inv.subscription_id} period ${inv.period_number} has two invoices: ${other}, ${inv.id}`);
    periods.set(key, inv.id);

    const mine = charges.filter((c) => c.invoice_id === inv.id);
    const moved = new Set<string>();
    for (const c of mine) {
      if (c.network === 'solana') {
        if (!solana) continue;
        const signatures = attempts.filter((a) => String(a.charge_id) === String(c.id)).map((a) => a.tx_hash);
        if (c.tx_hash) signatures.push(c.tx_hash);
        for (const s of await solanaCreditingSignatures(solana, signatures, c.token, c.destination_address)) moved.add(s);
        continue;
      }
      const on = evmLikeOf(ctx.chains, c.network);
      if (!on) continue;
      const { chain, hex } = on;
      const hashes = new Set(attempts.filter((a) => String(a.charge_id) === String(c.id)).map((a) => a.tx_hash.toLowerCase()));
      if (c.tx_hash) hashes.add(c.tx_hash.toLowerCase());
      for (const h of hashes) {
        const r = await receipt(chain, h);
        if (!r || r.status !== '0x1') continue;
        const from = hex(c.owner_address);
        const to = hex(c.destination_address);
        if (receiptTransfers(chain, r).some((t) => t.token === c.token && t.from === from && t.to === to && t.value > 0n)) moved.add(h);
      }
    }
    const succeeded = mine.filter((c) => c.state === 'succeeded');
    const where = `invoice ${inv.id} (subscription ${inv.subscription_id}, period ${inv.period_number}, ${inv.status})`;
    if (moved.size > 1) v(inv.id, `${where} was charged ${moved.size} times on chain: ${[...moved].join(', ')}`);
    if (succeeded.length > 1) v(inv.id, `${where} has ${succeeded.length} succeeded charges`);
    if (inv.status === 'paid') {
      if (moved.size === 0) v(inv.id, `${where} is paid but no charge of it moved money on the canonical chain`);
      if (succeeded.length !== 1) v(inv.id, `${where} is paid with ${succeeded.length} succeeded charges`);
      if (inv.amount_paid_minor !== inv.amount_due_minor)
        v(inv.id, `${where} is paid with amount_paid ${inv.amount_paid_minor} of amount_due ${inv.amount_due_minor}`);
      if (!delivered('invoice.paid', inv.id)) v(inv.id, `${where}: invoice.paid never reached the receiver with a 2xx`);
    } else if (succeeded.length > 0 || moved.size > 0) {
      v(inv.id, `${where} is not paid, yet ${succeeded.length} charges succeeded and ${moved.size} transactions moved money`);
    }
    if (mine.some((c) => c.state === 'failed') && !delivered('invoice.payment_failed', inv.id))
      v(inv.id, `${where} had a failed charge but invoice.payment_failed never reached the receiver with a 2xx`);
  }
  const paid = new Set(invoices.filter((i) => i.status === 'paid').map((i) => i.id));
  for (const s of subs) {
    if (s.status === 'active' && (!s.latest_invoice_id || !paid.has(s.latest_invoice_id)))
      v(s.id, `subscription ${s.id} is active but its latest invoice ${s.latest_invoice_id ?? 'none'} is not paid`);
    if (s.status === 'canceled' && !delivered('subscription.canceled', s.id))
      v(s.id, `subscription ${s.id} is canceled but subscription.canceled never reached the receiver with a 2xx`);
  }
  return out;
};
