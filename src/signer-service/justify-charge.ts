import type { ChainRegistry } from '../../chains/registry.js';
import { HOT_WALLET_SLOT, type KeyDeriver, type KeyPath } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { merchantAccountIndex } from '../ledger/merchants/merchants.js';
import { chargeFacts } from '../ledger/subscriptions/charge-facts.js';
import { evmTokenCallData } from './evm-token-call.js';
import type { AuditContext, JustifiedSend, SignedPreimage } from './justified.js';
import { refuse } from './refusal.js';
import { decodeTransferFromCall } from './transfer-call.js';

// Justification of a subscription charge (docs/signer.md, "What is justified"): the signer reads the charge, its
// invoice and the customer's payment method, and signs only the call the charge engine (src/subscriptions/
// charge-engine.ts) builds: from the merchant's charger wallet, `transferFrom(owner, settlement, amount)` on the
// registry's token, where the owner's approval of the charger is an active payment method, the invoice is open and
// unpaid, the settlement address is the merchant's own (its refunds hot wallet, as the engine derives it) and the
// amount the charge's. EVM; TRON and Solana charges are refused `purpose_not_supported` for now.

/** Charge states in which the engine signs: before the first attempt, and while one is in flight (a replacement). */
const SIGNABLE = new Set(['pending', 'signed', 'broadcast']);

export async function justifyCharge(
  o: { db: Db; adapters: ChainRegistry; keys: KeyDeriver },
  chargeId: string,
  key: KeyPath,
  preimage: SignedPreimage,
  seen: AuditContext,
): Promise<JustifiedSend> {
  const facts = await chargeFacts(o.db, chargeId);
  if (!facts) refuse('unknown_object', `no subscription charge ${chargeId}`);
  const { charge } = facts;
  seen.merchantId = charge.merchant_id;
  seen.network = charge.network;
  seen.mode = charge.mode;
  if (!SIGNABLE.has(charge.state)) refuse('not_payable', `charge ${chargeId} is ${charge.state}`);
  if (!facts.invoice || facts.invoice.status !== 'open' || facts.invoice.paymentStatus === 'paid')
    refuse('not_payable', `charge ${chargeId}'s invoice is not open and unpaid`);
  if (!facts.paymentMethodActive) refuse('not_payable', `no active payment method authorises charge ${chargeId}`);
  const adapter = o.adapters.get(charge.network, charge.mode);
  if (!adapter || adapter.family !== 'evm')
    refuse('purpose_not_supported', `subscription charges on ${charge.network} (${charge.mode}) are not justified by this signer yet`);
  const token = o.adapters.token(charge.network, charge.mode, charge.token);
  if (!token) refuse('wrong_contract', `${charge.token} is not configured on ${charge.network} (${charge.mode})`);
  const account = await merchantAccountIndex(o.db, charge.merchant_id, charge.mode);
  const charger = await adapter.deriveHotWallet(o.keys, account, HOT_WALLET_SLOT.charges);
  const settlement = await adapter.deriveHotWallet(o.keys, account, HOT_WALLET_SLOT.refunds);
  if (
    key.curve !== charger.key.curve ||
    key.path !== charger.key.path ||
    adapter.normalizeAddress(charge.charger_address) !== adapter.normalizeAddress(charger.address)
  )
    refuse('wrong_key', `the key is not merchant ${charge.merchant_id}'s charger`);
  const call = decodeTransferFromCall(evmTokenCallData(o.adapters, adapter, charge, token, preimage));
  if (!call) refuse('wrong_method', 'the transaction is not one transferFrom(address,address,uint256) call');
  const to = adapter.normalizeAddress(`0x${call.to}`);
  const summary = { to: to ?? '', token: charge.token, contract: token.address, amount_base: call.amount.toString() };
  seen.summary = summary;
  seen.amount = call.amount;
  if (adapter.normalizeAddress(`0x${call.owner}`) !== adapter.normalizeAddress(charge.owner_address))
    refuse('wrong_key', "the call spends another owner's tokens than the payment method's");
  const settlementAddress = adapter.normalizeAddress(settlement.address);
  if (to === null || to !== settlementAddress || to !== adapter.normalizeAddress(charge.destination_address))
    refuse('wrong_recipient', "the call does not pay the merchant's settlement address");
  if (call.amount !== charge.amount_base)
    refuse('wrong_amount', `the call moves ${call.amount}; charge ${chargeId} is ${charge.amount_base}`);
  return {
    merchantId: charge.merchant_id,
    network: charge.network,
    mode: charge.mode,
    token: charge.token,
    decimals: token.decimals,
    amount: call.amount,
    summary,
  };
}
