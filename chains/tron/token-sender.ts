import { AbiCoder, Signature, getBytes, recoverAddress } from 'ethers';
import {
  TransferRejectedError,
  type BroadcastResult,
  type ChargeTransfer,
  type Delivery,
  type SignedTransfer,
  type TokenRefusal,
  type TokenContract,
  type TokenTransferRequest,
  type TxOutcome,
  type TxSigner,
  type UnsignedTransfer,
} from '../types.js';
import { ERC20 } from '../evm/erc20-abi.js';
import { RpcError } from '../evm/rpc-errors.js';
import { TRANSFER_TOPIC } from '../evm/transfer-log.js';
import { readTokenRefusal, readTransferFee, type ReadView } from '../tokens/token-views.js';
import { grossForNet } from '../tokens/transfer-fee.js';
import { evmHexToTron, normalizeTronAddress, tronBase58, tronToEvmHex } from './address.js';
import { decodeTriggerRawData, encodeSignedTransaction, txIdOf, TRIGGER_SMART_CONTRACT_TYPE } from './protobuf.js';
import { contractTypeOf, decodeSystemRawData, type SystemContractName } from './system-contracts.js';
import { classifyBroadcast, classifyContractResult, parseContractResult } from './receipt.js';
import { readHotWalletResources, trxNeededFor, type ChainPrices } from './resources.js';
import {
  decodeNodeMessage,
  int64,
  type AccountJson,
  type BlockJson,
  type BroadcastReply,
  type TransactionInfo,
  type TransactionJson,
  type TriggerReply,
  type TronWalletApi,
} from './wallet-api.js';

// TRC-20 transfers out of a hot wallet: build with the node (triggersmartcontract), check what was built, sign the
// txID through the signer, hand back bytes to persist, broadcast them (broadcasthex), judge the result from the
// receipt. The transfer ABI declares no return value (Tether's TRC-20 returns one, look-alikes may not): success is
// receipt.result SUCCESS plus a Transfer log from the hot wallet, never decoded return data or a broadcast reply.

/** One TRC-20 call the sender builds: tronweb's function selector and typed parameters, and the ABI data they encode to. */
interface TokenCall {
  selector: string;
  params: Array<{ type: 'address' | 'uint256'; value: string }>;
  data: string;
}

function transferCall(to: string, amount: bigint): TokenCall {
  return {
    selector: 'transfer(address,uint256)',
    params: [
      { type: 'address', value: tronBase58(to) },
      { type: 'uint256', value: amount.toString() },
    ],
    data: ERC20.encodeFunctionData('transfer', [tronToEvmHex(to), amount]),
  };
}

function transferFromCall(owner: string, to: string, amount: bigint): TokenCall {
  return {
    selector: 'transferFrom(address,address,uint256)',
    params: [
      { type: 'address', value: tronBase58(owner) },
      { type: 'address', value: tronBase58(to) },
      { type: 'uint256', value: amount.toString() },
    ],
    data: ERC20.encodeFunctionData('transferFrom', [tronToEvmHex(owner), tronToEvmHex(to), amount]),
  };
}

function approveCall(spender: string, amount: bigint): TokenCall {
  return {
    selector: 'approve(address,uint256)',
    params: [
      { type: 'address', value: tronBase58(spender) },
      { type: 'uint256', value: amount.toString() },
    ],
    data: ERC20.encodeFunctionData('approve', [tronToEvmHex(spender), amount]),
  };
}

export interface TronSenderOptions {
  api: TronWalletApi;
  tokens: readonly TokenContract[];
  /** Upper bound on fee_limit (sun): a payout whose estimate needs more is refused before signing. */
  feeLimitCeilingSun: bigint;
  /** Head-room added to the energy estimate, in percent (dynamic energy penalty, state changes before inclusion). */
  energyMarginPercent: number;
  /** Wait past expiration (ms of solidified block time) before a transaction not found counts as proven absent. */
  expirySafetyMs?: number;
}

