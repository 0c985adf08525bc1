import { decodeTriggerRawData, TRIGGER_SMART_CONTRACT_TYPE } from '../../chains/tron/protobuf.js';
import type { ChainAdapter, TokenContract } from '../../chains/types.js';
import type { SignedPreimage } from './justified.js';
import { refuse } from './refusal.js';

// The TRON checks every token call the signer justifies shares (refund payouts, subscription charges): the signed
// raw_data is exactly one TriggerSmartContract, sent by the expected wallet, to the registry's token contract, with
// no TRX. The caller reads the call's data itself (transfer for a payout, transferFrom for a charge).

/** The calldata (hex, no 0x) of the one TriggerSmartContract `sender` sends to `token` with no TRX; refuses anything else. */
export function tronTokenCallData(
  adapter: ChainAdapter,
  sender: string,
  token: TokenContract,
  preimage: SignedPreimage,
  what: string,
): string {
  if (preimage.kind !== 'tron-transaction') refuse('wrong_method', `a TRON ${what} signs a TRON transaction, not an ${preimage.kind}`);
  let raw: ReturnType<typeof decodeTriggerRawData>;
  try {
    raw = decodeTriggerRawData(preimage.rawDataHex);
  } catch {
    refuse('undecodable_transaction', 'raw_data is not a TRON transaction with a contract');
  }
  if (raw.contractCount !== 1 || raw.contractType !== TRIGGER_SMART_CONTRACT_TYPE)
    refuse('wrong_method', `a ${what} is exactly one TriggerSmartContract`);
  if (raw.owner !== adapter.normalizeAddress(sender)) refuse('wrong_key', `the transaction is not sent by the ${what}'s wallet`);
  if (raw.contract !== adapter.normalizeAddress(token.address))
    refuse('wrong_contract', `the transaction calls ${raw.contract}, not the ${token.symbol} contract`);
  if (raw.callValue !== 0n) refuse('native_value', `the transaction carries ${raw.callValue} sun`);
  return raw.data;
}
