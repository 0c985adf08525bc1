import { AbiCoder, concat, getCreate2Address, hashAuthorization, id, Interface, keccak256, SigningKey } from 'ethers';
import {
  TransferRejectedError,
  type SweepMethodImpl,
  type SweepPlan,
  type SweepRequest,
  type SweepStep,
  type SweepStepReceipt,
  type TokenContract,
  type UnsignedTransfer,
} from '../types.js';
import artifact from './contracts/SweepDelegate.json' with { type: 'json' };
import type { UnsignedAuthorization } from './authorization.js';
import type { RpcBatchItem } from './rpc-client.js';
import type { EvmSweepContext } from './sweep-context.js';
import { RpcError } from './rpc-errors.js';
import { toHex, type RpcReceipt } from './rpc-types.js';
import type { EvmTxBody } from './token-sender.js';
import { decodeTransferLog } from './transfer-log.js';
import { normalizeEvmAddress } from './address.js';
import { ERC20 } from './erc20-abi.js';

// The `evm-7702-batch` sweep method (docs/treasury-evm-7702.md): deposit addresses delegate, by EIP-7702
// authorization, to SweepDelegate (chains/evm/contracts/), deployed once per gas station and merchant destinations
// (the delegate is bound to them: it sends tokens nowhere else) through the deterministic CREATE2 deployer; the gas
// station then sends ONE type-4 transaction to the delegate's entry that moves an explicit amount out of each deposit
// address. Deposit addresses never hold native coin.

/** The deterministic CREATE2 deployer (Arachnid's), at the same address on Ethereum, BSC and Anvil. */
export const CREATE2_DEPLOYER = '0x4e59b44847b379578588920ca78fbf26c0b4956c';
/** Fixed salt: the delegate's address depends only on this, the committed bytecode, the gas station and destinations. */
export const SWEEP_DELEGATE_SALT = id('stablepay.sweep-delegate.v2');
/** An account's code when it delegates by EIP-7702: 0xef0100 || delegate address. */
export const DELEGATION_PREFIX = '0xef0100';

/**
 * Batch size is capped by gas: at most BATCH_GAS_BUDGET per transaction (under EIP-7825's 2^24 per-transaction cap of
 * Osaka and well under Ethereum's and BSC's block gas limits) with PER_SOURCE_GAS_BOUND per deposit address (an
 * authorization of an empty account, 25,000, plus a cold token transfer with a margin): 120 addresses per transaction.
 */
export const BATCH_GAS_BUDGET = 12_000_000n;
export const PER_SOURCE_GAS_BOUND = 100_000n;
export const MAX_BATCH_SOURCES = Number(BATCH_GAS_BUDGET / PER_SOURCE_GAS_BOUND);
/** EIP-7702 intrinsic cost per authorization of an empty account (PER_EMPTY_ACCOUNT_COST). */
const AUTHORIZATION_GAS = 25_000n;
/** Planning figures (measured on Anvil, docs/treasury-evm-7702.md), used before the delegate exists to estimate on. */
const PLAN_BATCH_BASE_GAS = 30_000n;
const PLAN_SOURCE_GAS = 45_000n;
const PLAN_DEPLOY_GAS = 600_000n;
/** Sources per JSON-RPC batch when planning (4 reads each: code, nonce, balance, the transfer's simulation). */
const PLAN_BATCH_SOURCES = 50;

const DELEGATE = new Interface(artifact.abi as never);

/**
 * The two destinations a delegate is bound to, in canonical form: lowercase, sorted, the one destination twice when
 * there is one (so the same set always gives the same delegate). Throws on none, more than two, or a non-address.
 */
export function delegateDestinations(destinations: readonly string[]): [string, string] {
  const set = [...new Set(destinations.map((d) => normalizeEvmAddress(d)))];
  if (set.some((d) => d === null)) throw new TransferRejectedError('invalid', `a sweep destination is not an EVM address`);
  const list = (set as string[]).sort();
  if (list.length < 1 || list.length > 2)
    throw new TransferRejectedError('invalid', `a sweep delegate binds one or two destinations, not ${list.length}`);
  return [list[0]!, list[1] ?? list[0]!];
}

