import { Signature, getBytes, id, recoverAddress } from 'ethers';
import { evmHexToTron, tronToEvmHex } from '../../../chains/tron/address.js';
import { decodeTriggerRawData, encodeTriggerRawData, txIdOf, type TriggerRawData } from '../../../chains/tron/protobuf.js';

// THIS IS A FAKE. State and rules behind the fake java-tron HTTP wallet API (server.ts): blocks are Anvil's blocks,
// token contracts are Anvil contracts at the same 20 bytes, and an accepted TriggerSmartContract is executed on Anvil
// by impersonating its owner, so balances and Transfer events are real. The owner is any activated account: hot
// wallets sending transfer / transferFrom (subscription charges), customers' wallets sending approve (tronweb's
// trx.sign, then /wallet/broadcasttransaction as TronLink does). What java-tron does and this models:
//   - txID = sha256(raw_data); the one signature must recover to owner_address (else SIGERROR);
//   - expiration must lie in (head block time, head block time + 24 h] (else TRANSACTION_EXPIRATION_ERROR);
//   - ref_block_bytes / ref_block_hash must name a block of this chain (else TAPOS_ERROR);
//   - a txID already seen answers DUP_TRANSACTION_ERROR;
//   - bandwidth: the whole transaction from free (600/day) or staked bandwidth, else burned at 1000 sun/byte, else
//     BANDWITH_ERROR; an account that never received TRX cannot send (CONTRACT_VALIDATE_ERROR);
//   - energy: staked energy first, then TRX burned at getEnergyFee, capped by fee_limit; when that cannot cover the
//     call the receipt is OUT_OF_ENERGY, fee_limit-bounded TRX is burned and nothing moves;
//   - a reverting call gives a REVERT receipt. Tests can force the next receipt to OUT_OF_ENERGY or REVERT.
// Not modelled: the pending pool (every accepted transaction is mined at once), resource recovery over 24 h,
// dynamic energy penalties, multi-signature permissions. Energy is Anvil gas minus the 21000 intrinsic gas.

export interface FakeAccount {
  balanceSun: bigint;
  energyLimit: bigint;
  energyUsed: bigint;
  netLimit: bigint;
  netUsed: bigint;
  freeNetUsed: bigint;
  createTime: number;
}

export interface StoredTx {
  txId: string;
  rawDataHex: string;
  raw: TriggerRawData;
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

export const FREE_NET_LIMIT = 600n;
export const TRANSFER_SELECTOR = id('transfer(address,uint256)').slice(2, 10);
const hexUtf8 = (s: string) => Buffer.from(s, 'utf8').toString('hex');

export class BroadcastRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class FakeTronChain {
  readonly accounts = new Map<string, FakeAccount>();
  readonly txs = new Map<string, StoredTx>();
  readonly forced: ForcedResult[] = [];
  energyPriceSun = 100n;
  bandwidthPriceSun = 1000n;
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

  /** Activates the account if needed and sets its TRX balance. */
  setTrx(address: string, sun: bigint): void {
    const a = this.accounts.get(address) ?? {
      balanceSun: 0n,
      energyLimit: 0n,
      energyUsed: 0n,
      netLimit: 0n,
      netUsed: 0n,
      freeNetUsed: 0n,
      createTime: Date.now(),
    };
    a.balanceSun = sun;
    this.accounts.set(address, a);
  }

  setStaked(address: string, r: { energy?: bigint; bandwidth?: bigint }): void {
    const a = this.accounts.get(address);
    if (!a) throw new Error('activate the account first (setTrx)');
    if (r.energy !== undefined) a.energyLimit = r.energy;
    if (r.bandwidth !== undefined) a.netLimit = r.bandwidth;
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
    return (await this.block('latest'))!;
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
    const run = this.#applying.then(() => this.#apply(rawDataHex, signatures, sizeBytes));
    this.#applying = run.catch(() => undefined);
    return run;
  }

  async #apply(rawDataHex: string, signatures: string[], sizeBytes: number): Promise<StoredTx> {
    const txId = txIdOf(rawDataHex);
    if (this.txs.has(txId)) throw new BroadcastRefusal('DUP_TRANSACTION_ERROR', 'Dup transaction.');
    let raw: TriggerRawData;
    try {
      raw = decodeTriggerRawData(rawDataHex);
    } catch (e) {
      throw new BroadcastRefusal('OTHER_ERROR', `fake java-tron handles TriggerSmartContract only: ${(e as Error).message}`);
    }
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
    if (signer !== raw.owner)
      throw new BroadcastRefusal(
        'SIGERROR',
        `Validate signature error: ${txId} is signed by ${signer} but it is not contained of permission.`,
      );

    const head = await this.head();
    if (raw.expiration <= head.timeMs)
      throw new BroadcastRefusal(
        'TRANSACTION_EXPIRATION_ERROR',
        `Transaction expiration, transaction expiration time is ${raw.expiration}, but head block time is ${head.timeMs}`,
      );
    if (raw.expiration > head.timeMs + 86_400_000n)
      throw new BroadcastRefusal('TRANSACTION_EXPIRATION_ERROR', 'Transaction expiration time is too far in the future');
    const refLow = BigInt(parseInt(raw.refBlockBytes, 16));
    const refNumber = head.number - ((head.number - refLow) & 0xffffn);
    const ref = await this.block(refNumber);
    if (!ref || ref.blockId.slice(16, 32) !== raw.refBlockHash)
      throw new BroadcastRefusal('TAPOS_ERROR', `Tapos check error: reference block ${refNumber} not in this chain`);

    const acct = this.accounts.get(raw.owner);
    if (!acct) throw new BroadcastRefusal('CONTRACT_VALIDATE_ERROR', 'Validate TriggerSmartContract error, no OwnerAccount.');
    const code = await this.rpc<string>('eth_getCode', [tronToEvmHex(raw.contract), 'latest']);
    if (code === '0x') throw new BroadcastRefusal('CONTRACT_VALIDATE_ERROR', 'No contract or not a smart contract');
    if (raw.feeLimit > 15_000_000_000n) throw new BroadcastRefusal('CONTRACT_VALIDATE_ERROR', 'feeLimit must be >= 0 and <= 15000000000');

    // Bandwidth: the whole transaction from one source, or burned.
    const bytes = BigInt(sizeBytes + 64);
    let netFee = 0n;
    if (acct.netLimit - acct.netUsed >= bytes) acct.netUsed += bytes;
    else if (FREE_NET_LIMIT - acct.freeNetUsed >= bytes) acct.freeNetUsed += bytes;
    else if (acct.balanceSun >= bytes * this.bandwidthPriceSun) netFee = bytes * this.bandwidthPriceSun;
    else throw new BroadcastRefusal('BANDWITH_ERROR', 'Account resource insufficient error.');
    acct.balanceSun -= netFee;

    // Energy: staked first, then TRX burned, never more than fee_limit.
    const stakedLeft = acct.energyLimit > acct.energyUsed ? acct.energyLimit - acct.energyUsed : 0n;
    const burnable = minBig(acct.balanceSun, raw.feeLimit) / this.energyPriceSun;
    const energyCap = stakedLeft + burnable;
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
      contractResult: [result === 'SUCCESS' ? '' : sim.result],
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
    const stored: StoredTx = { txId, rawDataHex, raw, signatures, contractRet: result, blockNumber, blockTimeMs: block.timeMs, info };
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
      raw_data: rawJson(t.raw),
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

const minBig = (a: bigint, b: bigint) => (a < b ? a : b);
