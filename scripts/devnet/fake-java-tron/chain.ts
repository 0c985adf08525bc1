import { Signature, getBytes, id, recoverAddress } from 'ethers';
import { evmHexToTron, tronToEvmHex } from '../../../chains/tron/address.js';
import { decodeTriggerRawData, encodeTriggerRawData, txIdOf, type TriggerRawData } from '../../../chains/tron/protobuf.js';
import { TRIGGER_SMART_CONTRACT_TYPE } from '../../../chains/tron/protobuf.js';
import {
  contractTypeOf,
  decodeSystemRawData,
  encodeSystemRawData,
  systemValueJson,
  type SystemContractValue,
  type SystemRawData,
} from '../../../chains/tron/system-contracts.js';
import { FREE_NET_LIMIT, ResourceBook, newAccount, type FakeAccount } from './resources.js';
import { BroadcastRefusal } from './refusal.js';
import { executeSystemContract } from './system.js';

export { FREE_NET_LIMIT, TRX, type FakeAccount } from './resources.js';

// THIS IS A FAKE. State and rules behind the fake java-tron HTTP wallet API (server.ts): blocks are Anvil's blocks,
// token contracts are Anvil contracts at the same 20 bytes, and an accepted TriggerSmartContract is executed on Anvil
// by impersonating its owner, so balances and Transfer events are real. The owner is any activated account: hot
// wallets sending transfer / transferFrom (subscription charges), customers' wallets sending approve (tronweb's
// trx.sign, then /wallet/broadcasttransaction as TronLink does), deposit addresses sweeping. What java-tron does and
// this models:
//   - txID = sha256(raw_data); the one signature must recover to owner_address (else SIGERROR);
//   - expiration must lie in (head block time, head block time + 24 h] (else TRANSACTION_EXPIRATION_ERROR);
//   - ref_block_bytes / ref_block_hash must name a block of this chain (else TAPOS_ERROR);
//   - a txID already seen answers DUP_TRANSACTION_ERROR;
//   - an account exists only once it received TRX; one that does not exist cannot send (CONTRACT_VALIDATE_ERROR);
//     a TransferContract to a new account creates it and costs the sender getCreateNewAccountFeeInSystemContract
//     (1 TRX) plus, unless its staked bandwidth covers the bytes, getCreateAccountFee (0.1 TRX) instead of bandwidth;
//   - bandwidth: the whole transaction from staked (own + delegated) or free (600/day) bandwidth, else burned at
//     getTransactionFee sun/byte, else BANDWITH_ERROR;
//   - Stake 2.0 (resources.ts): freezebalancev2, delegateresource, undelegateresource; energy and bandwidth limits
//     from stake; delegated energy usable by the receiver;
//   - energy: the call may use min(staked energy left + balance / getEnergyFee, fee_limit / getEnergyFee) (java-tron's
//     energy limit with fee_limit); staked energy first, then TRX burned at getEnergyFee; when that cannot cover the
//     call the receipt is OUT_OF_ENERGY, all of it is consumed (fee_limit-bounded TRX burned) and nothing moves;
//   - a reverting call gives a REVERT receipt. Tests can force the next receipt to OUT_OF_ENERGY or REVERT.
// Not modelled: the pending pool (every accepted transaction is mined at once), resource recovery over 24 h
// (`recoverAll()` stands for a day), dynamic energy penalties, multi-signature permissions, unfreezing. Energy is
// Anvil gas minus the 21000 intrinsic gas.

export interface StoredTx {
  txId: string;
  rawDataHex: string;
  /** The TriggerSmartContract, or null for a system contract (then `system`). */
  raw: TriggerRawData | null;
  system: SystemRawData | null;
  signatures: string[];
  contractRet: string;
  blockNumber: bigint;
  blockTimeMs: bigint;
  info: Record<string, unknown>;
}

export type ForcedResult = 'OUT_OF_ENERGY' | 'REVERT';

export interface HeadBlock {
  number: bigint;
  timeMs: bigint;
  blockId: string;
  parentId: string;
}

export type Rpc = <T>(method: string, params?: unknown[]) => Promise<T>;

export const TRANSFER_SELECTOR = id('transfer(address,uint256)').slice(2, 10);
const hexUtf8 = (s: string) => Buffer.from(s, 'utf8').toString('hex');

