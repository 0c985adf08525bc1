import {
  TransferRejectedError,
  type SweepMethodImpl,
  type SweepPlan,
  type SweepRequest,
  type SweepSource,
  type SweepStep,
  type SweepStepReceipt,
  type TokenContract,
  type UnsignedTransfer,
} from '../types.js';
import { readTokenRefusal } from '../tokens/token-views.js';
import { ERC20 } from './erc20-abi.js';
import type { RpcBatchItem } from './rpc-client.js';
import type { RpcReceipt } from './rpc-types.js';
import type { EvmSweepContext } from './sweep-context.js';
import type { L1Part } from './fee-model.js';
import { feeCap, withFees, type EvmFeeFields, type EvmTxBody } from './token-sender.js';
import { evmViewReader } from './token-state.js';

// 'evm-gas-topup': the EVM sweep for chains or deployments without EIP-7702 (docs/treasury-evm.md, "EVM: gas top-up").
// Per deposit address, three transactions in three groups:
//   0 fund      gas station -> deposit: exactly the gas the transfer may burn (its gas limit x its fee cap);
//   1 transfer  deposit -> destination: the planned token amount, signed by the deposit key, at that gas limit and cap;
//   2 reclaim   deposit -> gas station: the native balance left minus the reclaim's own cost, when worth it.
// The transfer's gas limit, fee cap and tip are fixed at plan time (step params), so the fund and the transfer agree
// whatever happens to fees between them; the transfer never spends more than the address holds, so a replacement that
// the exact top-up cannot pay for is refused before signing (the original stays in flight).

/** A plain value transfer to an account without code (L2 execution; chains/evm/fee-model.ts adds Arbitrum's L1 gas). */
export { NATIVE_TRANSFER_GAS } from './fee-model.js';
/** The transfer's gas limit: its eth_estimateGas plus this share (percent), for state that moves between plan and send. */
export const TRANSFER_GAS_MARGIN_PERCENT = 10n;
/**
 * A reclaim is sent only when it returns at least this many times its own maximum fee (1: at least as much comes back
 * as may burn). Below it the dust stays on the deposit address, where a later sweep of the same address counts it
 * towards its top-up (the fund step only sends what is missing).
 */
export const RECLAIM_MIN_RETURN_PER_FEE = 1n;
/** Sources per JSON-RPC batch when planning (3 calls each). */
const PLAN_BATCH_SOURCES = 50;

