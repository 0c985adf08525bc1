import { AbiCoder } from 'ethers';
import type { ChargeTransfer, Delivery, SignedTransfer, TokenRefusal, TxOutcome } from '../types.js';
import { ERC20 } from '../evm/erc20-abi.js';
import { RpcError } from '../evm/rpc-errors.js';
import { TRANSFER_TOPIC } from '../evm/transfer-log.js';
import { evmHexToTron, normalizeTronAddress } from './address.js';
import { tokenRefusal } from './constant-calls.js';
import { decodeTriggerRawData, TRIGGER_SMART_CONTRACT_TYPE } from './protobuf.js';
import { classifyContractResult, parseContractResult } from './receipt.js';
import type { TronSenderOptions } from './sender-types.js';
import { contractTypeOf } from './system-contracts.js';
import { decodeNodeMessage, int64, type BlockJson, type TransactionInfo, type TransactionJson } from './wallet-api.js';

// Results judged from the receipt, never from decoded return data or a broadcast reply: the transfer ABI declares no
// return value (Tether's TRC-20 returns one, look-alikes may not), so success is receipt.result SUCCESS plus a
// Transfer log of a registry token from the sender.

/** What judging a result needs of the sender's options. */
export type OutcomeOptions = Pick<TronSenderOptions, 'api' | 'tokens' | 'expirySafetyMs'>;

/**
 * Final only from the solidified receipt; an unsolidified receipt gives the same status with final=false.
 * `transferFrom` set (a charge): success needs a Transfer log from that owner, not from the transaction's sender.
 */
export async function transferOutcome(o: OutcomeOptions, hash: string, transferFrom?: string): Promise<TxOutcome> {
  const value = hash.replace(/^0x/, '').toLowerCase();
  let info = await o.api.solidity<TransactionInfo>('walletsolidity/gettransactioninfobyid', { value });
  let final = true;
  if (!info.id) {
    final = false;
    info = await o.api.full<TransactionInfo>('wallet/gettransactioninfobyid', { value });
  }
  if (!info.id) {
    const tx = await o.api.full<Partial<TransactionJson>>('wallet/gettransactionbyid', { value });
    return tx.txID ? { status: 'pending' } : { status: 'unknown' };
  }
  const height = int64(info.blockNumber);
  const tx = transferFrom === undefined ? await o.api.full<Partial<TransactionJson>>('wallet/gettransactionbyid', { value }) : null;
  const system = tx?.raw_data_hex !== undefined && contractTypeOf(tx.raw_data_hex) !== TRIGGER_SMART_CONTRACT_TYPE;
  const [block, now] = await Promise.all([
    o.api.full<BlockJson>('wallet/getblockbynum', { num: Number(height) }),
    o.api.full<BlockJson>('wallet/getnowblock', {}),
  ]);
  const ref = { height, hash: block.blockID ?? '', time: new Date(Number(int64(info.blockTimeStamp))) };
  const latest = int64(now.block_header?.raw_data?.number);
  const confirmations = latest >= height ? latest - height + 1n : 1n;
  // A system contract (a sweep's TRX transfer, delegation) has no VM receipt: it landed as its contractRet says.
  if (system) {
    const ret = tx?.ret?.[0]?.contractRet ?? 'SUCCESS';
    if (ret === 'SUCCESS') return { status: 'succeeded', block: ref, confirmations, final, fee: int64(info.fee) };
    return {
      status: 'failed',
      block: ref,
      confirmations,
      final,
      reason: 'reverted',
      detail: `${ret}: the system contract failed`,
      fee: int64(info.fee),
    };
  }
  const failure = classifyContractResult(parseContractResult(info.receipt?.result));
  if (failure) {
    const node = decodeNodeMessage(info.resMessage);
    // A REVERT is explained from the token's current state once final (TRON has no constant call at a past block).
    const refusal = final && failure.reason === 'reverted' ? await refusalOf(o, value) : null;
    return {
      status: 'failed',
      block: ref,
      confirmations,
      final,
      reason: failure.reason,
      detail: node ? `${failure.detail} (${node})` : failure.detail,
      ...(refusal ? { refusal } : {}),
      fee: int64(info.fee),
    };
  }
  const sender = transferFrom === undefined ? decodeTriggerRawData(tx!.raw_data_hex!).owner : normalizeTronAddress(transferFrom);
  if (!sender || transfersFrom(o, info, sender).length === 0) {
    const whose = transferFrom === undefined ? 'the hot wallet' : 'the charged owner';
    return {
      status: 'failed',
      block: ref,
      confirmations,
      final,
      reason: 'no_transfer_event',
      detail: `receipt SUCCESS but no Transfer log of a registry token from ${whose}`,
      fee: int64(info.fee),
    };
  }
  return { status: 'succeeded', block: ref, confirmations, final, fee: int64(info.fee) };
}

/**
 * The Transfer from `owner` to `to` in a succeeded transaction (solidified receipt, else the full node's), or null.
 * `logIndex` is the log's position in the transaction's receipt (the wallet API's `log` list); block hash = blockID.
 */
export async function chargeTransfer(
  o: OutcomeOptions,
  hash: string,
  ownerAddress: string,
  toAddress: string,
): Promise<ChargeTransfer | null> {
  const found = await succeededTransfers(o, hash, ownerAddress, toAddress);
  if (!found) return null;
  const { info, value, to } = found;
  // Every Transfer from the owner to the destination, summed: what the merchant received after any fee the token took.
  const moved = found.transfers.filter((x) => x.to === to);
  const first = moved[0];
  if (!first) return null;
  const t = { ...first, amount: moved.reduce((sum, x) => sum + (x.tokenContract === first.tokenContract ? x.amount : 0n), 0n) };
  const height = int64(info.blockNumber);
  const block = await o.api.full<BlockJson>('wallet/getblockbynum', { num: Number(height) });
  if (!block.blockID) throw new RpcError('bad_response', `block ${height} of ${value} not found`);
  return {
    logIndex: t.logIndex,
    amount: t.amount,
    tokenContract: t.tokenContract,
    block: { height, hash: block.blockID, time: new Date(Number(int64(info.blockTimeStamp))) },
  };
}