/** The delegate's creation code for `gasStation` and the destinations it may send to (its constructor arguments). */
export function sweepDelegateInitCode(gasStation: string, destinations: readonly string[]): string {
  const [d0, d1] = delegateDestinations(destinations);
  return concat([artifact.bytecode, AbiCoder.defaultAbiCoder().encode(['address', 'address', 'address'], [gasStation, d0, d1])]);
}

/**
 * Where the CREATE2 deployer puts the delegate of `gasStation` bound to `destinations` (lowercase): computable without
 * any chain state, so whoever signs a deposit key's authorization can check that it names the delegate of the
 * merchant's recorded destinations.
 */
export function sweepDelegateAddress(gasStation: string, destinations: readonly string[]): string {
  return getCreate2Address(CREATE2_DEPLOYER, SWEEP_DELEGATE_SALT, keccak256(sweepDelegateInitCode(gasStation, destinations))).toLowerCase();
}

/** The destinations of a request: `destinations` (which must include `destination`), or `destination` alone. */
export function requestDestinations(request: Pick<SweepRequest, 'destination' | 'destinations'>): [string, string] {
  const bound = delegateDestinations(request.destinations ?? [request.destination]);
  const to = normalizeEvmAddress(request.destination);
  if (!to || !bound.includes(to))
    throw new TransferRejectedError('invalid', `destination ${request.destination} is not among the request's destinations`);
  return bound;
}

/** Whether `code` is an EIP-7702 delegation designator (to any contract). */
function isDesignator(code: string): boolean {
  return code.length === 2 + 2 * 23 && code.startsWith(DELEGATION_PREFIX);
}

/** Encodes `sweep(token, to, sources, amounts)`, the gas station's call to the delegate's entry. */
export function encodeSweepCall(token: string, to: string, sources: readonly string[], amounts: readonly bigint[]): string {
  return DELEGATE.encodeFunctionData('sweep', [token, to, sources, amounts]);
}

/** `params.authorizations` of a batch step: `address:nonce` of each source that must delegate, comma separated. */
function encodeAuthorizations(list: ReadonlyArray<{ address: string; nonce: bigint }>): string {
  return list.map((a) => `${a.address}:${a.nonce}`).join(',');
}

function decodeAuthorizations(text: string | undefined): Array<{ address: string; nonce: bigint }> {
  if (!text) return [];
  return text.split(',').map((item) => {
    const [address, nonce] = item.split(':');
    return { address: address!, nonce: BigInt(nonce!) };
  });
}

/** The method, over what the EVM adapter gives its sweep methods (`EvmChainAdapter.sweepContext()`). */
export function createEip7702Sweep(ctx: EvmSweepContext): SweepMethodImpl<EvmTxBody> {
  return new Eip7702Sweep(ctx);
}

interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  /** What a unit of gas is expected to cost now (base fee + tip): what estimates are priced at. */
  expected: bigint;
}

class Eip7702Sweep implements SweepMethodImpl<EvmTxBody> {
  readonly method = 'evm-7702-batch' as const;

  constructor(private readonly ctx: EvmSweepContext) {}

  /**
   * Probes the node: the deterministic deployer must exist, and the node must accept a type-4 transaction in
   * eth_estimateGas (a node before Prague, or a chain without EIP-7702, refuses the type or the authorization list).
   * The probe's authorization is signed by a fixed throwaway key (private key 1), for chain id 0, so it authorizes
   * nothing of ours.
   */
  async available(): Promise<{ ok: true } | { ok: false; reason: string }> {
    try {
      const deployer = await this.ctx.rpc.call<string>('eth_getCode', [CREATE2_DEPLOYER, 'latest']);
      if (deployer === '0x') return { ok: false, reason: `no deterministic deployer at ${CREATE2_DEPLOYER}` };
      const probe = { address: CREATE2_DEPLOYER, nonce: 0n, chainId: 0n };
      const key = new SigningKey(`0x${'0'.repeat(63)}1`);
      const sig = key.sign(hashAuthorization(probe));
      const authority = '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf'; // address of private key 1
      await this.ctx.rpc.call<string>('eth_estimateGas', [
        {
          from: authority,
          to: authority,
          type: '0x4',
          authorizationList: [
            { chainId: '0x0', address: CREATE2_DEPLOYER, nonce: '0x0', yParity: toHex(BigInt(sig.yParity)), r: sig.r, s: sig.s },
          ],
        },
      ]);
      return { ok: true };
    } catch (e) {
      if (e instanceof RpcError && e.kind === 'rpc_error') return { ok: false, reason: `node refuses EIP-7702 transactions: ${e.message}` };
      throw e;
    }
  }