export function createGasTopUpSweep(ctx: EvmSweepContext): SweepMethodImpl<EvmTxBody> {
  const tokenOf = (request: SweepRequest): TokenContract => {
    const t = ctx.tokens.find((x) => x.symbol === request.token);
    if (!t) throw new TransferRejectedError('invalid', `${request.token} is not configured on ${ctx.network}`);
    return t;
  };
  const sourceOf = (request: SweepRequest, step: SweepStep): SweepSource => {
    const address = step.purpose === 'transfer' ? step.sources[0] : step.purpose === 'fund' ? step.to : step.from.address;
    const s = request.sources.find((x) => x.address.toLowerCase() === address?.toLowerCase());
    if (!s) throw new Error(`sweep step ${step.purpose} names ${address}, which is not a source of the request`);
    return s;
  };
  const nativeBalance = async (address: string) => BigInt(await ctx.rpc.call<string>('eth_getBalance', [address, 'latest']));
  /** `what`: the recipient and amount the step moves (tokens for a transfer, wei otherwise), for the request's record. */
  const unsigned = async (
    request: SweepRequest,
    from: SweepStep['from'],
    what: { to: string; amount: bigint },
    nonce: bigint | null,
    body: Omit<EvmTxBody, 'type' | 'chainId' | 'nonce'>,
    fees: EvmFeeFields,
  ): Promise<UnsignedTransfer<EvmTxBody>> => {
    if (nonce === null) throw new TransferRejectedError('invalid', 'EVM sweep steps need an explicit nonce');
    const chainId = (await ctx.chainId()).toString();
    return {
      network: ctx.network,
      // signTransfer signs with `from.key` and checks that it is `from.address`.
      request: { from, to: what.to, token: request.token, amount: what.amount, nonce },
      body: withFees({ chainId, nonce: nonce.toString(), ...body }, fees),
    };
  };

  /** The reclaim's fees: a cap just above the next block's highest possible base fee (+12.5%), so little dust stays. */
  const reclaimFees = async (feeBumpPercent: number): Promise<EvmFeeFields> => {
    const q = await ctx.feeQuote(true);
    const bump = BigInt(100 + feeBumpPercent);
    if (q.baseFee === null) return { type: 0, gasPrice: (q.gasPrice * bump) / 100n };
    const tip = (q.tip * bump) / 100n;
    return { type: 2, maxPriorityFeePerGas: tip, maxFeePerGas: (((q.baseFee * 9n) / 8n) * bump) / 100n + tip };
  };

  return {
    method: 'evm-gas-topup',

    async available() {
      // Plain value transfers and token calls: every EVM chain can.
      return { ok: true };
    },

    async plan(request: SweepRequest): Promise<SweepPlan> {
      const token = tokenOf(request);
      const quote = await ctx.feeQuote(true);
      const transferFees = await ctx.feeFields(0);
      const cap = feeCap(transferFees);
      const reclaimFeeFields = await reclaimFees(0);
      const reclaimCap = feeCap(reclaimFeeFields);
      // What a transaction is expected to pay per gas (EIP-1559: base fee + tip, below the cap).
      const price = quote.baseFee === null ? quote.gasPrice : quote.baseFee + quote.tip;
      const tip = quote.baseFee === null ? 0n : quote.tip;
      // The L1 part of each kind of transaction (chains/evm/fee-model.ts), quoted once per plan on the first source's
      // transactions: the kinds' sizes differ across sources by a few bytes at most, which L1_FEE_MARGIN_PERCENT covers.
      const chainId = (await ctx.chainId()).toString();
      let l1: Promise<{ transfer: L1Part; fund: { gas: bigint; l1: L1Part }; reclaim: { gas: bigint; l1: L1Part } }> | undefined;
      const l1Parts = (s: SweepSource) =>
        (l1 ??= (async () => {
          const data = ERC20.encodeFunctionData('transfer', [request.destination, s.amount]);
          const at = { chainId, nonce: '0', gasLimit: '100000' };
          const transfer = await ctx.fees.l1Part(s.address, withFees({ ...at, to: token.address, data }, transferFees));
          const native = async (from: string, to: string, fields: EvmFeeFields) => {
            // A representative value the sender surely holds (the node simulates the call as that sender).
            const { gas, l1: extraGas } = await ctx.fees.nativeTransferGas(from, to, 1n);
            const op = await ctx.fees.l1Part(from, withFees({ ...at, to, data: '0x', value: '1' }, fields));
            return { gas, l1: { ...extraGas, fee: op.fee } };
          };
          const fund = await native(request.gasStation.address, s.address, transferFees);
          const reclaim = await native(s.address, request.gasStation.address, reclaimFeeFields);
          return { transfer, fund, reclaim };
        })());
      const plan: SweepPlan = { method: 'evm-gas-topup', steps: [], estimatedCost: 0n, skipped: [] };
      const sources = request.sources.filter((s) => {
        if (s.amount > 0n) return true;
        plan.skipped.push({ address: s.address, reason: 'nothing to sweep (amount 0)' });
        return false;
      });
      for (let i = 0; i < sources.length; i += PLAN_BATCH_SOURCES) {
        const chunk = sources.slice(i, i + PLAN_BATCH_SOURCES);
        const answers = await ctx.rpc.batch<string>(
          chunk.flatMap((s) => [
            { method: 'eth_getCode', params: [s.address, 'latest'] },
            { method: 'eth_getBalance', params: [s.address, 'latest'] },
            {
              method: 'eth_estimateGas',
              params: [
                { from: s.address, to: token.address, data: ERC20.encodeFunctionData('transfer', [request.destination, s.amount]) },
                'latest',
                // The deposit address holds no ether yet (the top-up comes later): an OP-stack node charges the L1 data
                // fee even when estimating, so the sender's balance is overridden (geth's eth_estimateGas state override).
                ...(ctx.fees.model.l1 === 'op-stack' ? [{ [s.address]: { balance: '0xde0b6b3a7640000' } }] : []),
              ],
            },
          ]),
        );
        for (const [k, s] of chunk.entries()) {
          const [code, balance, estimate] = answers.slice(3 * k, 3 * k + 3) as [
            RpcBatchItem<string>,
            RpcBatchItem<string>,
            RpcBatchItem<string>,
          ];
          if (!code.ok) throw code.error;
          if (!balance.ok) throw balance.error;
          if (code.result !== '0x') {
            plan.skipped.push({
              address: s.address,
              reason: 'the address has code (an EIP-7702 delegation?): the top-up path sweeps plain accounts',
            });
            continue;
          }
          if (!estimate.ok) {
            plan.skipped.push({
              address: s.address,
              reason: await refusalReason(ctx, token, s, request.destination, estimate.error.message),
            });
            continue;
          }
          const parts = await l1Parts(s);
          // Arbitrum: the L1 gas, when the node's estimate omits it; op-stack: the transfer's L1 data fee, held on top.
          const gas = ctx.fees.gas(BigInt(estimate.result), parts.transfer);
          const gasLimit = (gas * (100n + TRANSFER_GAS_MARGIN_PERCENT) + 99n) / 100n;
          const transferL1Held = ctx.fees.l1Allowance(parts.transfer);
          const topUp = gasLimit * cap + transferL1Held;
          const held = BigInt(balance.result);
          // Each fee: expected L2 gas x price, plus the expected L1 data fee (the margin is held, not expected to burn).
          const fundFee = held >= topUp ? 0n : parts.fund.gas * price + parts.fund.l1.fee;
          const transferFee = gas * price + parts.transfer.fee;
          const left = (held > topUp ? held : topUp) - transferFee;
          const reclaimL1Held = ctx.fees.l1Allowance(parts.reclaim.l1);
          const reclaimMax = parts.reclaim.gas * reclaimCap + reclaimL1Held;
          const reclaimWorth = left - reclaimMax >= RECLAIM_MIN_RETURN_PER_FEE * reclaimMax;
          const reclaimFee = parts.reclaim.gas * price + parts.reclaim.l1.fee;
          // The L1 part of each step's estimated fee, shown apart (op-stack: the data fee; arbitrum: its L1 gas x price).
          const l1Of = (p: L1Part) => (p.fee + p.gas * price).toString();
          const from = { key: s.key, address: s.address };
          plan.steps.push(
            {
              group: 0,
              purpose: 'fund',
              from: request.gasStation,
              to: s.address,
              sources: [],
              value: topUp,
              params: {
                transferGasLimit: gasLimit.toString(),
                feeCap: cap.toString(),
                tip: tip.toString(),
                transferL1Fee: transferL1Held.toString(),
                estimatedL1Fee: held >= topUp ? '0' : l1Of(parts.fund.l1),
              },
              estimatedFee: fundFee,
            },
            {
              group: 1,
              purpose: 'transfer',
              from,
              to: request.destination,
              sources: [s.address],
              value: 0n,
              params: {
                gasLimit: gasLimit.toString(),
                feeType: String(transferFees.type),
                feeCap: cap.toString(),
                tip: tip.toString(),
                amount: s.amount.toString(),
                l1Fee: transferL1Held.toString(),
                estimatedL1Fee: l1Of(parts.transfer),
              },
              estimatedFee: transferFee,
            },
            {
              group: 2,
              purpose: 'reclaim',
              from,
              to: request.gasStation.address,
              sources: [],
              value: topUp,
              params: { estimatedL1Fee: reclaimWorth ? l1Of(parts.reclaim.l1) : '0' },
              estimatedFee: reclaimWorth ? reclaimFee : 0n,
            },
          );
          // Fees burnt, plus the dust that stays: a reclaim leaves its cap's unused part; no reclaim leaves it all.
          const dust = reclaimWorth
            ? parts.reclaim.gas * (reclaimCap - price) + (reclaimL1Held - parts.reclaim.l1.fee)
            : left > 0n
              ? left
              : 0n;
          plan.estimatedCost += fundFee + transferFee + (reclaimWorth ? reclaimFee : 0n) + (dust > 0n ? dust : 0n);
        }
      }
      return plan;
    },

    async build(request, step, nonce, feeBumpPercent) {
      const source = sourceOf(request, step);
      switch (step.purpose) {
        case 'fund': {
          // Only what is missing: gas already on the address (an earlier sweep's top-up whose transfer did not run)
          // counts, so a re-planned sweep never pays twice.
          const missing = step.value - (await nativeBalance(source.address));
          if (missing <= 0n) return null;
          const fees = await ctx.feeFields(feeBumpPercent);
          const { gas } = await ctx.fees.nativeTransferGas(request.gasStation.address, source.address, missing);
          const chainId = (await ctx.chainId()).toString();
          const draft = {
            chainId,
            nonce: (nonce ?? 0n).toString(),
            to: source.address,
            data: '0x',
            value: missing.toString(),
            gasLimit: gas.toString(),
          };
          const l1 = await ctx.fees.l1Part(request.gasStation.address, withFees(draft, fees));
          // The gas station lacks the top-up and its fee: fee money an operator adds (the node would refuse the bytes).
          const needed = missing + gas * feeCap(fees) + ctx.fees.l1Allowance(l1);
          const held = await nativeBalance(request.gasStation.address);
          if (held < needed)
            throw new TransferRejectedError(
              'insufficient_gas',
              `gas station ${request.gasStation.address} holds ${held} wei, needs up to ${needed} for the top-up`,
              undefined,
              { address: request.gasStation.address, balance: held, needed },
            );
          return unsigned(
            request,
            request.gasStation,
            { to: source.address, amount: missing },
            nonce,
            { to: source.address, data: '0x', value: missing.toString(), gasLimit: gas.toString() },
            fees,
          );
        }
        case 'transfer': {
          const token = tokenOf(request);
          const gasLimit = BigInt(param(step, 'gasLimit'));
          const bump = BigInt(100 + feeBumpPercent);
          // The fee cap the top-up paid for; a replacement's bump only as far as the address's gas allows.
          const planned = BigInt(param(step, 'feeCap'));
          const held = await nativeBalance(source.address);
          // The L1 data fee the top-up carries (op-stack; 0 elsewhere and in plans made before it existed) stays aside.
          const l1Held = BigInt(optionalParam(step, 'l1Fee') ?? '0');
          const affordable = held > l1Held ? (held - l1Held) / gasLimit : 0n;
          if (affordable < planned)
            throw new TransferRejectedError(
              'insufficient_gas',
              `${source.address} holds ${held} wei, its transfer needs up to ${gasLimit * planned + l1Held}`,
            );
          const cap = (planned * bump) / 100n;
          // A replacement must outbid the original's cap and tip: with exactly the top-up on the address it cannot, and
          // is refused before signing (the engine keeps the original in flight until the base fee falls under its cap).
          if (cap > affordable)
            throw new TransferRejectedError('underpriced', `${source.address} holds gas for a fee cap of ${affordable} wei, not ${cap}`);
          const tip = (BigInt(param(step, 'tip')) * bump) / 100n;
          const fees: EvmFeeFields =
            param(step, 'feeType') === '0'
              ? { type: 0, gasPrice: cap }
              : { type: 2, maxFeePerGas: cap, maxPriorityFeePerGas: tip < cap ? tip : cap };
          const amount = BigInt(param(step, 'amount'));
          if (amount !== source.amount) throw new Error(`transfer step amount ${amount} differs from the request's ${source.amount}`);
          const data = ERC20.encodeFunctionData('transfer', [request.destination, amount]);
          const what = { to: request.destination, amount };
          return unsigned(request, step.from, what, nonce, { to: token.address, data, gasLimit: gasLimit.toString() }, fees);
        }
        case 'reclaim': {
          const fees = await reclaimFees(feeBumpPercent);
          const balance = await nativeBalance(source.address);
          const { gas } = await ctx.fees.nativeTransferGas(source.address, request.gasStation.address, balance);
          const chainId = (await ctx.chainId()).toString();
          const draft = {
            chainId,
            nonce: (nonce ?? 0n).toString(),
            to: request.gasStation.address,
            data: '0x',
            value: balance.toString(),
            gasLimit: gas.toString(),
          };
          // What may burn: gas x cap, and on op-stack the reclaim's own L1 data fee (with the margin).
          const maxFee = gas * feeCap(fees) + ctx.fees.l1Allowance(await ctx.fees.l1Part(source.address, withFees(draft, fees)));
          let value = balance - maxFee;
          // Never more than the top-up planned: native coin that was on the address before stays there.
          if (value > step.value) value = step.value;
          if (value < RECLAIM_MIN_RETURN_PER_FEE * maxFee || value <= 0n) return null;
          return unsigned(
            request,
            step.from,
            { to: request.gasStation.address, amount: value },
            nonce,
            { to: request.gasStation.address, data: '0x', value: value.toString(), gasLimit: gas.toString() },
            fees,
          );
        }
        default:
          throw new Error(`evm-gas-topup has no ${step.purpose} step`);
      }
    },

    async read(hash, request, step): Promise<SweepStepReceipt | null> {
      const receipt = await ctx.rpc.call<RpcReceipt | null>('eth_getTransactionReceipt', [hash]);
      if (!receipt || BigInt(receipt.status) !== 1n) return null;
      // Exactly what the sender paid: gas x price, plus the L1 data fee on op-stack (chains/evm/fee-model.ts).
      const fee = await ctx.fees.paidFee(receipt);
      const out: SweepStepReceipt = { swept: [], elsewhere: 0n, nativeMoved: 0n, fee, energy: 0n };
      if (step.purpose === 'transfer') {
        const source = step.sources[0]!;
        const d = await ctx.readDelivery(hash, request.token, source, request.destination);
        if (!d) return null;
        out.swept.push({ source, amount: d.delivered });
        out.elsewhere = d.elsewhere;
        return out;
      }
      const tx = await ctx.rpc.call<{ to: string | null; value: string } | null>('eth_getTransactionByHash', [hash]);
      if (tx?.to && tx.to.toLowerCase() === step.to.toLowerCase()) out.nativeMoved = BigInt(tx.value);
      return out;
    },
  };
}

