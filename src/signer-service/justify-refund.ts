import type { ChainRegistry } from '../../chains/registry.js';
import { SPL_TOKEN_PROGRAM, associatedTokenAccount, decodeTokenMessage, type TokenMessage } from '../../chains/solana/token-message.js';
import { decodeTriggerRawData, TRIGGER_SMART_CONTRACT_TYPE } from '../../chains/tron/protobuf.js';
import {
  HOT_WALLET_SLOT,
  type ChainAdapter,
  type KeyDeriver,
  type KeyPath,
  type SigningPreimage,
  type TokenContract,
} from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { merchantAccountIndex } from '../ledger/merchants/merchants.js';
import { refundById } from '../ledger/refunds/refunds.js';
import type { RefundRow } from '../ledger/refunds/refunds.js';
import { evmTokenCallData } from './evm-token-call.js';
import type { AuditContext, JustifiedSend, SignedPreimage } from './justified.js';
import { refuse } from './refusal.js';
import { decodeTransferCall } from './transfer-call.js';

// Justification of a refund payout (docs/signer.md, "What is justified"): the signer reads the refund in the ledger
// and signs only the transfer the payout engine (src/refunds/payout-engine.ts) would build for it: from the
// merchant's refunds hot wallet, to the registry's token contract, no native value, `transfer(destination, amount)`
// with the refund's amount or its documented gross-up for a token's transfer fee. EVM, TRON and Solana.

/** Refund states the payout engine signs in (refund-state.ts: pending → processing, then completed | failed). */
const PAYABLE = new Set(['pending', 'processing']);

export async function justifyRefundPayout(
  o: { db: Db; adapters: ChainRegistry; keys: KeyDeriver },
  refundId: string,
  key: KeyPath,
  preimage: SignedPreimage,
  seen: AuditContext,
): Promise<JustifiedSend> {
  const refund = await refundById(o.db, refundId);
  if (!refund) refuse('unknown_object', `no refund ${refundId}`);
  seen.merchantId = refund.merchant_id;
  seen.network = refund.network;
  seen.mode = refund.mode;
  if (!PAYABLE.has(refund.status)) refuse('not_payable', `refund ${refundId} is ${refund.status}`);
  const adapter = o.adapters.get(refund.network, refund.mode);
  if (!adapter) refuse('purpose_not_supported', `refund payouts on ${refund.network} (${refund.mode}) are not configured on this signer`);
  const token = o.adapters.token(refund.network, refund.mode, refund.token);
  if (!token) refuse('wrong_contract', `${refund.token} is not configured on ${refund.network} (${refund.mode})`);
  const account = await merchantAccountIndex(o.db, refund.merchant_id, refund.mode);
  const hot = await adapter.deriveHotWallet(o.keys, account, HOT_WALLET_SLOT.refunds);
  if (key.curve !== hot.key.curve || key.path !== hot.key.path)
    refuse('wrong_key', `the key is not the refunds hot wallet of merchant ${refund.merchant_id}`);
  const transfer =
    adapter.family === 'evm'
      ? await readEvmTransfer(o.adapters, adapter, refund, token, preimage)
      : adapter.family === 'tron'
        ? readTronTransfer(adapter, hot.address, token, preimage)
        : readSolanaTransfer(hot.address, refund.destination_address, token, preimage);
  const destination = adapter.normalizeAddress(refund.destination_address);
  const summary = { to: transfer.to ?? '', token: refund.token, contract: token.address, amount_base: transfer.amount.toString() };
  seen.summary = summary;
  seen.amount = transfer.amount;
  if (transfer.to === null || destination === null || transfer.to !== destination)
    refuse('wrong_recipient', `the transfer does not pay refund ${refundId}'s destination`);
  if (transfer.amount !== refund.amount_base && transfer.amount !== (await grossed(adapter, refund)))
    refuse('wrong_amount', `the transfer moves ${transfer.amount} base units; refund ${refundId} pays ${refund.amount_base}`);
  return {
    merchantId: refund.merchant_id,
    network: refund.network,
    mode: refund.mode,
    token: refund.token,
    decimals: token.decimals,
    amount: transfer.amount,
    summary,
  };
}

/** The gross-up the payout engine sends for a token announcing a transfer fee; null when the adapter has none. */
async function grossed(adapter: ChainAdapter, refund: RefundRow): Promise<bigint | null> {
  if (!adapter.grossForNet) return null;
  try {
    return await adapter.grossForNet(refund.token, refund.amount_base);
  } catch {
    return null; // the token refuses the transfer now: no gross-up to justify
  }
}