/** What build() hands to sign(): the node's transaction plus the numbers behind its fee_limit. */
export interface TronTxBody {
  transaction: Pick<TransactionJson, 'txID' | 'raw_data_hex'> & { raw_data: TransactionJson['raw_data'] };
  /** Set on a charge: the owner whose tokens `transferFrom(owner, to, amount)` moves (absent: `transfer(to, amount)`). */
  transferFromOwner?: string;
  energyEstimate: string;
  feeLimit: string;
  trxBurnEstimateSun: string;
  /**
   * Set on a sweep's system transaction (sweep-*.ts): the contract the node was asked to build, which sign() checks
   * against the request: `from` the owner, `to` the recipient / receiver, `amount` the TRX (sun) sent or delegated.
   */
  system?: { contract: Exclude<SystemContractName, 'FreezeBalanceV2Contract'> };
}

export class TronTokenSender {
  readonly #o: TronSenderOptions;
  #prices: { at: number; value: ChainPrices } | null = null;

  constructor(o: TronSenderOptions) {
    this.#o = o;
  }

  get api(): TronWalletApi {
    return this.#o.api;
  }

  /** Head-room on energy estimates, in percent (CHAIN_TRON_<MODE>_ENERGY_MARGIN_PERCENT). */
  get energyMarginPercent(): number {
    return this.#o.energyMarginPercent;
  }

  /** getEnergyFee and getTransactionFee (sun per energy / per bandwidth byte), cached one minute. */
  async prices(): Promise<ChainPrices> {
    if (this.#prices && Date.now() - this.#prices.at < 60_000) return this.#prices.value;
    const r = await this.#o.api.full<{ chainParameter?: Array<{ key: string; value?: number }> }>('wallet/getchainparameters', {});
    const get = (k: string) => int64(r.chainParameter?.find((p) => p.key === k)?.value);
    const value = { energySun: get('getEnergyFee'), bandwidthSun: get('getTransactionFee') };
    if (value.energySun <= 0n || value.bandwidthSun <= 0n)
      throw new RpcError('bad_response', 'getchainparameters lacks getEnergyFee / getTransactionFee');
    this.#prices = { at: Date.now(), value };
    return value;
  }

  async build(request: TokenTransferRequest): Promise<UnsignedTransfer<TronTxBody>> {
    const { token, from, to } = this.#checkRequest(request);
    // 1. Token balance of the hot wallet (then a dry run of the call, in #buildCall).
    const held = await this.tokenBalance(token, from);
    if (held < request.amount) {
      throw new TransferRejectedError(
        'insufficient_token_balance',
        `hot wallet ${tronBase58(from)} holds ${held} ${request.token} base units, the payout needs ${request.amount}`,
      );
    }
    return this.#buildCall(request, token, from, transferCall(to, request.amount), {}, { sender: from, recipient: to });
  }

  /**
   * A charge: `transferFrom(owner, request.to, amount)` sent, signed and paid for (energy, bandwidth) by the charger
   * `request.from`, with the fee_limit a payout's `transfer` gets (dry-run estimate + margin, under the ceiling).
   */
  async buildTransferFrom(request: TokenTransferRequest, ownerAddress: string): Promise<UnsignedTransfer<TronTxBody>> {
    const { token, from, to } = this.#checkRequest(request);
    const owner = normalizeTronAddress(ownerAddress);
    if (!owner) throw new TransferRejectedError('invalid', `not a TRON address: ${ownerAddress}`);
    const [held, allowed] = await Promise.all([this.tokenBalance(token, owner), this.tokenAllowance(token, owner, from)]);
    if (held < request.amount) {
      throw new TransferRejectedError(
        'insufficient_token_balance',
        `${tronBase58(owner)} holds ${held} ${request.token} base units, the charge needs ${request.amount}`,
      );
    }
    if (allowed < request.amount) {
      throw new TransferRejectedError(
        'simulation_reverted',
        `${tronBase58(owner)} allows ${tronBase58(from)} ${allowed} ${request.token} base units, the charge needs ${request.amount}`,
      );
    }
    return this.#buildCall(
      request,
      token,
      from,
      transferFromCall(owner, to, request.amount),
      { transferFromOwner: owner },
      { sender: owner, recipient: to, spender: from },
    );
  }