export class FakeTronChain {
  readonly accounts = new Map<string, FakeAccount>();
  /**
   * Anvil's transaction hash of each contract call the fake executed → `0x` + its TRON txID. On java-tron the
   * JSON-RPC names a transaction by its txID; here the call runs as an Anvil transaction with another hash, so the
   * fake's JSON-RPC endpoint (`/jsonrpc`) rewrites one into the other (see server.ts).
   */
  readonly evmToTronHash = new Map<string, string>();
  readonly tronToEvmHash = new Map<string, string>();
  readonly txs = new Map<string, StoredTx>();
  readonly forced: ForcedResult[] = [];
  /** Test knob (server's refuseBroadcasts): while set, every broadcast is refused (BANDWITH_ERROR), counted here. */
  refuseAll = false;
  refusedCount = 0;
  readonly resources = new ResourceBook(this.accounts);
  /** getEnergyFee: sun per energy unit. */
  energyPriceSun = 100n;
  /** getTransactionFee: sun per bandwidth byte. */
  bandwidthPriceSun = 1000n;
  /** getCreateAccountFee: burned instead of bandwidth by a transaction creating an account, without staked bandwidth. */
  createAccountFeeSun = 100_000n;
  /** getCreateNewAccountFeeInSystemContract: burned by a TransferContract creating its recipient. */
  createNewAccountFeeSun = 1_000_000n;
  /** Whether /wallet/estimateenergy is enabled (java-tron: vm.estimateEnergy = true). */
  estimateEnergyEnabled = true;
  expirationMs = 60_000n;
  solidifyDepth: bigint;
  /** Transactions executed on Anvil (not counting refused or forced-failure ones). */
  executed = 0;

  constructor(
    readonly rpc: Rpc,
    solidifyDepth: number,
  ) {
    this.solidifyDepth = BigInt(solidifyDepth);
  }

  account(address: string): FakeAccount | undefined {
    return this.accounts.get(address);
  }

  /**
   * TRX balances by block, for the solidity API: each account's balance after every block that changed it (recorded
   * after each executed transaction, at its block, and by `setTrx`, at the head block). Resources are not versioned.
   */
  readonly #trxHistory = new Map<string, Array<{ block: bigint; sun: bigint }>>();

  /** The TRX balance (sun) of `address` in the state of block `height`; undefined when it did not exist yet. */
  trxAt(address: string, height: bigint): bigint | undefined {
    let found: bigint | undefined;
    for (const v of this.#trxHistory.get(address) ?? []) if (v.block <= height) found = v.sun;
    return found;
  }

  /** Records every account whose balance changed since its last record, as of `block`. */
  #recordTrx(block: bigint): void {
    for (const [address, a] of this.accounts) {
      const list = this.#trxHistory.get(address) ?? [];
      const last = list[list.length - 1];
      if (last && last.sun === a.balanceSun) continue;
      if (last && last.block === block) last.sun = a.balanceSun;
      else list.push({ block, sun: a.balanceSun });
      this.#trxHistory.set(address, list);
    }
  }

  /** Test-control writes not yet given a block (setTrx): the next head read records them at that head. */
  #unrecordedTrx = false;

  /**
   * Activates the account if needed and sets its TRX balance. Test control: the change becomes part of the state of
   * the head block as next read (never earlier than the block it was made at, so never solidified too early).
   */
  setTrx(address: string, sun: bigint): void {
    const a = this.accounts.get(address) ?? newAccount();
    a.balanceSun = sun;
    this.accounts.set(address, a);
    this.#unrecordedTrx = true;
  }

  /** Test knob: grants resources directly (as if staked or rented), replacing earlier grants. */
  setStaked(address: string, r: { energy?: bigint; bandwidth?: bigint }): void {
    const a = this.accounts.get(address);
    if (!a) throw new Error('activate the account first (setTrx)');
    if (r.energy !== undefined) a.extraEnergy = r.energy;
    if (r.bandwidth !== undefined) a.extraNet = r.bandwidth;
  }

  /** A day passes for resources: every account's energy and bandwidth usage recovers (java-tron: over 24 h). */
  recoverAll(): void {
    for (const a of this.accounts.values()) {
      a.energyUsed = 0n;
      a.netUsed = 0n;
      a.freeNetUsed = 0n;
    }
  }

