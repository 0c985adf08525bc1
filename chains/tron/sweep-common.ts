import {
  TransferRejectedError,
  type SweepPlan,
  type SweepRequest,
  type SweepSource,
  type SweepStep,
  type SweepStepReceipt,
  type TokenContract,
  type UnsignedTransfer,
} from '../types.js';
import { ERC20 } from '../evm/erc20-abi.js';
import { RpcError } from '../evm/rpc-errors.js';
import { normalizeTronAddress, tronBase58, tronToEvmHex } from './address.js';
import { txIdOf } from './protobuf.js';
import { decodeSystemRawData, sunJson, type SystemContractName } from './system-contracts.js';
import type { TronTokenSender, TronTxBody } from './token-sender.js';
import {
  decodeNodeMessage,
  int64,
  type AccountJson,
  type AccountResourceJson,
  type TransactionInfo,
  type TransactionJson,
  type TriggerReply,
} from './wallet-api.js';

// What both TRON sweep methods share: the chain's prices (getchainparameters), an account's resources
// (getaccount + getaccountresource), the energy a transfer needs (estimateenergy, else triggerconstantcontract's
// energy_used), the Stake 2.0 arithmetic, building a sweep's system transactions through the wallet API, and reading
// what a landed step moved. docs/treasury-tron.md explains the numbers.

export const TRX = 1_000_000n;
/** A TRC-20 transfer's bandwidth: ~345 bytes (raw data, signature, protobuf overhead java-tron counts); rounded up. */
export const TRANSFER_BYTES = 350n;
/** A TRX transfer or (un)delegation: ~270 bytes; rounded up. */
export const SYSTEM_TX_BYTES = 300n;
/** TRX sent to activate an account: any amount creates it; the sender pays the creation fees on top. */
export const ACTIVATION_SUN = 1n;

export interface SweepChainParams {
  /** getEnergyFee: sun per energy unit burned. */
  energySun: bigint;
  /** getTransactionFee: sun per bandwidth byte burned. */
  bandwidthSun: bigint;
  /** getCreateAccountFee: burned instead of bandwidth by a transaction creating an account, without staked bandwidth. */
  createAccountFeeSun: bigint;
  /** getCreateNewAccountFeeInSystemContract: burned by a TRX transfer creating its recipient. */
  createNewAccountFeeSun: bigint;
}

export interface TronAccountState {
  address: string;
  exists: boolean;
  balanceSun: bigint;
  freeNetLeft: bigint;
  stakedNetLeft: bigint;
  energyLeft: bigint;
  /** Network totals: energy a day, whole TRX staked for energy (the price of energy in stake). */
  totalEnergyLimit: bigint;
  totalEnergyWeight: bigint;
}

const pos = (v: bigint) => (v > 0n ? v : 0n);

export async function sweepChainParams(sender: TronTokenSender): Promise<SweepChainParams> {
  const r = await sender.api.full<{ chainParameter?: Array<{ key: string; value?: number }> }>('wallet/getchainparameters', {});
  const get = (k: string) => int64(r.chainParameter?.find((p) => p.key === k)?.value);
  const p = {
    energySun: get('getEnergyFee'),
    bandwidthSun: get('getTransactionFee'),
    createAccountFeeSun: get('getCreateAccountFee'),
    createNewAccountFeeSun: get('getCreateNewAccountFeeInSystemContract'),
  };
  if (p.energySun <= 0n || p.bandwidthSun <= 0n)
    throw new RpcError('bad_response', 'getchainparameters lacks getEnergyFee / getTransactionFee');
  return p;
}

export async function accountState(sender: TronTokenSender, address: string): Promise<TronAccountState> {
  const [a, r] = await Promise.all([
    sender.api.full<AccountJson>('wallet/getaccount', { address }),
    sender.api.full<AccountResourceJson>('wallet/getaccountresource', { address }),
  ]);
  const exists = a.address !== undefined || a.balance !== undefined || a.create_time !== undefined;
  return {
    address,
    exists,
    balanceSun: int64(a.balance),
    freeNetLeft: exists ? pos(int64(r.freeNetLimit) - int64(r.freeNetUsed)) : 0n,
    stakedNetLeft: pos(int64(r.NetLimit) - int64(r.NetUsed)),
    energyLeft: pos(int64(r.EnergyLimit) - int64(r.EnergyUsed)),
    totalEnergyLimit: int64(r.TotalEnergyLimit),
    totalEnergyWeight: int64(r.TotalEnergyWeight),
  };
}

