import { sql, type Transaction } from 'kysely';
import type { Database, Mode } from '../../db/schema.js';
import { newId } from '../../domain/ids.js';
import type { NetworkId, TokenSymbol } from '../../../chains/vocabulary.js';

// The payment side of a subscription charge that landed: the payment record (a payment session, paid at once, which
// refunds and exports read like any other), the credited deposit of the landed transfer and its settlement row.
// Written by the charge's settlement (subscriptions-charges.ts) in its transaction; deposits and sessions are the
// payments room's rows, so they are written here, with ids minted as every other deposit's and session's.

export interface ChargePayment {
  merchantId: string;
  mode: Mode;
  network: NetworkId;
  token: TokenSymbol;
  invoice: { id: string; amountDueMinor: bigint; currency: string };
  /** What the payment record describes: the subscription's product line. */
  subscription: { id: string; description: string | null; currency: string; unit_amount_minor: bigint; product: string; quantity: number };
  /** The customer's wallet the tokens came from, and the settlement address they reached. */
  payer: string;
  destination: string;
  /** What the charge asked for (token base units). */
  dueBase: bigint;
  transfer: {
    txHash: string;
    logIndex: number;
    amount: bigint;
    tokenContract: string;
    block: { height: bigint; hash: string; time: Date };
  };
  at: Date;
}

export async function insertChargePayment(trx: Transaction<Database>, p: ChargePayment): Promise<{ paymentId: string; depositId: string }> {
  const paymentId = newId('pay');
  const depositId = newId('dep');
  const sub = p.subscription;
  const t = p.transfer;
  await trx
    .insertInto('payment_sessions')
    .values({
      id: paymentId,
      merchant_id: p.merchantId,
      mode: p.mode,
      order_id: p.invoice.id,
      amount_minor: p.invoice.amountDueMinor,
      currency: p.invoice.currency,
      description: sub.description,
      line_items: JSON.stringify([
        {
          price_data: {
            currency: sub.currency,
            unit_amount_minor: sub.unit_amount_minor.toString(),
            product_data: { name: sub.product },
          },
          quantity: sub.quantity,
        },
      ]),
      metadata: JSON.stringify({ subscription_id: sub.id, invoice_id: p.invoice.id }),
      target_currency: p.token,
      target_amount_minor: p.invoice.amountDueMinor,
      exchange_rate: '1',
      rate_locked_at: p.at,
      network: p.network,
      token: p.token,
      hd_account: sql<number>`(select account_index from merchant_hd_accounts where merchant_id = ${p.merchantId} and mode = ${p.mode})`,
      deposit_address: p.destination,
      status: 'paid',
      received_base: t.amount,
      expires_at: p.at,
      paid_at: p.at,
    })
    .execute();
  await trx
    .insertInto('deposits')
    .values({
      id: depositId,
      network: p.network,
      mode: p.mode,
      tx_hash: t.txHash,
      log_index: t.logIndex,
      block_number: t.block.height,
      block_hash: t.block.hash,
      block_time: t.block.time,
      token: p.token,
      token_contract: t.tokenContract,
      from_address: p.payer,
      to_address: p.destination,
      amount_base: t.amount,
      session_id: paymentId,
      status: 'confirmed',
      disposition: 'credited',
      confirmed_at: p.at,
    })
    .execute();
  await trx
    .insertInto('session_settlements')
    .values({
      session_id: paymentId,
      network: p.network,
      token: p.token,
      due_base: p.dueBase,
      received_base: t.amount,
      overpaid_base: 0n,
      paying_deposit_id: depositId,
      paid_at: p.at,
    })
    .execute();
  return { paymentId, depositId };
}