  /**
   * Bandwidth of a transaction of `bytes` from `a`: staked first, then (unless it creates an account) free, else burned.
   * Returns the TRX burned; throws BANDWITH_ERROR when the account cannot pay.
   */
  chargeBandwidth(a: FakeAccount, bytes: bigint, createsAccount: boolean): { netFee: bigint; netUsage: bigint } {
    const staked = this.resources.netLimit(a) - a.netUsed;
    if (staked >= bytes) {
      a.netUsed += bytes;
      return { netFee: 0n, netUsage: bytes };
    }
    if (createsAccount) {
      if (a.balanceSun < this.createAccountFeeSun) throw new BroadcastRefusal('BANDWITH_ERROR', 'Account resource insufficient error.');
      a.balanceSun -= this.createAccountFeeSun;
      return { netFee: this.createAccountFeeSun, netUsage: 0n };
    }
    if (FREE_NET_LIMIT - a.freeNetUsed >= bytes) {
      a.freeNetUsed += bytes;
      return { netFee: 0n, netUsage: bytes };
    }
    const fee = bytes * this.bandwidthPriceSun;
    if (a.balanceSun < fee) throw new BroadcastRefusal('BANDWITH_ERROR', 'Account resource insufficient error.');
    a.balanceSun -= fee;
    return { netFee: fee, netUsage: 0n };
  }

  async block(n: bigint | 'latest'): Promise<HeadBlock | null> {
    const b = await this.rpc<{ number: string; hash: string; parentHash: string; timestamp: string } | null>('eth_getBlockByNumber', [
      n === 'latest' ? 'latest' : `0x${n.toString(16)}`,
      false,
    ]);
    if (!b) return null;
    const number = BigInt(b.number);
    return {
      number,
      timeMs: BigInt(b.timestamp) * 1000n,
      blockId: blockIdOf(number, b.hash),
      parentId: number > 0n ? blockIdOf(number - 1n, b.parentHash) : '0'.repeat(64),
    };
  }

  async head(): Promise<HeadBlock> {
    const head = (await this.block('latest'))!;
    if (this.#unrecordedTrx) {
      this.#unrecordedTrx = false;
      this.#recordTrx(head.number);
    }
    return head;
  }

  async solidHeight(): Promise<bigint> {
    const h = (await this.head()).number - this.solidifyDepth;
    return h > 0n ? h : 0n;
  }

  /** The unsigned transaction java-tron's triggersmartcontract returns (reference block = head). */
  async buildTrigger(p: { owner: string; contract: string; data: string; feeLimit: bigint; callValue: bigint }) {
    const head = await this.head();
    const raw = {
      refBlockBytes: (head.number & 0xffffn).toString(16).padStart(4, '0'),
      refBlockHash: head.blockId.slice(16, 32),
      expiration: head.timeMs + this.expirationMs,
      timestamp: BigInt(Date.now()),
      feeLimit: p.feeLimit,
      owner: p.owner,
      contract: p.contract,
      callValue: p.callValue,
      data: p.data,
    };
    const rawDataHex = encodeTriggerRawData(raw);
    return { txID: txIdOf(rawDataHex), raw_data: rawJson(raw), raw_data_hex: rawDataHex, visible: false };
  }

  /** The unsigned transaction java-tron's createtransaction / delegateresource / ... returns (reference block = head). */
  async buildSystem(v: SystemContractValue) {
    const head = await this.head();
    const raw = {
      ...v,
      refBlockBytes: (head.number & 0xffffn).toString(16).padStart(4, '0'),
      refBlockHash: head.blockId.slice(16, 32),
      expiration: head.timeMs + this.expirationMs,
      timestamp: BigInt(Date.now()),
    };
    const rawDataHex = encodeSystemRawData(raw);
    return { visible: false, txID: txIdOf(rawDataHex), raw_data: systemRawJson(raw), raw_data_hex: rawDataHex };
  }

  /** eth_call + estimate as triggerconstantcontract; `energy` is execution gas without the intrinsic 21000. */
  /** A constant call at the head, or at `atHeight` (the solidity API's view: solidified state only). */
  async simulate(
    owner: string,
    contract: string,
    data: string,
    atHeight?: bigint,
  ): Promise<{ ok: boolean; result: string; energy: bigint }> {
    const call = { from: tronToEvmHex(owner), to: tronToEvmHex(contract), data: `0x${data}` };
    try {
      const result = await this.rpc<string>('eth_call', [call, atHeight === undefined ? 'latest' : `0x${atHeight.toString(16)}`]);
      const gas = BigInt(await this.rpc<string>('eth_estimateGas', [call]));
      return { ok: true, result: result.slice(2), energy: gas > 21000n ? gas - 21000n : 1n };
    } catch (e) {
      const m = /0x[0-9a-f]*/i.exec((e as Error).message);
      return { ok: false, result: m ? m[0].slice(2) : '', energy: 0n };
    }
  }

