import { ACTIVATION_SUN, TRX } from '../../chains/tron/sweep-common.js';
import { contractTypeOf, decodeSystemRawData, type SystemRawData } from '../../chains/tron/system-contracts.js';
import { TRIGGER_SMART_CONTRACT_TYPE } from '../../chains/tron/protobuf.js';
import type { KeyPath } from '../../chains/types.js';
import type { JustifiedSend } from './justified.js';
import { refuse } from './refusal.js';
import type { SweepStepContext } from './sweep-step-context.js';
import { decodeTransferCall } from './transfer-call.js';
import { tronTokenCallData } from './tron-token-call.js';

// Justification of a TRON sweep step (docs/signer.md, "Sweep steps"): what chains/tron/sweep-energy.ts and
// sweep-topup.ts build, checked against the wallets the signer derived itself (sweep-step-context.ts), never against
// the step JSON a worker wrote for where money goes:
// - `activate` / `fund`: one TransferContract from the gas station to a deposit address of this sweep still to sweep,
//   1 sun (an activation) or at most MAX_FUND_SUN and the step's planned value (TRX for the transfer's fees);
// - `delegate` / `undelegate`: one (Un)DelegateResourceContract of ENERGY, unlocked, from the resources account to a
//   deposit address of this sweep (a lent stake, taken back after the transfer);
// - `transfer`: one TriggerSmartContract from a deposit key of this sweep to the registry's token, no TRX,
//   `transfer(allowed destination, amount ≤ the source's planned amount)`;
// - `reclaim`: one TransferContract from a deposit key of this sweep back to the gas station (no TRON builder plans
//   one today; a deposit address's own TRX going home is all it may be).

/**
 * The most TRX one `fund` step may send a deposit address: what its token transfer can burn, i.e. the default fee_limit
 * ceiling (50 TRX, chains/tron/config.ts) with head-room for bandwidth and a raised ceiling. A fund is also bounded by
 * the step's planned value.
 */
export const MAX_FUND_SUN = 100n * TRX;

const PURPOSES: Record<string, readonly string[]> = {
  'tron-energy-delegation': ['activate', 'fund', 'delegate', 'transfer', 'undelegate', 'reclaim'],
  'tron-trx-topup': ['fund', 'transfer', 'reclaim'],
};