/** chainId, contract, value, and the transfer's recipient (canonical) and amount of an unsigned EVM transaction. */
async function readEvmTransfer(
  adapters: ChainRegistry,
  adapter: ChainAdapter,
  refund: RefundRow,
  token: TokenContract,
  preimage: SignedPreimage,
): Promise<{ to: string | null; amount: bigint }> {
  const data = evmTokenCallData(adapters, adapter, refund, token, preimage);
  const call = decodeTransferCall(data);
  if (!call) refuse('wrong_method', 'the transaction is not one transfer(address,uint256) call');
  return { to: adapter.normalizeAddress(`0x${call.to}`), amount: call.amount };
}

/** One TriggerSmartContract from the hot wallet to the token, no TRX, transfer(recipient, amount). */
function readTronTransfer(
  adapter: ChainAdapter,
  hotAddress: string,
  token: TokenContract,
  preimage: SignedPreimage,
): { to: string | null; amount: bigint } {
  if (preimage.kind !== 'tron-transaction')
    refuse('wrong_method', `a TRON refund payout signs a TRON transaction, not an ${preimage.kind}`);
  let raw: ReturnType<typeof decodeTriggerRawData>;
  try {
    raw = decodeTriggerRawData(preimage.rawDataHex);
  } catch {
    refuse('undecodable_transaction', 'raw_data is not a TRON transaction with a contract');
  }
  if (raw.contractCount !== 1 || raw.contractType !== TRIGGER_SMART_CONTRACT_TYPE)
    refuse('wrong_method', 'a refund payout is exactly one TriggerSmartContract');
  if (raw.owner !== adapter.normalizeAddress(hotAddress)) refuse('wrong_key', 'the transaction is not sent by the refunds hot wallet');
  if (raw.contract !== token.address) refuse('wrong_contract', `the transaction calls ${raw.contract}, not the token contract`);
  if (raw.callValue !== 0n) refuse('native_value', `the transaction carries ${raw.callValue} sun`);
  const call = decodeTransferCall(raw.data);
  if (!call) refuse('wrong_method', 'the transaction is not one transfer(address,uint256) call');
  return { to: adapter.normalizeAddress(`41${call.to}`), amount: call.amount };
}

/**
 * A Solana refund payout as SolanaTokenSender builds it: the hot wallet pays the fee and is the only signer; compute
 * budget instructions; at most one idempotent creation of the destination's associated token account (paid by the
 * hot wallet); exactly one SPL TransferChecked of the registry's mint and decimals from the hot wallet's associated
 * account, authorised by the hot wallet, to the destination's associated account (or to the destination itself when
 * it is a token account). Anything else is refused. Answers the destination as the refund names it.
 */
function readSolanaTransfer(
  hotAddress: string,
  destination: string,
  token: TokenContract,
  preimage: SignedPreimage,
): { to: string | null; amount: bigint } {
  if (preimage.kind !== 'solana-message') refuse('wrong_method', `a Solana refund payout signs a Solana message, not an ${preimage.kind}`);
  let m: TokenMessage;
  try {
    m = decodeTokenMessage(preimage.message);
  } catch {
    refuse('undecodable_transaction', 'the message is not a Solana transaction message');
  }
  if (m.usesLookupTables) refuse('wrong_method', 'a refund payout uses no address lookup table');
  if (m.feePayer !== hotAddress || m.requiredSigners.length !== 1)
    refuse('wrong_key', 'the refunds hot wallet must be the fee payer and the only signer');
  const destinationAta = associatedTokenAccount(destination, token.address);
  const transfers = m.instructions.filter((i) => i.kind === 'transfer-checked');
  const creates = m.instructions.filter((i) => i.kind === 'create-ata');
  const other = m.instructions.find((i) => i.kind === 'other');
  if (other) refuse('wrong_method', `the message calls ${other.program}, which no refund payout calls`);
  if (transfers.length !== 1 || creates.length > 1) refuse('wrong_method', 'a refund payout is exactly one token transfer');
  for (const c of creates)
    if (
      c.payer !== hotAddress ||
      c.mint !== token.address ||
      c.owner !== destination ||
      c.ata !== destinationAta ||
      c.tokenProgram !== SPL_TOKEN_PROGRAM
    )
      refuse('wrong_recipient', "the account it creates is not the refund destination's token account");
  const t = transfers[0]!;
  if (t.mint !== token.address || t.decimals !== token.decimals)
    refuse('wrong_contract', `the transfer moves mint ${t.mint}, not ${token.symbol}`);
  if (t.authority !== hotAddress || t.source !== associatedTokenAccount(hotAddress, token.address))
    refuse('wrong_key', "the transfer does not spend the refunds hot wallet's token account");
  const to = t.destination === destinationAta || t.destination === destination ? destination : t.destination;
  return { to, amount: t.amount };
}