  #applying: Promise<unknown> = Promise.resolve();

  /**
   * Validates and executes a signed transaction; throws BroadcastRefusal with java-tron's response code. Like a node,
   * applies transactions one at a time: two broadcasts of the same bytes racing each other (a client retrying after
   * a timeout) execute once, the second answering DUP_TRANSACTION_ERROR.
   */
  broadcast(rawDataHex: string, signatures: string[], sizeBytes: number): Promise<StoredTx> {
    const run = this.#applying.then(async () => {
      const stored = await this.#apply(rawDataHex, signatures, sizeBytes);
      this.#recordTrx(stored.blockNumber);
      return stored;
    });
    this.#applying = run.catch(() => undefined);
    return run;
  }

  /**
   * Runs `f` with no broadcast applying meanwhile (queued like one): the simulator reorgs the node under the fake
   * inside it, after checking with `holdsFrom` that no block it replaces holds anything the fake executed.
   */
  exclusive<T>(f: () => Promise<T>): Promise<T> {
    const run = this.#applying.then(f);
    this.#applying = run.catch(() => undefined);
    return run;
  }

  /** Whether a transaction the fake executed (or the block it mined for a failed one) is at `height` or above. */
  holdsFrom(height: bigint): boolean {
    for (const t of this.txs.values()) if (t.blockNumber >= height) return true;
    return false;
  }

  async #apply(rawDataHex: string, signatures: string[], sizeBytes: number): Promise<StoredTx> {
    const txId = txIdOf(rawDataHex);
    if (this.txs.has(txId)) throw new BroadcastRefusal('DUP_TRANSACTION_ERROR', 'Dup transaction.');
    let raw: TriggerRawData | null = null;
    let system: SystemRawData | null = null;
    try {
      if (contractTypeOf(rawDataHex) === TRIGGER_SMART_CONTRACT_TYPE) raw = decodeTriggerRawData(rawDataHex);
      else system = decodeSystemRawData(rawDataHex);
    } catch (e) {
      throw new BroadcastRefusal(
        'OTHER_ERROR',
        `fake java-tron handles TriggerSmartContract, TransferContract, FreezeBalanceV2, (Un)DelegateResource only: ${(e as Error).message}`,
      );
    }
    const common = (raw ?? system)!;
    if (signatures.length !== 1 || !/^[0-9a-f]{130}$/i.test(signatures[0]!))
      throw new BroadcastRefusal('SIGERROR', 'Validate signature error: one 65-byte signature expected');
    const sig = signatures[0]!;
    let v = parseInt(sig.slice(128, 130), 16);
    if (v >= 27) v -= 27;
    let signer: string;
    try {
      signer = evmHexToTron(
        recoverAddress(getBytes(`0x${txId}`), Signature.from({ r: `0x${sig.slice(0, 64)}`, s: `0x${sig.slice(64, 128)}`, v: 27 + v })),
      );
    } catch {
      throw new BroadcastRefusal('SIGERROR', 'Validate signature error: signature does not recover');
    }
    if (signer !== common.owner)
      throw new BroadcastRefusal(
        'SIGERROR',
        `Validate signature error: ${txId} is signed by ${signer} but it is not contained of permission.`,
      );

    const head = await this.head();
    if (common.expiration <= head.timeMs)
      throw new BroadcastRefusal(
        'TRANSACTION_EXPIRATION_ERROR',
        `Transaction expiration, transaction expiration time is ${common.expiration}, but head block time is ${head.timeMs}`,
      );
    if (common.expiration > head.timeMs + 86_400_000n)
      throw new BroadcastRefusal('TRANSACTION_EXPIRATION_ERROR', 'Transaction expiration time is too far in the future');
    const refLow = BigInt(parseInt(common.refBlockBytes, 16));
    const refNumber = head.number - ((head.number - refLow) & 0xffffn);
    const ref = await this.block(refNumber);
    if (!ref || ref.blockId.slice(16, 32) !== common.refBlockHash)
      throw new BroadcastRefusal('TAPOS_ERROR', `Tapos check error: reference block ${refNumber} not in this chain`);

    const bytes = BigInt(sizeBytes + 64);
    if (system) {
      const out = executeSystemContract(this, system, bytes);
      const blockNumber = await this.#mineEmpty();
      const block = (await this.block(blockNumber))!;
      const info: Record<string, unknown> = {
        id: txId,
        blockNumber: Number(blockNumber),
        blockTimeStamp: Number(block.timeMs),
        contractResult: [''],
        receipt: out.netFee > 0n ? { net_fee: Number(out.netFee) } : { net_usage: Number(out.netUsage) },
      };
      if (out.fee > 0n) info.fee = Number(out.fee);
      const stored: StoredTx = {
        txId,
        rawDataHex,
        raw: null,
        system,
        signatures,
        contractRet: 'SUCCESS',
        blockNumber,
        blockTimeMs: block.timeMs,
        info,
      };
      this.txs.set(txId, stored);
      return stored;
    }
    if (!raw) throw new BroadcastRefusal('OTHER_ERROR', 'no contract');
    const acct = this.accounts.get(raw.owner);
    if (!acct) throw new BroadcastRefusal('CONTRACT_VALIDATE_ERROR', 'Validate TriggerSmartContract error, no OwnerAccount.');
    const code = await this.rpc<string>('eth_getCode', [tronToEvmHex(raw.contract), 'latest']);
    if (code === '0x') throw new BroadcastRefusal('CONTRACT_VALIDATE_ERROR', 'No contract or not a smart contract');
    if (raw.feeLimit > 15_000_000_000n) throw new BroadcastRefusal('CONTRACT_VALIDATE_ERROR', 'feeLimit must be >= 0 and <= 15000000000');

    // Bandwidth: the whole transaction from one source, or burned.
    const { netFee } = this.chargeBandwidth(acct, bytes, false);

    // Energy: staked (own + delegated) first, then TRX burned; fee_limit bounds the whole call's energy.
    const limit = this.resources.energyLimit(acct);
    const stakedLeft = limit > acct.energyUsed ? limit - acct.energyUsed : 0n;
    const energyCap = minBig(stakedLeft + acct.balanceSun / this.energyPriceSun, raw.feeLimit / this.energyPriceSun);
    const sim = await this.simulate(raw.owner, raw.contract, raw.data);
    const forced = this.forced.shift();
    let result: string;
    let used: bigint;
    let logs: Array<{ address: string; topics: string[]; data: string }> = [];
    let blockNumber: bigint;
    let resMessage: string | undefined;
    if (forced === 'OUT_OF_ENERGY' || (sim.ok && sim.energy > energyCap)) {
      result = 'OUT_OF_ENERGY';
      used = energyCap;
      resMessage = `Not enough energy for 'SSTORE' operation executing: curInvokeEnergyLimit[${energyCap}], curOpEnergy[${sim.energy}], usedEnergy[${energyCap}]`;
      blockNumber = await this.#mineEmpty();
    } else if (forced === 'REVERT' || !sim.ok) {
      result = 'REVERT';
      used = minBig(sim.energy || 2_000n, energyCap);
      resMessage = 'REVERT opcode executed';
      blockNumber = await this.#mineEmpty();
    } else {
      const from = tronToEvmHex(raw.owner);
      await this.rpc('anvil_impersonateAccount', [from]);
      await this.rpc('anvil_setBalance', [from, '0x56bc75e2d63100000']);
      const hash = await this.rpc<string>('eth_sendTransaction', [
        { from, to: tronToEvmHex(raw.contract), data: `0x${raw.data}`, gas: '0x7a120' },
      ]);
      await this.rpc('anvil_stopImpersonatingAccount', [from]);
      this.evmToTronHash.set(hash.toLowerCase(), `0x${txId}`);
      this.tronToEvmHash.set(`0x${txId}`, hash.toLowerCase());
      const receipt = await this.#receipt(hash);
      blockNumber = BigInt(receipt.blockNumber);
      const gas = BigInt(receipt.gasUsed);
      used = gas > 21000n ? gas - 21000n : 1n;
      if (BigInt(receipt.status) === 1n) {
        result = 'SUCCESS';
        logs = receipt.logs.map((l) => ({
          address: l.address.slice(2).toLowerCase(),
          topics: l.topics.map((t) => t.slice(2)),
          data: l.data.slice(2),
        }));
        this.executed++;
      } else {
        result = 'REVERT';
        resMessage = 'REVERT opcode executed';
      }
    }
    const fromStake = minBig(used, stakedLeft);
    acct.energyUsed += fromStake;
    const energyFee = (used - fromStake) * this.energyPriceSun;
    acct.balanceSun -= energyFee;
    const block = (await this.block(blockNumber))!;
    const info: Record<string, unknown> = {
      id: txId,
      blockNumber: Number(blockNumber),
      blockTimeStamp: Number(block.timeMs),
      // No return data when the TVM halts out of energy; a revert's data otherwise (empty without a reason).
      contractResult: [result === 'SUCCESS' || result === 'OUT_OF_ENERGY' ? '' : sim.result],
      contract_address: raw.contract,
      receipt: {
        ...(fromStake > 0n ? { energy_usage: Number(fromStake) } : {}),
        ...(energyFee > 0n ? { energy_fee: Number(energyFee) } : {}),
        energy_usage_total: Number(used),
        ...(netFee > 0n ? { net_fee: Number(netFee) } : { net_usage: Number(bytes) }),
        result,
      },
      ...(logs.length ? { log: logs } : {}),
    };
    if (energyFee + netFee > 0n) info.fee = Number(energyFee + netFee);
    if (result !== 'SUCCESS') {
      info.result = 'FAILED';
      info.resMessage = hexUtf8(resMessage ?? result);
    }
    const stored: StoredTx = {
      txId,
      rawDataHex,
      raw,
      system: null,
      signatures,
      contractRet: result,
      blockNumber,
      blockTimeMs: block.timeMs,
      info,
    };
    this.txs.set(txId, stored);
    return stored;
  }

  /** Anvil's automine can answer eth_sendTransaction before the block is sealed: wait for the receipt. */
  async #receipt(
    hash: string,
  ): Promise<{ status: string; blockNumber: string; gasUsed: string; logs: Array<{ address: string; topics: string[]; data: string }> }> {
    for (let i = 0; ; i++) {
      const r = await this.rpc<{
        status: string;
        blockNumber: string;
        gasUsed: string;
        logs: Array<{ address: string; topics: string[]; data: string }>;
      } | null>('eth_getTransactionReceipt', [hash]);
      if (r) return r;
      if (i > 400) throw new Error(`no receipt for ${hash}`);
      await new Promise((res) => setTimeout(res, 25));
    }
  }

  async #mineEmpty(): Promise<bigint> {
    await this.rpc('anvil_mine', ['0x1']);
    return (await this.head()).number;
  }

  txJson(t: StoredTx) {
    return {
      ret: [{ contractRet: t.contractRet }],
      signature: t.signatures,
      txID: t.txId,
      raw_data: t.raw ? rawJson(t.raw) : systemRawJson(t.system!),
      raw_data_hex: t.rawDataHex,
    };
  }
}