  async plan(request: SweepRequest): Promise<SweepPlan> {
    const token = this.#token(request.token);
    this.#address(request.destination, 'destination');
    const gasStation = this.#address(request.gasStation.address, 'gas station');
    const destinations = requestDestinations(request);
    const delegate = sweepDelegateAddress(gasStation, destinations);
    const designator = `${DELEGATION_PREFIX}${delegate.slice(2)}`;
    const fees = await this.#fees(0);
    const steps: SweepStep[] = [];
    const skipped: SweepPlan['skipped'] = [];

    const deployed = (await this.ctx.rpc.call<string>('eth_getCode', [delegate, 'latest'])) !== '0x';
    if (!deployed) {
      steps.push({
        group: 0,
        purpose: 'deploy',
        from: request.gasStation,
        to: CREATE2_DEPLOYER,
        sources: [],
        value: 0n,
        params: { contract: delegate, salt: SWEEP_DELEGATE_SALT, destinations: destinations.join(',') },
        estimatedFee: PLAN_DEPLOY_GAS * fees.expected,
      });
    }

    // Each source: not a duplicate, something to move, the balance there now, and its code: none (it must delegate,
    // at its current nonce), our designator (already delegated: no authorization), another delegation (our delegate of
    // an earlier destination or gas station: only the deposit key can delegate, and that key is ours; it re-delegates
    // at its current nonce), or anything else (skipped).
    const seen = new Set<string>();
    const candidates: Array<{ address: string; amount: bigint }> = [];
    for (const s of request.sources) {
      const address = normalizeEvmAddress(s.address);
      if (!address) {
        skipped.push({ address: s.address, reason: 'not an EVM address' });
      } else if (seen.has(address)) {
        skipped.push({ address, reason: 'listed twice in one sweep' });
      } else if (s.amount <= 0n) {
        skipped.push({ address, reason: 'nothing to sweep' });
      } else {
        seen.add(address);
        candidates.push({ address, amount: s.amount });
      }
    }
    // The token's own verdict too (its transfer simulated from the address): one refused transfer (a paused token, a
    // blacklisted address) would revert a whole batch, so such an address is skipped here, with the token's reason.
    const states: Array<{ code: string; nonce: bigint; balance: bigint; refused: string | null }> = [];
    for (let i = 0; i < candidates.length; i += PLAN_BATCH_SOURCES) {
      const chunk = candidates.slice(i, i + PLAN_BATCH_SOURCES);
      const answers = await this.ctx.rpc.batch<string>(
        chunk.flatMap((c) => [
          { method: 'eth_getCode', params: [c.address, 'latest'] },
          { method: 'eth_getTransactionCount', params: [c.address, 'latest'] },
          { method: 'eth_call', params: [{ to: token.address, data: ERC20.encodeFunctionData('balanceOf', [c.address]) }, 'latest'] },
          {
            method: 'eth_estimateGas',
            params: [
              { from: c.address, to: token.address, data: ERC20.encodeFunctionData('transfer', [request.destination, c.amount]) },
              'latest',
            ],
          },
        ]),
      );
      for (const [k, a] of answers.entries()) if (!a.ok && (k % 4 !== 3 || a.error.kind !== 'rpc_error')) throw a.error;
      for (let k = 0; k < chunk.length; k++) {
        const [code, nonce, balance, estimate] = answers.slice(4 * k, 4 * k + 4) as Array<RpcBatchItem<string>>;
        states.push({
          code: code!.ok ? code!.result.toLowerCase() : '',
          nonce: nonce!.ok ? BigInt(nonce!.result) : 0n,
          balance: balance!.ok ? BigInt(balance!.result) : 0n,
          refused: estimate!.ok ? null : estimate!.error.message,
        });
      }
    }
    const ready: Array<{ address: string; auth: bigint | null }> = [];
    candidates.forEach((c, i) => {
      const st = states[i]!;
      if (st.code !== '0x' && !isDesignator(st.code)) skipped.push({ address: c.address, reason: 'address has code' });
      else if (st.balance < c.amount) skipped.push({ address: c.address, reason: `balance ${st.balance} below the planned ${c.amount}` });
      else if (st.refused !== null) skipped.push({ address: c.address, reason: `the token refuses the transfer: ${st.refused}` });
      else ready.push({ address: c.address, auth: st.code === designator ? null : st.nonce });
    });

    const group = deployed ? 0 : 1;
    for (let i = 0; i < ready.length; i += MAX_BATCH_SOURCES) {
      const chunk = ready.slice(i, i + MAX_BATCH_SOURCES);
      const auths = chunk.filter((c) => c.auth !== null).map((c) => ({ address: c.address, nonce: c.auth! }));
      let gas = PLAN_BATCH_BASE_GAS + PLAN_SOURCE_GAS * BigInt(chunk.length) + AUTHORIZATION_GAS * BigInt(auths.length);
      // The L1 part of the batch (chains/evm/fee-model.ts), quoted on its call data: shown apart, counted in the fee.
      const amounts = chunk.map((c) => candidates.find((x) => x.address === c.address)!.amount);
      const callData = encodeSweepCall(
        token.address,
        request.destination,
        chunk.map((c) => c.address),
        amounts,
      );
      const l1 = await this.ctx.fees.l1Part(gasStation, this.#body(await this.ctx.chainId(), 0n, delegate, callData, gas, fees, 2));
      gas = this.ctx.fees.gas(gas, l1);
      const l1Fee = l1.fee + l1.gas * fees.expected;
      steps.push({
        group,
        purpose: 'batch',
        from: request.gasStation,
        to: delegate,
        sources: chunk.map((c) => c.address),
        value: 0n,
        // The authorizations are fixed here, at plan time: every build of this step (a fee-bumped replacement too)
        // carries exactly these, and signing is deterministic, so a replacement carries the same signed list.
        params: {
          delegate,
          destinations: destinations.join(','),
          authorizations: encodeAuthorizations(auths),
          estimatedL1Fee: l1Fee.toString(),
        },
        estimatedFee: gas * fees.expected + l1.fee,
      });
    }
    return { method: this.method, steps, estimatedCost: steps.reduce((sum, s) => sum + s.estimatedFee, 0n), skipped };
  }

  async build(
    request: SweepRequest,
    step: SweepStep,
    nonce: bigint | null,
    feeBumpPercent: number,
  ): Promise<UnsignedTransfer<EvmTxBody> | null> {
    if (nonce === null) throw new TransferRejectedError('invalid', 'EVM sweeps need an explicit nonce');
    const gasStation = this.#address(request.gasStation.address, 'gas station');
    // The destinations fixed at plan time (every build of the step targets the same delegate), the request's otherwise.
    const destinations = step.params.destinations
      ? requestDestinations({ destination: request.destination, destinations: step.params.destinations.split(',') })
      : requestDestinations(request);
    const delegate = sweepDelegateAddress(gasStation, destinations);
    const token = this.#token(request.token);
    const chainId = await this.ctx.chainId();
    const fees = await this.#fees(feeBumpPercent);
    const base = { network: this.ctx.network };
    if (step.purpose === 'deploy') {
      // Deployed meanwhile (another sweep's deploy step): nothing to do.
      if ((await this.ctx.rpc.call<string>('eth_getCode', [delegate, 'latest'])) !== '0x') return null;
      const data = concat([SWEEP_DELEGATE_SALT, sweepDelegateInitCode(gasStation, destinations)]);
      const gas = await this.#estimate({ from: gasStation, to: CREATE2_DEPLOYER, data });
      const body = this.#body(chainId, nonce, CREATE2_DEPLOYER, data, (gas * 12n) / 10n, fees, 2);
      await this.#affordable(gasStation, body);
      return { ...base, request: { ...this.#request(request, nonce, feeBumpPercent, 0n), to: CREATE2_DEPLOYER }, body };
    }
    if (step.purpose !== 'batch') throw new TransferRejectedError('invalid', `evm-7702-batch has no ${step.purpose} step`);
    if (step.to.toLowerCase() !== delegate)
      throw new TransferRejectedError('invalid', `batch step targets ${step.to}, not the delegate ${delegate}`);
    // A call to an address without code "succeeds" and moves nothing: never send a batch before the delegate exists.
    if ((await this.ctx.rpc.call<string>('eth_getCode', [delegate, 'latest'])) === '0x')
      throw new TransferRejectedError('invalid', `the sweep delegate ${delegate} is not deployed`);
    const bySource = new Map(request.sources.map((s) => [s.address.toLowerCase(), s]));
    const sources = step.sources.map((a) => {
      const s = bySource.get(a.toLowerCase());
      if (!s) throw new TransferRejectedError('invalid', `batch source ${a} is not in the sweep request`);
      return s;
    });
    const destination = this.#address(request.destination, 'destination');
    const data = encodeSweepCall(
      token.address,
      destination,
      sources.map((s) => s.address),
      sources.map((s) => s.amount),
    );
    const authList = decodeAuthorizations(step.params.authorizations);
    const authorizations: UnsignedAuthorization[] = authList.map((a) => ({
      authority: a.address,
      key: bySource.get(a.address.toLowerCase())!.key,
      address: delegate,
      nonce: a.nonce.toString(),
    }));
    // Estimated as if every source were already delegated (a state override of its code), then the authorizations'
    // intrinsic cost added: unsigned authorizations cannot be simulated. Nodes without state overrides: the bound.
    const designator = `${DELEGATION_PREFIX}${delegate.slice(2)}`;
    const overrides = Object.fromEntries(authList.map((a) => [a.address, { code: designator }]));
    let gas: bigint;
    try {
      gas =
        (BigInt(await this.ctx.rpc.call<string>('eth_estimateGas', [{ from: gasStation, to: delegate, data }, 'latest', overrides])) *
          12n) /
        10n;
    } catch (e) {
      if (!(e instanceof RpcError) || e.kind !== 'rpc_error') throw e;
      // A revert is refused, unless the node ignored the override (then undelegated sources revert the simulation).
      if (/revert/i.test(e.message) && (await this.#overridesHonoured(authList[0]?.address, overrides, delegate)))
        throw new TransferRejectedError('simulation_reverted', e.message);
      gas = PLAN_BATCH_BASE_GAS + PER_SOURCE_GAS_BOUND * BigInt(sources.length);
    }
    gas += AUTHORIZATION_GAS * BigInt(authorizations.length);
    // Arbitrum: L1 gas on top when the node's estimate omits it (chains/evm/fee-model.ts).
    const l1 = await this.ctx.fees.l1Part(gasStation, this.#body(chainId, nonce, delegate, data, gas, fees, 2));
    gas = this.ctx.fees.gas(gas, l1);
    // EIP-7702 makes an empty authorization list invalid: when every source is already delegated, a type-2 call.
    const body: EvmTxBody =
      authorizations.length > 0
        ? { ...this.#body(chainId, nonce, delegate, data, gas, fees, 4), authorizations }
        : this.#body(chainId, nonce, delegate, data, gas, fees, 2);
    await this.#affordable(gasStation, body);
    const total = sources.reduce((sum, s) => sum + s.amount, 0n);
    return { ...base, request: this.#request(request, nonce, feeBumpPercent, total), body };
  }

  async read(hash: string, request: SweepRequest, step: SweepStep): Promise<SweepStepReceipt | null> {
    const receipt = await this.ctx.rpc.call<RpcReceipt | null>('eth_getTransactionReceipt', [hash]);
    if (!receipt || BigInt(receipt.status) !== 1n) return null;
    // Exactly what the gas station paid: gas x price, plus the L1 data fee on op-stack (chains/evm/fee-model.ts).
    const fee = await this.ctx.fees.paidFee(receipt);
    const out: SweepStepReceipt = { swept: [], elsewhere: 0n, nativeMoved: 0n, fee, energy: 0n };
    if (step.purpose !== 'batch') return out;
    const contract = this.#token(request.token).address.toLowerCase();
    const destination = request.destination.toLowerCase();
    const moved = new Map(step.sources.map((s) => [s.toLowerCase(), 0n]));
    for (const t of receipt.logs.map(decodeTransferLog)) {
      if (!t || t.token !== contract || !moved.has(t.from)) continue;
      if (t.to === destination) moved.set(t.from, moved.get(t.from)! + t.amount);
      else out.elsewhere += t.amount;
    }
    out.swept = [...moved].map(([source, amount]) => ({ source, amount }));
    return out;
  }

  /** Whether the node applies state overrides: `ENTRY()` read at an overridden source answers the delegate. */
  async #overridesHonoured(source: string | undefined, overrides: Record<string, unknown>, delegate: string): Promise<boolean> {
    if (!source) return true;
    try {
      const data = DELEGATE.encodeFunctionData('ENTRY');
      const answer = await this.ctx.rpc.call<string>('eth_call', [{ to: source, data }, 'latest', overrides]);
      return answer.length === 66 && `0x${answer.slice(26)}`.toLowerCase() === delegate;
    } catch {
      return false;
    }
  }

  #request(request: SweepRequest, nonce: bigint, feeBumpPercent: number, amount: bigint) {
    return { from: request.gasStation, to: request.destination, token: request.token, amount, nonce, feeBumpPercent };
  }

  #body(chainId: bigint, nonce: bigint, to: string, data: string, gas: bigint, fees: Fees, type: 2 | 4): EvmTxBody {
    return {
      chainId: chainId.toString(),
      nonce: nonce.toString(),
      to,
      data,
      gasLimit: gas.toString(),
      type,
      maxFeePerGas: fees.maxFeePerGas.toString(),
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    };
  }

  async #affordable(gasStation: string, body: EvmTxBody): Promise<void> {
    const balance = BigInt(await this.ctx.rpc.call<string>('eth_getBalance', [gasStation, 'latest']));
    // Gas x cap, plus the L1 part the gas station pays on a rollup (chains/evm/fee-model.ts; a type-4 body is sized
    // without its authorization list, which L1_FEE_MARGIN_PERCENT partly covers).
    const l1 = await this.ctx.fees.l1Part(gasStation, body);
    const maxCost = BigInt(body.gasLimit) * BigInt(body.maxFeePerGas!) + this.ctx.fees.l1Allowance(l1);
    if (balance < maxCost)
      throw new TransferRejectedError(
        'insufficient_gas',
        `gas station ${gasStation} holds ${balance} wei, needs up to ${maxCost}`,
        undefined,
        {
          address: gasStation,
          balance,
          needed: maxCost,
        },
      );
  }

  async #estimate(tx: Record<string, string>): Promise<bigint> {
    try {
      return BigInt(await this.ctx.rpc.call<string>('eth_estimateGas', [tx, 'latest']));
    } catch (e) {
      if (e instanceof RpcError && e.kind === 'rpc_error') throw new TransferRejectedError('simulation_reverted', e.message);
      throw e;
    }
  }

  /**
   * The adapter's fee rule (`feeFields`: cap 2 x base fee + tip, raised by `bumpPercent` for a replacement), in EIP-1559
   * form (type 4 has no legacy form: a legacy-gasPrice chain pays its gas price as cap and tip), and the price
   * estimates are made at (base fee + tip).
   */
  async #fees(bumpPercent: number): Promise<Fees> {
    const fields = await this.ctx.feeFields(bumpPercent);
    const quote = await this.ctx.feeQuote(false);
    const expected = quote.baseFee === null ? quote.gasPrice : quote.baseFee + quote.tip;
    if (fields.type === 0) return { maxFeePerGas: fields.gasPrice, maxPriorityFeePerGas: fields.gasPrice, expected };
    return { maxFeePerGas: fields.maxFeePerGas, maxPriorityFeePerGas: fields.maxPriorityFeePerGas, expected };
  }

  #token(symbol: string): TokenContract {
    const t = this.ctx.tokens.find((x) => x.symbol === symbol);
    if (!t) throw new TransferRejectedError('invalid', `${symbol} is not configured on ${this.ctx.network}`);
    return t;
  }

  #address(text: string, what: string): string {
    const a = normalizeEvmAddress(text);
    if (!a) throw new TransferRejectedError('invalid', `${what} ${text} is not an EVM address`);
    return a;
  }
}