  /**
   * An unsigned `approve(spender, amount)` from `owner` (a customer's wallet, which signs and broadcasts it itself):
   * java-tron's transaction JSON as triggersmartcontract returns it, checked against the arguments. Its fee_limit
   * covers the dry-run energy + margin, under the ceiling; nothing about the owner's TRX is checked (the wallet shows it).
   * A dry run the token refuses is `simulation_reverted`: e.g. Tether-style approve(non-zero) while a non-zero
   * allowance stands (the page prepares approve(0) alone, and the full approve only after the reset landed).
   */
  async buildApproval(tokenSymbol: string, ownerAddress: string, spenderAddress: string, amount: bigint): Promise<TransactionJson> {
    const token = this.#token(tokenSymbol);
    const owner = normalizeTronAddress(ownerAddress);
    const spender = normalizeTronAddress(spenderAddress);
    if (!owner || !spender) throw new TransferRejectedError('invalid', `not a TRON address: ${owner ? spenderAddress : ownerAddress}`);
    if (amount < 0n) throw new TransferRejectedError('invalid', 'amount must not be negative');
    const call = approveCall(spender, amount);
    const dry = await this.#constant(token, owner, call.data);
    if (!dry.ok)
      throw new TransferRejectedError(
        'simulation_reverted',
        `the token refuses approve (${dry.message}): a non-zero allowance may have to be reset to 0 first`,
      );
    const feeLimit = await this.#feeLimit(dry.energy);
    const tx = await this.#trigger(token, owner, call, feeLimit);
    const raw = decodeTriggerRawData(tx.raw_data_hex);
    if (txIdOf(tx.raw_data_hex.toLowerCase()) !== tx.txID.toLowerCase() || !this.#matches(raw, owner, token, call, feeLimit)) {
      throw new RpcError('bad_response', 'triggersmartcontract built another approve than the one asked for');
    }
    return { txID: tx.txID, raw_data: tx.raw_data, raw_data_hex: tx.raw_data_hex, visible: tx.visible ?? false };
  }