/** Stake 2.0: frozen TRX (sun) whose delegation gives at least `energy`: whole TRX, at least 1 TRX (java-tron's minimum). */
export function stakeForEnergy(energy: bigint, totalEnergyLimit: bigint, totalEnergyWeight: bigint): bigint {
  if (totalEnergyLimit <= 0n || totalEnergyWeight <= 0n)
    throw new RpcError('bad_response', 'getaccountresource lacks TotalEnergyLimit / TotalEnergyWeight');
  const trx = (energy * totalEnergyWeight + totalEnergyLimit - 1n) / totalEnergyLimit;
  return (trx > 1n ? trx : 1n) * TRX;
}

/** Energy a day that `sun` frozen yields: (sun / 1 TRX) × TotalEnergyLimit / TotalEnergyWeight. */
export function energyOfStake(sun: bigint, totalEnergyLimit: bigint, totalEnergyWeight: bigint): bigint {
  return totalEnergyWeight > 0n ? ((sun / TRX) * totalEnergyLimit) / totalEnergyWeight : 0n;
}

/** Stake 2.0: frozen sun of `resource` the account can still delegate (getcandelegatedmaxsize). */
export async function delegatableSun(sender: TronTokenSender, owner: string): Promise<bigint> {
  const r = await sender.api.full<{ max_size?: number | string; Error?: string }>('wallet/getcandelegatedmaxsize', {
    owner_address: owner,
    type: 1,
  });
  if (r.Error) throw new RpcError('rpc_error', `getcandelegatedmaxsize: ${r.Error}`);
  return int64(r.max_size);
}

/**
 * Bandwidth one wallet spends over several transactions of a sweep: staked first, then the free daily allowance, else
 * burned (TRX). A transaction creating an account cannot use free bandwidth: it burns getCreateAccountFee instead.
 */
