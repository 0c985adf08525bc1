import { TransferRejectedError } from '../../chains/contract/sending.js';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import { HOT_WALLET_SLOT, type ChainAdapter, type KeyDeriver, type KeyPath, type TokenContract } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { merchantAccountIndex } from '../ledger/merchants/merchants.js';
import { refundById } from '../ledger/refunds/refunds.js';
import type { RefundRow } from '../ledger/refunds/refunds.js';
import { evmTokenCallData } from './evm-token-call.js';
import type { AuditContext, JustifiedSend, SignedPreimage } from './justified.js';
import { refuse } from './refusal.js';
import { readSolanaTokenTransfer } from './solana-token-transfer.js';
import { tronTokenCallData } from './tron-token-call.js';
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
        : readSolanaTokenTransfer(preimage, {
            payer: hot.address,
            sourceOwner: hot.address,
            destination: refund.destination_address,
            token,
            what: 'refund payout',
          });
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

/**
 * The gross-up the payout engine sends for a token announcing a transfer fee; null when the adapter has none. A token
 * that refuses the amount now justifies no gross-up; a node that does not answer is not the caller's fault: it
 * propagates, the server answers 503 and the payout waits (never a `wrong_amount` refusal for a node's outage).
 */
async function grossed(adapter: ChainAdapter, refund: RefundRow): Promise<bigint | null> {
  if (!adapter.grossForNet) return null;
  try {
    return await adapter.grossForNet(refund.token, refund.amount_base);
  } catch (err) {
    if (err instanceof TransferRejectedError) return null;
    throw err;
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
  const call = decodeTransferCall(tronTokenCallData(adapter, hotAddress, token, preimage, 'refund payout'));
  if (!call) refuse('wrong_method', 'the transaction is not one transfer(address,uint256) call');
  return { to: adapter.normalizeAddress(`41${call.to}`), amount: call.amount };
}