export async function justifyTronSweepStep(ctx: SweepStepContext): Promise<JustifiedSend> {
  const { sweep, step, adapter } = ctx;
  const canon = (a: string) => adapter.normalizeAddress(a);
  const gasStation = canon(ctx.gasStation.address)!;
  const resources = canon(ctx.resources.address)!;
  const isKey = (k: KeyPath) => ctx.key.curve === k.curve && ctx.key.path === k.path;
  // Tokens moved (`amount`, what the limits count), or TRX / stake moved (`trx`, shown in the audit only).
  const send = (to: string, amount: bigint, contract: string, trx?: bigint): JustifiedSend => {
    const summary =
      trx === undefined
        ? { to, token: sweep.token, contract, amount_base: amount.toString() }
        : { to, token: 'TRX', contract, amount_base: trx.toString() };
    ctx.seen.summary = summary;
    ctx.seen.amount = amount;
    return {
      merchantId: sweep.merchant_id,
      network: sweep.network,
      mode: sweep.mode,
      token: sweep.token,
      decimals: ctx.token.decimals,
      amount,
      summary,
    };
  };
  if (!(PURPOSES[sweep.method] ?? []).includes(step.purpose))
    refuse('wrong_method', `a ${sweep.method} sweep has no ${step.purpose} step this signer signs`);
  if (ctx.preimage.kind !== 'tron-transaction')
    refuse('wrong_method', `a TRON sweep step signs a TRON transaction, not an ${ctx.preimage.kind}`);
  let type: number;
  try {
    type = contractTypeOf(ctx.preimage.rawDataHex);
  } catch {
    refuse('undecodable_transaction', 'raw_data is not a TRON transaction with a contract');
  }

  if (step.purpose === 'transfer') {
    if (type !== TRIGGER_SMART_CONTRACT_TYPE) refuse('wrong_method', 'a sweep transfer is one TriggerSmartContract');
    const source = await ctx.sourceByKey(ctx.key);
    if (!source || source.state !== 'planned') refuse('wrong_key', `the key is not a deposit key of sweep ${sweep.id} still to sweep`);
    const call = decodeTransferCall(tronTokenCallData(adapter, source.address, ctx.token, ctx.preimage, 'sweep transfer'));
    if (!call) refuse('wrong_method', 'the transaction is not one transfer(address,uint256) call');
    const to = canon(`41${call.to}`) ?? `41${call.to}`;
    const sent = send(to, call.amount, ctx.token.address);
    if (!ctx.destinations.includes(to)) refuse('wrong_recipient', `the transfer pays ${to}, not the merchant's hot wallet or treasury`);
    if (call.amount <= 0n || call.amount > source.planned_base)
      refuse('wrong_amount', `the transfer moves ${call.amount}; the ledger planned ${source.planned_base} from ${source.address}`);
    return sent;
  }

  let raw: SystemRawData;
  try {
    raw = decodeSystemRawData(ctx.preimage.rawDataHex);
  } catch {
    refuse('wrong_method', `a ${step.purpose} step is a TRX transfer or a resource delegation, not contract type ${type}`);
  }
  if (raw.contractCount !== 1) refuse('wrong_method', `a ${step.purpose} step is exactly one contract`);
  const to = canon(raw.to) ?? raw.to;

  if (step.purpose === 'activate' || step.purpose === 'fund') {
    if (raw.name !== 'TransferContract') refuse('wrong_method', `a ${step.purpose} step is a TRX transfer, not a ${raw.name}`);
    if (!isKey(ctx.gasStation.key) || raw.owner !== gasStation) refuse('wrong_key', `a ${step.purpose} step is sent by the gas station`);
    const source = await ctx.sourceByAddress(to);
    const sent = send(to, 0n, '', raw.amount);
    if (!source || source.state !== 'planned')
      refuse('wrong_recipient', `the ${step.purpose} pays ${to}, not a deposit address of sweep ${sweep.id} still to sweep`);
    const bound = step.purpose === 'activate' ? ACTIVATION_SUN : min(MAX_FUND_SUN, plannedValue(step.step));
    if (raw.amount <= 0n || raw.amount > bound)
      refuse('wrong_amount', `the ${step.purpose} sends ${raw.amount} sun; at most ${bound} sun for this step`);
    return sent;
  }

  if (step.purpose === 'delegate' || step.purpose === 'undelegate') {
    const contract = step.purpose === 'delegate' ? 'DelegateResourceContract' : 'UnDelegateResourceContract';
    if (raw.name !== contract) refuse('wrong_method', `a ${step.purpose} step is a ${contract}, not a ${raw.name}`);
    if (raw.resource !== 'ENERGY' || raw.lock || raw.lockPeriod !== 0n)
      refuse('wrong_method', `a sweep lends ENERGY without a lock, not ${raw.resource}${raw.lock ? ' locked' : ''}`);
    if (!isKey(ctx.resources.key) || raw.owner !== resources)
      refuse('wrong_key', `a ${step.purpose} step is sent by the resources account`);
    const source = await ctx.sourceByAddress(to);
    const sent = send(to, 0n, '', raw.amount);
    // Lent before the transfer (a source still to sweep); taken back after it, whatever the source's state.
    if (!source || (step.purpose === 'delegate' && source.state !== 'planned'))
      refuse('wrong_recipient', `the ${step.purpose} names ${to}, not a deposit address of sweep ${sweep.id}`);
    if (raw.amount <= 0n) refuse('wrong_amount', `the ${step.purpose} moves no stake`);
    return sent;
  }

  // reclaim: a deposit key of this sweep sends its own TRX back to the gas station.
  if (raw.name !== 'TransferContract') refuse('wrong_method', `a reclaim is a TRX transfer, not a ${raw.name}`);
  const source = await ctx.sourceByKey(ctx.key);
  if (!source || canon(source.address) !== raw.owner) refuse('wrong_key', `the key is not the sending deposit key of sweep ${sweep.id}`);
  const sent = send(to, 0n, '', raw.amount);
  if (to !== gasStation) refuse('wrong_recipient', `the reclaim pays ${to}, not the gas station`);
  return sent;
}

/** The step's planned native value (the step JSON's `value`, a decimal string); 0 when absent or malformed. */
function plannedValue(step: Record<string, unknown>): bigint {
  const v = step['value'];
  return typeof v === 'string' && /^\d{1,40}$/.test(v) ? BigInt(v) : 0n;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
