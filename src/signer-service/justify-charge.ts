import type { ChainRegistry } from '../../chains/chain-registry.js';
import { HOT_WALLET_SLOT, type ChainAdapter, type KeyDeriver, type KeyPath, type TokenContract } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { merchantAccountIndex } from '../ledger/merchants/merchants.js';
import { chargeFacts } from '../ledger/subscriptions/charge-facts.js';
import type { ChargeRow } from '../ledger/subscriptions/charges.js';
import { evmTokenCallData } from './evm-token-call.js';
import type { AuditContext, JustifiedSend, SignedPreimage } from './justified.js';
import { refuse } from './refusal.js';
import { readSolanaTokenTransfer } from './solana-token-transfer.js';
import { tronTokenCallData } from './tron-token-call.js';
import { decodeTransferFromCall } from './transfer-call.js';

// Justification of a subscription charge (docs/signer.md, "What is justified"): the signer reads the charge, its
// invoice and the customer's payment method, and signs only the call the charge engine (src/subscriptions/
// charge-engine.ts) builds: from the merchant's charger wallet, `transferFrom(owner, settlement, amount)` on the
// registry's token, where the owner's approval of the charger is an active payment method, the invoice is open and
// unpaid, the settlement address is the merchant's own (its refunds hot wallet, as the engine derives it) and the
// amount the charge's. EVM and TRON (`transferFrom` from the charger), Solana (a TransferChecked the charger signs as
// the customer's SPL delegate).

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
  if (!adapter)
    refuse('purpose_not_supported', `subscription charges on ${charge.network} (${charge.mode}) are not configured on this signer`);
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
  const call =
    adapter.family === 'evm'
      ? readEvmCharge(o.adapters, adapter, charge, token, preimage)
      : adapter.family === 'tron'
        ? readTronCharge(adapter, charger.address, token, preimage)
        : readSolanaCharge(charger.address, charge, settlement.address, token, preimage);
  const to = call.to;
  const summary = { to: to ?? '', token: charge.token, contract: token.address, amount_base: call.amount.toString() };
  seen.summary = summary;
  seen.amount = call.amount;
  if (call.owner === null || call.owner !== adapter.normalizeAddress(charge.owner_address))
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

/** A charge's token movement as signed: whose tokens (canonical), to whom (canonical) and how much. */
interface ChargeCall {
  owner: string | null;
  to: string | null;
  amount: bigint;
}

/** EVM: an unsigned transaction on the configured chain to the token, no value, `transferFrom(owner, to, amount)`. */
function readEvmCharge(
  adapters: ChainRegistry,
  adapter: ChainAdapter,
  charge: ChargeRow,
  token: TokenContract,
  preimage: SignedPreimage,
): ChargeCall {
  const call = decodeTransferFromCall(evmTokenCallData(adapters, adapter, charge, token, preimage));
  if (!call) refuse('wrong_method', 'the transaction is not one transferFrom(address,address,uint256) call');
  return { owner: adapter.normalizeAddress(`0x${call.owner}`), to: adapter.normalizeAddress(`0x${call.to}`), amount: call.amount };
}

/** TRON: one TriggerSmartContract from the charger to the token, no TRX, `transferFrom(owner, to, amount)`. */
function readTronCharge(adapter: ChainAdapter, charger: string, token: TokenContract, preimage: SignedPreimage): ChargeCall {
  const call = decodeTransferFromCall(tronTokenCallData(adapter, charger, token, preimage, 'subscription charge'));
  if (!call) refuse('wrong_method', 'the transaction is not one transferFrom(address,address,uint256) call');
  return { owner: adapter.normalizeAddress(`41${call.owner}`), to: adapter.normalizeAddress(`41${call.to}`), amount: call.amount };
}

/**
 * Solana: the charger, the customer's SPL delegate, pays the fee, is the only signer and authorises one
 * TransferChecked from the owner's associated token account to the settlement address's (created idempotently at
 * most once, paid by the charger). A source that is not the payment method owner's account is another owner's.
 */
function readSolanaCharge(
  charger: string,
  charge: ChargeRow,
  settlement: string,
  token: TokenContract,
  preimage: SignedPreimage,
): ChargeCall {
  const t = readSolanaTokenTransfer(preimage, {
    payer: charger,
    sourceOwner: charge.owner_address,
    destination: settlement,
    token,
    what: 'subscription charge',
  });
  return { owner: charge.owner_address, to: t.to, amount: t.amount };
}