function blockIdOf(number: bigint, hash: string): string {
  return number.toString(16).padStart(16, '0') + hash.slice(2).toLowerCase().slice(16);
}

function rawJson(r: Omit<TriggerRawData, 'contractType' | 'typeUrl' | 'contractCount'>) {
  const value: Record<string, unknown> = { data: r.data, owner_address: r.owner, contract_address: r.contract };
  if (r.callValue > 0n) value.call_value = Number(r.callValue);
  return {
    contract: [{ parameter: { value, type_url: 'type.googleapis.com/protocol.TriggerSmartContract' }, type: 'TriggerSmartContract' }],
    ref_block_bytes: r.refBlockBytes,
    ref_block_hash: r.refBlockHash,
    expiration: Number(r.expiration),
    fee_limit: Number(r.feeLimit),
    timestamp: Number(r.timestamp),
  };
}

function systemRawJson(r: SystemContractValue & Pick<SystemRawData, 'refBlockBytes' | 'refBlockHash' | 'expiration' | 'timestamp'>) {
  return {
    contract: [{ parameter: { value: systemValueJson(r), type_url: `type.googleapis.com/protocol.${r.name}` }, type: r.name }],
    ref_block_bytes: r.refBlockBytes,
    ref_block_hash: r.refBlockHash,
    expiration: Number(r.expiration),
    timestamp: Number(r.timestamp),
  };
}

const minBig = (a: bigint, b: bigint) => (a < b ? a : b);