/** Sum of `tokenAddress`'s Transfer logs from `fromAddress` in a succeeded transaction: to `toAddress`, and elsewhere. */
export async function delivery(
  o: OutcomeOptions,
  hash: string,
  tokenAddress: string,
  fromAddress: string,
  toAddress: string,
): Promise<Delivery | null> {
  const found = await succeededTransfers(o, hash, fromAddress, toAddress);
  if (!found) return null;
  const d: Delivery = { delivered: 0n, elsewhere: 0n };
  for (const t of found.transfers) {
    if (t.tokenContract !== tokenAddress) continue;
    if (t.to === found.to) d.delivered += t.amount;
    else d.elsewhere += t.amount;
  }
  return d;
}

/**
 * True once `signed` can never land: a solidified block stamped past its expiration (plus a safety margin) exists
 * and the transaction is in no block. Only then may a payout re-sign (with a new txID).
 */
export async function isExpired(o: OutcomeOptions, signed: SignedTransfer): Promise<boolean> {
  if (signed.validUntilTimeMs === null) return false;
  const solid = await o.api.solidity<BlockJson>('walletsolidity/getnowblock', {});
  const solidTime = int64(solid.block_header?.raw_data?.timestamp);
  if (solidTime <= BigInt(signed.validUntilTimeMs) + BigInt(o.expirySafetyMs ?? 3000)) return false;
  return (await transferOutcome(o, signed.hash)).status === 'unknown';
}

/**
 * The receipt of `hash` (solidified, else the full node's) if the call succeeded, with its Transfer logs from `fromAddress`;
 * null if either address is not TRON or the transaction is absent or failed.
 */
async function succeededTransfers(
  o: OutcomeOptions,
  hash: string,
  fromAddress: string,
  toAddress: string,
): Promise<{ info: TransactionInfo; value: string; to: string; transfers: TokenTransfer[] } | null> {
  const from = normalizeTronAddress(fromAddress);
  const to = normalizeTronAddress(toAddress);
  if (!from || !to) return null;
  const value = hash.replace(/^0x/, '').toLowerCase();
  let info = await o.api.solidity<TransactionInfo>('walletsolidity/gettransactioninfobyid', { value });
  if (!info.id) info = await o.api.full<TransactionInfo>('wallet/gettransactioninfobyid', { value });
  if (!info.id || classifyContractResult(parseContractResult(info.receipt?.result)) !== null) return null;
  return { info, value, to, transfers: transfersFrom(o, info, from) };
}

/** The refusal behind a reverted transfer or transferFrom, its parties decoded from the transaction itself. */
async function refusalOf(o: OutcomeOptions, txId: string): Promise<TokenRefusal | null> {
  const tx = await o.api.full<TransactionJson>('wallet/gettransactionbyid', { value: txId });
  if (!tx.raw_data_hex) return null;
  const raw = decodeTriggerRawData(tx.raw_data_hex);
  const token = o.tokens.find((t) => t.address === raw.contract);
  const call = token ? ERC20.parseTransaction({ data: `0x${raw.data}` }) : null;
  if (!token || !call) return null;
  if (call.name === 'transfer')
    return tokenRefusal(o.api, token, raw.owner, { sender: raw.owner, recipient: evmHexToTron(String(call.args[0])) });
  if (call.name === 'transferFrom') {
    return tokenRefusal(o.api, token, raw.owner, {
      sender: evmHexToTron(String(call.args[0])),
      recipient: evmHexToTron(String(call.args[1])),
      spender: raw.owner,
    });
  }
  return null;
}

/** A Transfer log of a registry token, with its index in the receipt's log list. */
interface TokenTransfer {
  logIndex: number;
  to: string;
  amount: bigint;
  tokenContract: string;
}

/** Transfer logs of registry tokens from `sender` in a receipt, with their index in the receipt's log list. */
function transfersFrom(o: OutcomeOptions, info: TransactionInfo, sender: string): TokenTransfer[] {
  const contracts = new Map(o.tokens.map((t) => [t.address.slice(2), t.address]));
  const topic = TRANSFER_TOPIC.slice(2);
  const coder = AbiCoder.defaultAbiCoder();
  const out: TokenTransfer[] = [];
  (info.log ?? []).forEach((l, logIndex) => {
    const tokenContract = contracts.get(l.address.replace(/^0x/, '').toLowerCase().slice(-40));
    if (!tokenContract || l.topics?.length !== 3 || l.topics[0]?.replace(/^0x/, '').toLowerCase() !== topic) return;
    const from = evmHexToTron(coder.decode(['address'], `0x${l.topics[1]!.replace(/^0x/, '')}`)[0] as string);
    if (from !== sender) return;
    const to = evmHexToTron(coder.decode(['address'], `0x${l.topics[2]!.replace(/^0x/, '')}`)[0] as string);
    const data = (l.data ?? '').replace(/^0x/, '');
    out.push({ logIndex, to, amount: /^[0-9a-fA-F]{64}$/.test(data) ? BigInt(`0x${data}`) : 0n, tokenContract });
  });
  return out;
}