function optionalParam(step: SweepStep, key: string): string | undefined {
  const v = step.params[key];
  if (v !== undefined && !/^\d+$/.test(v)) throw new Error(`sweep step ${step.purpose} has a malformed params.${key}`);
  return v;
}

function param(step: SweepStep, key: string): string {
  const v = step.params[key];
  if (v === undefined || !/^\d+$/.test(v)) throw new Error(`sweep step ${step.purpose} lacks params.${key}`);
  return v;
}

/** Why the token refuses the transfer: its paused/blacklist views, else a short balance, else the node's message. */
async function refusalReason(
  ctx: EvmSweepContext,
  token: TokenContract,
  s: SweepSource,
  destination: string,
  message: string,
): Promise<string> {
  const refusal = await readTokenRefusal(evmViewReader(ctx.rpc, token.address, 'latest'), { sender: s.address, recipient: destination });
  if (refusal) return `token refuses the transfer: ${refusal}`;
  const raw = await ctx.rpc.call<string>('eth_call', [
    { to: token.address, data: ERC20.encodeFunctionData('balanceOf', [s.address]) },
    'latest',
  ]);
  const balance = BigInt(raw);
  if (balance < s.amount) return `token balance ${balance} is below the planned amount ${s.amount}`;
  return `transfer simulation failed: ${message}`;
}