  #checkRequest(request: TokenTransferRequest): { token: TokenContract; from: string; to: string } {
    const token = this.#token(request.token);
    const to = normalizeTronAddress(request.to);
    if (!to) throw new TransferRejectedError('invalid', `not a TRON address: ${request.to}`);
    const from = normalizeTronAddress(request.from.address);
    if (!from) throw new TransferRejectedError('invalid', `not a TRON hot wallet address: ${request.from.address}`);
    if (request.amount <= 0n) throw new TransferRejectedError('invalid', 'amount must be positive');
    return { token, from, to };
  }

  /** fee_limit for `energy` estimated units: margin added, priced at getEnergyFee, refused above the ceiling. */
  async #feeLimit(estimate: bigint): Promise<bigint> {
    const prices = await this.prices();
    const energy = (estimate * BigInt(100 + this.#o.energyMarginPercent) + 99n) / 100n;
    const feeLimit = energy * prices.energySun;
    if (feeLimit > this.#o.feeLimitCeilingSun) {
      throw new TransferRejectedError(
        'other',
        `fee_limit ${feeLimit} sun (${estimate} energy + ${this.#o.energyMarginPercent}% at ${prices.energySun} sun) exceeds the configured ceiling ${this.#o.feeLimitCeilingSun} sun`,
      );
    }
    return feeLimit;
  }

  /** The node builds the transaction; tronweb checks raw_data_hex against our arguments (txCheckWithArgs). */
  async #trigger(token: TokenContract, owner: string, call: TokenCall, feeLimit: bigint): Promise<TransactionJson> {
    const built = (await this.#o.api.tronWeb.transactionBuilder
      .triggerSmartContract(
        tronBase58(token.address),
        call.selector,
        { feeLimit: Number(feeLimit), callValue: 0 },
        call.params,
        tronBase58(owner),
      )
      .catch((e: unknown) => {
        if (e instanceof Error && /REVERT|validate|balance/i.test(e.message))
          throw new TransferRejectedError('simulation_reverted', e.message);
        throw new RpcError('unavailable', `triggersmartcontract: ${(e as Error).message ?? String(e)}`);
      })) as { result?: { result?: boolean }; transaction?: TransactionJson };
    const tx = built.transaction;
    if (!built.result?.result || !tx) throw new RpcError('bad_response', 'triggersmartcontract returned no transaction');
    return tx;
  }

  /** One TriggerSmartContract from `owner` to the token, no TRX attached, exactly `call`'s data, the fee_limit computed. */
  #matches(raw: ReturnType<typeof decodeTriggerRawData>, owner: string, token: TokenContract, call: TokenCall, feeLimit: bigint): boolean {
    return (
      raw.contractCount === 1 &&
      raw.contractType === TRIGGER_SMART_CONTRACT_TYPE &&
      raw.owner === owner &&
      raw.contract === token.address &&
      raw.callValue === 0n &&
      raw.data === call.data.slice(2).toLowerCase() &&
      raw.feeLimit === feeLimit
    );
  }

  async #buildCall(
    request: TokenTransferRequest,
    token: TokenContract,
    from: string,
    call: TokenCall,
    extra: Pick<TronTxBody, 'transferFromOwner'>,
    parties: { sender: string; recipient: string; spender?: string },
  ): Promise<UnsignedTransfer<TronTxBody>> {
    // 1. A dry run of the call from the sender (energy estimate, refusals; the token's state says which refusal).
    const dry = await this.#constant(token, from, call.data);
    if (!dry.ok) {
      const refusal = await this.#refusal(token, from, parties);
      throw new TransferRejectedError('simulation_reverted', `the token refuses the transfer (${dry.message})`, refusal ?? undefined);
    }

    // 2. fee_limit from the estimate, bounded by the ceiling; TRX for what staked resources do not cover.
    const feeLimit = await this.#feeLimit(dry.energy);
    const prices = await this.prices();
    const resources = await readHotWalletResources(this.#o.api, from, prices);
    if (!resources.activated)
      throw new TransferRejectedError(
        'insufficient_gas',
        `hot wallet ${tronBase58(from)} is not activated on chain (it never received TRX)`,
      );

    // 3. The node builds the transaction.
    const tx = await this.#trigger(token, from, call, feeLimit);
    const rawBytes = BigInt(tx.raw_data_hex.length / 2);
    const burn = trxNeededFor({ energy: dry.energy, bandwidthBytes: rawBytes + 67n + 64n }, resources, prices);
    if (resources.trxBalanceSun < burn) {
      throw new TransferRejectedError(
        'insufficient_gas',
        `hot wallet ${tronBase58(from)} holds ${resources.trxBalanceSun} sun TRX; energy and bandwidth it lacks cost ${burn} sun`,
      );
    }
    const body: TronTxBody = {
      transaction: { txID: tx.txID, raw_data: tx.raw_data, raw_data_hex: tx.raw_data_hex },
      ...extra,
      energyEstimate: dry.energy.toString(),
      feeLimit: feeLimit.toString(),
      trxBurnEstimateSun: burn.toString(),
    };
    return { network: 'tron', request, body };
  }

  async sign(unsigned: UnsignedTransfer<TronTxBody>, signer: TxSigner): Promise<SignedTransfer> {
    const body = unsigned.body;
    const { request } = unsigned;
    const rawHex = body.transaction.raw_data_hex.toLowerCase();
    const txId = txIdOf(rawHex);
    if (txId !== body.transaction.txID.toLowerCase()) throw new Error('txID is not sha256(raw_data_hex): refusing to sign');
    if (body.system) return this.#signSystem(unsigned, signer, rawHex, txId);
    // Sign only what the request asked for: one TriggerSmartContract from the hot wallet to the token, transfer(to,
    // amount), or transferFrom(owner, to, amount) for a charge.
    const raw = decodeTriggerRawData(rawHex);
    const token = this.#token(request.token);
    const from = normalizeTronAddress(request.from.address);
    const to = normalizeTronAddress(request.to);
    const owner = body.transferFromOwner === undefined ? null : normalizeTronAddress(body.transferFromOwner);
    if (!from || !to || (body.transferFromOwner !== undefined && !owner))
      throw new Error('unsigned transfer names an address that is not TRON: refusing to sign');
    const call = owner ? transferFromCall(owner, to, request.amount) : transferCall(to, request.amount);
    if (!this.#matches(raw, from, token, call, BigInt(body.feeLimit))) {
      throw new Error('built transaction does not match the payout request: refusing to sign');
    }
    return this.#signDigest(txId, rawHex, raw.expiration, from, request.from.key, signer);
  }

  /** A sweep's TRX transfer or (un)delegation: exactly one contract of the kind asked, from, to and amount as requested. */
  async #signSystem(unsigned: UnsignedTransfer<TronTxBody>, signer: TxSigner, rawHex: string, txId: string): Promise<SignedTransfer> {
    const { request, body } = unsigned;
    const raw = decodeSystemRawData(rawHex);
    const from = normalizeTronAddress(request.from.address);
    const to = normalizeTronAddress(request.to);
    const ok =
      raw.contractCount === 1 &&
      raw.name === body.system!.contract &&
      raw.owner === from &&
      raw.to === to &&
      raw.amount === request.amount &&
      (raw.name === 'TransferContract' || (raw.resource === 'ENERGY' && !raw.lock));
    if (!from || !ok) throw new Error('built transaction does not match the sweep step: refusing to sign');
    return this.#signDigest(txId, rawHex, raw.expiration, from, request.from.key, signer);
  }

  async #signDigest(
    txId: string,
    rawHex: string,
    expiration: bigint,
    from: string,
    key: TokenTransferRequest['from']['key'],
    signer: TxSigner,
  ): Promise<SignedTransfer> {
    const digest = getBytes(`0x${txId}`);
    const sig = await signer.signSecp256k1Digest(key, digest);
    const recovered = evmHexToTron(recoverAddress(digest, Signature.from(sig)));
    if (recovered !== from) throw new Error('signer key does not match the sending address');
    const signature = `${sig.r.slice(2)}${sig.s.slice(2)}${(27 + sig.yParity).toString(16)}`;
    return {
      network: 'tron',
      hash: txId,
      raw: `0x${encodeSignedTransaction(rawHex, [signature])}`,
      sender: from,
      nonce: null,
      validUntilHeight: null,
      validUntilTimeMs: expiration.toString(),
    };
  }

  async broadcast(signed: SignedTransfer): Promise<BroadcastResult> {
    const reply = await this.#o.api.full<BroadcastReply>('wallet/broadcasthex', { transaction: signed.raw.replace(/^0x/, '') });
    if (reply.result === true) return { status: 'accepted' };
    const message = decodeNodeMessage(reply.message);
    const verdict = classifyBroadcast(reply.code, message);
    switch (verdict.kind) {
      case 'accepted':
        return { status: 'accepted' };
      case 'duplicate':
        return { status: 'already_known' };
      case 'retry':
        throw new RpcError('unavailable', `broadcast: ${reply.code} ${message}`);
      case 'rejected': {
        // A refusal of bytes the chain already holds (expired by now, or re-sent) is not a failure of the payout.
        if ((await this.outcome(signed.hash)).status !== 'unknown') return { status: 'already_known' };
        return { status: 'rejected', reason: verdict.reason, detail: `${reply.code ?? 'no code'}: ${message}` };
      }
      default: {
        const never: never = verdict;
        return never;
      }
    }
  }

  /**
   * Final only from the solidified receipt; an unsolidified receipt gives the same status with final=false.
   * `transferFrom` set (a charge): success needs a Transfer log from that owner, not from the transaction's sender.
   */
  async outcome(hash: string, transferFrom?: string): Promise<TxOutcome> {
    const value = hash.replace(/^0x/, '').toLowerCase();
    let info = await this.#o.api.solidity<TransactionInfo>('walletsolidity/gettransactioninfobyid', { value });
    let final = true;
    if (!info.id) {
      final = false;
      info = await this.#o.api.full<TransactionInfo>('wallet/gettransactioninfobyid', { value });
    }
    if (!info.id) {
      const tx = await this.#o.api.full<Partial<TransactionJson>>('wallet/gettransactionbyid', { value });
      return tx.txID ? { status: 'pending' } : { status: 'unknown' };
    }
    const height = int64(info.blockNumber);
    const tx = transferFrom === undefined ? await this.#o.api.full<Partial<TransactionJson>>('wallet/gettransactionbyid', { value }) : null;
    const system = tx?.raw_data_hex !== undefined && contractTypeOf(tx.raw_data_hex) !== TRIGGER_SMART_CONTRACT_TYPE;
    const [block, now] = await Promise.all([
      this.#o.api.full<BlockJson>('wallet/getblockbynum', { num: Number(height) }),
      this.#o.api.full<BlockJson>('wallet/getnowblock', {}),
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
      const refusal = final && failure.reason === 'reverted' ? await this.#refusalOf(value) : null;
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
    if (!sender || this.#transfersFrom(info, sender).length === 0) {
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
  async chargeTransfer(hash: string, ownerAddress: string, toAddress: string): Promise<ChargeTransfer | null> {
    const owner = normalizeTronAddress(ownerAddress);
    const to = normalizeTronAddress(toAddress);
    if (!owner || !to) return null;
    const value = hash.replace(/^0x/, '').toLowerCase();
    let info = await this.#o.api.solidity<TransactionInfo>('walletsolidity/gettransactioninfobyid', { value });
    if (!info.id) info = await this.#o.api.full<TransactionInfo>('wallet/gettransactioninfobyid', { value });
    if (!info.id || classifyContractResult(parseContractResult(info.receipt?.result)) !== null) return null;
    // Every Transfer from the owner to the destination, summed: what the merchant received after any fee the token took.
    const moved = this.#transfersFrom(info, owner).filter((x) => x.to === to);
    const first = moved[0];
    if (!first) return null;
    const t = { ...first, amount: moved.reduce((sum, x) => sum + (x.tokenContract === first.tokenContract ? x.amount : 0n), 0n) };
    const height = int64(info.blockNumber);
    const block = await this.#o.api.full<BlockJson>('wallet/getblockbynum', { num: Number(height) });
    if (!block.blockID) throw new RpcError('bad_response', `block ${height} of ${value} not found`);
    return {
      logIndex: t.logIndex,
      amount: t.amount,
      tokenContract: t.tokenContract,
      block: { height, hash: block.blockID, time: new Date(Number(int64(info.blockTimeStamp))) },
    };
  }

  /** Sum of `tokenAddress`'s Transfer logs from `fromAddress` in a succeeded transaction: to `toAddress`, and elsewhere. */
  async delivery(hash: string, tokenAddress: string, fromAddress: string, toAddress: string): Promise<Delivery | null> {
    const from = normalizeTronAddress(fromAddress);
    const to = normalizeTronAddress(toAddress);
    if (!from || !to) return null;
    const value = hash.replace(/^0x/, '').toLowerCase();
    let info = await this.#o.api.solidity<TransactionInfo>('walletsolidity/gettransactioninfobyid', { value });
    if (!info.id) info = await this.#o.api.full<TransactionInfo>('wallet/gettransactioninfobyid', { value });
    if (!info.id || classifyContractResult(parseContractResult(info.receipt?.result)) !== null) return null;
    const d: Delivery = { delivered: 0n, elsewhere: 0n };
    for (const t of this.#transfersFrom(info, from)) {
      if (t.tokenContract !== tokenAddress) continue;
      if (t.to === to) d.delivered += t.amount;
      else d.elsewhere += t.amount;
    }
    return d;
  }

  /** Gross amount so that the recipient gets `net` under the token's announced fee (Tether's views); `net` without. */
  async grossForNet(symbol: string, net: bigint): Promise<bigint> {
    const token = this.#token(symbol);
    const fee = await readTransferFee(this.#views(token, token.address));
    if (!fee) return net;
    const gross = grossForNet(net, fee);
    if (gross === null)
      throw new TransferRejectedError('invalid', `${symbol} takes a fee of ${fee.basisPoints} basis points: no amount delivers ${net}`);
    return gross;
  }

  /** Optional views of `token` (paused, blacklists, fee) over triggerconstantcontract; null = no such view. */
  #views(token: TokenContract, caller: string): ReadView {
    return async (data) => {
      try {
        const r = await this.#constant(token, caller, data);
        return r.ok && /^[0-9a-fA-F]{64,}$/.test(r.result) ? BigInt(`0x${r.result.slice(0, 64)}`) : null;
      } catch (e) {
        if (e instanceof RpcError && e.kind === 'rpc_error') return null;
        throw e;
      }
    };
  }

  /** The token's reason for refusing, parties in canonical TRON form. */
  #refusal(token: TokenContract, caller: string, p: { sender: string; recipient: string; spender?: string }): Promise<TokenRefusal | null> {
    return readTokenRefusal(this.#views(token, caller), {
      sender: tronToEvmHex(p.sender),
      recipient: tronToEvmHex(p.recipient),
      ...(p.spender !== undefined ? { spender: tronToEvmHex(p.spender) } : {}),
    });
  }

  /** The refusal behind a reverted transfer or transferFrom, its parties decoded from the transaction itself. */
  async #refusalOf(txId: string): Promise<TokenRefusal | null> {
    const tx = await this.#o.api.full<TransactionJson>('wallet/gettransactionbyid', { value: txId });
    if (!tx.raw_data_hex) return null;
    const raw = decodeTriggerRawData(tx.raw_data_hex);
    const token = this.#o.tokens.find((t) => t.address === raw.contract);
    const call = token ? ERC20.parseTransaction({ data: `0x${raw.data}` }) : null;
    if (!token || !call) return null;
    if (call.name === 'transfer')
      return this.#refusal(token, raw.owner, { sender: raw.owner, recipient: evmHexToTron(String(call.args[0])) });
    if (call.name === 'transferFrom') {
      return this.#refusal(token, raw.owner, {
        sender: evmHexToTron(String(call.args[0])),
        recipient: evmHexToTron(String(call.args[1])),
        spender: raw.owner,
      });
    }
    return null;
  }

  /** allowance(owner, spender) through triggerconstantcontract, in base units. */
  /** `at: 'final'` reads solidified state (the solidity API), as authorizations are read. */
  async tokenAllowance(token: TokenContract, owner: string, spender: string, at: 'latest' | 'final' = 'latest'): Promise<bigint> {
    const r = await this.#constant(token, owner, ERC20.encodeFunctionData('allowance', [tronToEvmHex(owner), tronToEvmHex(spender)]), at);
    if (!r.ok) throw new RpcError('bad_response', `allowance failed: ${r.message}`);
    return r.result === '' ? 0n : BigInt(`0x${r.result.slice(0, 64)}`);
  }

  token(symbol: string): TokenContract {
    return this.#token(symbol);
  }

  /** balanceOf(owner) through triggerconstantcontract, in base units. */
  /** `at: 'final'` reads solidified state (the solidity API): what a sweep plans from. */
  async tokenBalance(token: TokenContract, owner: string, at: 'latest' | 'final' = 'latest'): Promise<bigint> {
    const r = await this.#constant(token, owner, ERC20.encodeFunctionData('balanceOf', [tronToEvmHex(owner)]), at);
    if (!r.ok) throw new TransferRejectedError('simulation_reverted', `balanceOf failed: ${r.message}`);
    return r.result === '' ? 0n : BigInt(`0x${r.result.slice(0, 64)}`);
  }

  /** TRX balance (sun) from getaccount; 0 for an account never activated. `at: 'final'`: the solidity API's. */
  async trxBalance(owner: string, at: 'latest' | 'final' = 'latest'): Promise<bigint> {
    const r =
      at === 'final'
        ? await this.#o.api.solidity<AccountJson>('walletsolidity/getaccount', { address: owner })
        : await this.#o.api.full<AccountJson>('wallet/getaccount', { address: owner });
    return int64(r.balance);
  }

  /** The solidified block's height (walletsolidity/getnowblock): the state the solidity API answers from. */
  async solidHeight(): Promise<bigint> {
    const solid = await this.#o.api.solidity<BlockJson>('walletsolidity/getnowblock', {});
    return int64(solid.block_header?.raw_data?.number);
  }

  /**
   * True once `signed` can never land: a solidified block stamped past its expiration (plus a safety margin) exists
   * and the transaction is in no block. Only then may a payout re-sign (with a new txID).
   */
  async isExpired(signed: SignedTransfer): Promise<boolean> {
    if (signed.validUntilTimeMs === null) return false;
    const solid = await this.#o.api.solidity<BlockJson>('walletsolidity/getnowblock', {});
    const solidTime = int64(solid.block_header?.raw_data?.timestamp);
    if (solidTime <= BigInt(signed.validUntilTimeMs) + BigInt(this.#o.expirySafetyMs ?? 3000)) return false;
    return (await this.outcome(signed.hash)).status === 'unknown';
  }

  #token(symbol: string): TokenContract {
    const t = this.#o.tokens.find((x) => x.symbol === symbol);
    if (!t) throw new TransferRejectedError('invalid', `${symbol} is not configured on tron`);
    return t;
  }

  async #constant(
    token: TokenContract,
    owner: string,
    data: string,
    at: 'latest' | 'final' = 'latest',
  ): Promise<{ ok: boolean; result: string; energy: bigint; message: string }> {
    const body = { owner_address: owner, contract_address: token.address, data: data.replace(/^0x/, ''), call_value: 0 };
    const r =
      at === 'final'
        ? await this.#o.api.solidity<TriggerReply>('walletsolidity/triggerconstantcontract', body)
        : await this.#o.api.full<TriggerReply>('wallet/triggerconstantcontract', body);
    if (r.Error) throw new RpcError('rpc_error', `triggerconstantcontract: ${r.Error}`);
    const failed = r.result?.result !== true || r.transaction?.ret?.some((x) => x.ret === 'FAILED') === true || !!r.result?.message;
    const message = decodeNodeMessage(r.result?.message) || r.result?.code || 'FAILED';
    return { ok: !failed, result: r.constant_result?.[0] ?? '', energy: int64(r.energy_used), message };
  }

  /** Transfer logs of registry tokens from `sender` in a receipt, with their index in the receipt's log list. */
  #transfersFrom(info: TransactionInfo, sender: string): Array<{ logIndex: number; to: string; amount: bigint; tokenContract: string }> {
    const contracts = new Map(this.#o.tokens.map((t) => [t.address.slice(2), t.address]));
    const topic = TRANSFER_TOPIC.slice(2);
    const coder = AbiCoder.defaultAbiCoder();
    const out: Array<{ logIndex: number; to: string; amount: bigint; tokenContract: string }> = [];
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
}