export class BandwidthBudget {
  #staked: bigint;
  #free: bigint;
  constructor(
    s: Pick<TronAccountState, 'stakedNetLeft' | 'freeNetLeft'>,
    private readonly p: SweepChainParams,
  ) {
    this.#staked = s.stakedNetLeft;
    this.#free = s.freeNetLeft;
  }
  /** A budget that starts where this one is: taken from as a trial, kept only if the caller adopts it. */
  copy(): BandwidthBudget {
    const c = new BandwidthBudget({ stakedNetLeft: this.#staked, freeNetLeft: this.#free }, this.p);
    return c;
  }
  /** TRX (sun) the next transaction of `bytes` burns for bandwidth. */
  take(bytes: bigint, createsAccount = false): bigint {
    if (this.#staked >= bytes) {
      this.#staked -= bytes;
      return 0n;
    }
    if (createsAccount) return this.p.createAccountFeeSun;
    if (this.#free >= bytes) {
      this.#free -= bytes;
      return 0n;
    }
    return bytes * this.p.bandwidthSun;
  }
}

/**
 * Energy `transfer(to, amount)` from `owner` needs: /wallet/estimateenergy where the node enables it, else the dry run's
 * energy_used (triggerconstantcontract). A refusal (revert) is a TransferRejectedError: the planner skips the address.
 */
export async function estimateTransferEnergy(
  sender: TronTokenSender,
  token: TokenContract,
  owner: string,
  to: string,
  amount: bigint,
): Promise<bigint> {
  const body = {
    owner_address: owner,
    contract_address: token.address,
    data: ERC20.encodeFunctionData('transfer', [tronToEvmHex(to), amount]).slice(2),
    call_value: 0,
  };
  const est = await sender.api.full<{ result?: { result?: boolean; code?: string; message?: string }; energy_required?: number | string }>(
    'wallet/estimateenergy',
    body,
  );
  if (est.result?.result === true && int64(est.energy_required) > 0n) return int64(est.energy_required);
  const dry = await sender.api.full<TriggerReply>('wallet/triggerconstantcontract', body);
  if (dry.Error) throw new RpcError('rpc_error', `triggerconstantcontract: ${dry.Error}`);
  const failed = dry.result?.result !== true || dry.transaction?.ret?.some((x) => x.ret === 'FAILED') === true || !!dry.result?.message;
  if (failed) {
    const why = decodeNodeMessage(dry.result?.message) || dry.result?.code || 'FAILED';
    throw new TransferRejectedError('simulation_reverted', `the token refuses transfer from ${tronBase58(owner)} (${why})`);
  }
  return int64(dry.energy_used);
}

/** `energy` with the configured head-room (dynamic energy, state changes before inclusion). */
export function withMargin(energy: bigint, marginPercent: number): bigint {
  return (energy * BigInt(100 + marginPercent) + 99n) / 100n;
}

type BuiltSystem = Exclude<SystemContractName, 'FreezeBalanceV2Contract'>;

/**
 * A sweep's system transaction built by the node (createtransaction, delegateresource, undelegateresource), checked
 * against what was asked before it is handed out; sign() checks it again. null when the node says the step has nothing
 * left to do (`gone` matches its refusal, e.g. the delegation was already taken back).
 */
export async function buildSystemStep(
  sender: TronTokenSender,
  request: SweepRequest,
  step: SweepStep,
  contract: BuiltSystem,
  amount: bigint,
  gone?: RegExp,
): Promise<UnsignedTransfer<TronTxBody> | null> {
  const owner = normalizeTronAddress(step.from.address);
  const to = normalizeTronAddress(step.to);
  if (!owner || !to) throw new TransferRejectedError('invalid', 'sweep step names an address that is not TRON');
  if (amount <= 0n || amount > BigInt(Number.MAX_SAFE_INTEGER))
    throw new TransferRejectedError('invalid', `sweep step amount out of range: ${amount}`);
  const path =
    contract === 'TransferContract'
      ? 'wallet/createtransaction'
      : contract === 'DelegateResourceContract'
        ? 'wallet/delegateresource'
        : 'wallet/undelegateresource';
  const body =
    contract === 'TransferContract'
      ? { owner_address: owner, to_address: to, amount: sunJson(amount) }
      : {
          owner_address: owner,
          receiver_address: to,
          balance: sunJson(amount),
          resource: 'ENERGY',
          ...(contract === 'DelegateResourceContract' ? { lock: false } : {}),
        };
  const tx = await sender.api.full<Partial<TransactionJson> & { Error?: string }>(path, body);
  if (tx.Error) {
    if (gone?.test(tx.Error)) return null;
    if (/balance is not sufficient|less than or equal/i.test(tx.Error)) {
      // The sender (the gas station or the resources account) lacks TRX: fee money an operator adds, named with its
      // address, balance and what this step needs (its value and the fee planned for it).
      const balance = (await accountState(sender, owner)).balanceSun;
      const needed = (contract === 'TransferContract' ? amount : 0n) + step.estimatedFee;
      throw new TransferRejectedError(
        'insufficient_gas',
        `${tronBase58(owner)} holds ${balance} sun, needs ${needed} for the ${step.purpose} step (${path}: ${tx.Error})`,
        undefined,
        { address: owner, balance, needed: needed > balance ? needed : balance + 1n },
      );
    }
    throw new TransferRejectedError('invalid', `${path}: ${tx.Error}`);
  }
  if (!tx.txID || !tx.raw_data_hex || !tx.raw_data) throw new RpcError('bad_response', `${path} returned no transaction`);
  const raw = decodeSystemRawData(tx.raw_data_hex);
  if (
    txIdOf(tx.raw_data_hex.toLowerCase()) !== tx.txID.toLowerCase() ||
    raw.name !== contract ||
    raw.owner !== owner ||
    raw.to !== to ||
    raw.amount !== amount
  )
    throw new RpcError('bad_response', `${path} built another transaction than the one asked for`);
  return {
    network: sender.network,
    request: { from: step.from, to, token: request.token, amount },
    body: {
      transaction: { txID: tx.txID, raw_data: tx.raw_data, raw_data_hex: tx.raw_data_hex },
      energyEstimate: '0',
      feeLimit: '0',
      trxBurnEstimateSun: step.estimatedFee.toString(),
      system: { contract },
    },
  };
}

async function transactionInfo(sender: TronTokenSender, hash: string): Promise<TransactionInfo> {
  const value = hash.replace(/^0x/, '').toLowerCase();
  const info = await sender.api.solidity<TransactionInfo>('walletsolidity/gettransactioninfobyid', { value });
  return info.id ? info : sender.api.full<TransactionInfo>('wallet/gettransactioninfobyid', { value });
}

/** What a succeeded step moved: tokens (transfer), TRX (activate, fund), energy ((un)delegate), and the TRX it burned. */
export async function readSweepStep(
  sender: TronTokenSender,
  hash: string,
  request: SweepRequest,
  step: SweepStep,
): Promise<SweepStepReceipt | null> {
  const outcome = await sender.outcome(hash);
  if (outcome.status !== 'succeeded') return null;
  const info = await transactionInfo(sender, hash);
  const fee = int64(info.fee);
  const receipt: SweepStepReceipt = { swept: [], elsewhere: 0n, nativeMoved: 0n, fee, energy: 0n };
  if (step.purpose === 'transfer') {
    const source = step.sources[0]!;
    const d = await sender.delivery(hash, sender.token(request.token).address, source, request.destination);
    if (!d) return null;
    receipt.swept = [{ source, amount: d.delivered }];
    receipt.elsewhere = d.elsewhere;
    return receipt;
  }
  const tx = await sender.api.full<Partial<TransactionJson>>('wallet/gettransactionbyid', { value: hash.replace(/^0x/, '').toLowerCase() });
  if (!tx.raw_data_hex) return null;
  const raw = decodeSystemRawData(tx.raw_data_hex);
  if (raw.name === 'TransferContract') receipt.nativeMoved = raw.amount;
  else {
    // The energy a delegated stake stands for, at the network's current totals (what java-tron grants the receiver).
    const r = await sender.api.full<AccountResourceJson>('wallet/getaccountresource', { address: raw.owner });
    receipt.energy = energyOfStake(raw.amount, int64(r.TotalEnergyLimit), int64(r.TotalEnergyWeight));
  }
  return receipt;
}

/** The canonical destination and token of a request, or a clear refusal. */
export function requestTargets(sender: TronTokenSender, request: SweepRequest): { token: TokenContract; destination: string } {
  const token = sender.token(request.token);
  const destination = normalizeTronAddress(request.destination);
  if (!destination) throw new TransferRejectedError('invalid', `not a TRON address: ${request.destination}`);
  return { token, destination };
}

/** One step of a TRON sweep plan; `from` is stored in its canonical (hex) form. */
export function tronStep(s: {
  group: number;
  purpose: SweepStep['purpose'];
  from: SweepStep['from'];
  to: string;
  sources?: string[];
  value?: bigint;
  params?: Record<string, string>;
  estimatedFee: bigint;
}): SweepStep {
  return {
    group: s.group,
    purpose: s.purpose,
    from: { key: s.from.key, address: normalizeTronAddress(s.from.address) ?? s.from.address },
    to: s.to,
    sources: s.sources ?? [],
    value: s.value ?? 0n,
    params: s.params ?? {},
    estimatedFee: s.estimatedFee,
  };
}

/**
 * The request's sources a TRON sweep can plan, each with its canonical address and the energy its token transfer is
 * estimated to burn; a source that is no TRON address, or whose transfer the node refuses in simulation, is added to
 * `skipped` with the reason instead. Both TRON methods start their plan from this.
 */
export async function* sourcesWithEstimates(
  sender: TronTokenSender,
  request: SweepRequest,
  target: { token: TokenContract; destination: string },
  skipped: SweepPlan['skipped'],
): AsyncGenerator<{ source: SweepSource; address: string; estimate: bigint }> {
  for (const source of request.sources) {
    const address = normalizeTronAddress(source.address);
    if (!address) {
      skipped.push({ address: source.address, reason: 'not a TRON address' });
      continue;
    }
    try {
      yield { source, address, estimate: await estimateTransferEnergy(sender, target.token, address, target.destination, source.amount) };
    } catch (e) {
      if (!(e instanceof TransferRejectedError)) throw e;
      skipped.push({ address, reason: e.message });
    }
  }
}
