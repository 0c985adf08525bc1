import { AbiCoder, concat, dataSlice, id, verifyAuthorization, type Transaction } from 'ethers';
import {
  CREATE2_DEPLOYER,
  SWEEP_DELEGATE_SALT,
  encodeSweepCall,
  sweepDelegateAddress,
  sweepDelegateInitCode,
} from '../../chains/evm/sweep-7702.js';
import type { KeyPath } from '../../chains/types.js';
import { evmTokenCallData, unsignedEvmTransaction } from './evm-token-call.js';
import type { JustifiedSend } from './justified.js';
import { refuse } from './refusal.js';
import type { SweepStepContext } from './sweep-step-context.js';
import { decodeTransferCall } from './transfer-call.js';

// Justification of an EVM sweep step (docs/signer.md, "Sweep steps, EVM"), for both methods:
//   evm-7702-batch: the deposit keys' EIP-7702 authorizations (to the delegate of the merchant's derived destinations
//     and the derived gas station, on the configured chain), the delegate's deployment (from the gas station, through
//     the CREATE2 deployer, exactly its init code), and the gas station's batch (to that delegate: `sweep(token, to,
//     sources, amounts)` with the registry's token, an allowed destination, verified sources of this sweep, amounts
//     within what the ledger planned per source, carrying only authorizations to that delegate);
//   evm-gas-topup: `fund` (gas station → a source of this sweep, native coin only, bounded), `transfer` (a verified
//     deposit key → the registry's token, `transfer(allowed destination, amount ≤ planned)`), and `reclaim` (a
//     verified deposit key → the derived gas station, native coin only).
// Fees and nonces are not checked (as for refunds): a forged fee spends the gas station's or a deposit address's native
// coin, never a token; a nonce the chain refuses does nothing.

/**
 * A top-up pays the gas of one token transfer: at most this much gas at the fund transaction's own fee cap (and at
 * most the step's planned value). A token transfer is ~35,000–65,000 gas, the planner adds 10 %; the bound leaves room
 * for the base fee to fall between plan and fund (the planned value is priced at the plan's fee cap).
 */
export const TOPUP_MAX_GAS = 300_000n;

const SWEEP_SELECTOR = id('sweep(address,address,address[],uint256[])').slice(0, 10);

export async function justifyEvmSweepStep(ctx: SweepStepContext): Promise<JustifiedSend> {
  const { sweep, step, adapter } = ctx;
  const canon = (a: string | null) => (a === null ? null : adapter.normalizeAddress(a));
  const gasStation = canon(ctx.gasStation.address)!;
  const isKey = (k: KeyPath) => ctx.key.curve === k.curve && ctx.key.path === k.path;
  const send = (to: string, amount: bigint, contract: string): JustifiedSend => {
    const summary = { to, token: sweep.token, contract, amount_base: amount.toString() };
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
  const purposes =
    sweep.method === 'evm-7702-batch' ? ['deploy', 'batch'] : sweep.method === 'evm-gas-topup' ? ['fund', 'transfer', 'reclaim'] : [];
  if (!purposes.includes(step.purpose)) refuse('wrong_method', `a ${sweep.method} sweep has no ${step.purpose} step this signer signs`);

  if (sweep.method === 'evm-7702-batch') {
    const delegate = sweepDelegateAddress(gasStation, ctx.destinations);
    if (ctx.preimage.kind === 'evm-authorization') {
      // A deposit key consents that its account runs the delegate's code: only the delegate bound to this merchant's
      // destinations and our gas station, only on this chain (chain id 0 would authorize it on every chain).
      if (step.purpose !== 'batch') refuse('wrong_method', `a ${step.purpose} step carries no authorization`);
      const source = await ctx.sourceByKey(ctx.key);
      if (source?.state !== 'planned') refuse('wrong_key', `the key is not a deposit key of sweep ${sweep.id} still to sweep`);
      const chainId = ctx.adapters.chainId(sweep.network, sweep.mode);
      if (chainId === undefined || BigInt(ctx.preimage.chainId) !== chainId)
        refuse(
          'wrong_chain',
          `the authorization is for chain id ${ctx.preimage.chainId}, ${sweep.network} is ${chainId ?? 'not configured'}`,
        );
      if (canon(ctx.preimage.address) !== delegate)
        refuse('wrong_contract', `the authorization delegates to ${ctx.preimage.address}, not the merchant's sweep delegate ${delegate}`);
      return send(delegate, 0n, delegate);
    }
    if (!isKey(ctx.gasStation.key)) refuse('wrong_key', `a ${step.purpose} step is sent by the gas station`);
    if (step.purpose === 'deploy') {
      const tx = unsignedEvmTransaction(ctx.adapters, sweep, ctx.preimage);
      if (canon(tx.to) !== canon(CREATE2_DEPLOYER))
        refuse('wrong_contract', `the deployment calls ${tx.to ?? 'no contract'}, not the CREATE2 deployer`);
      if (tx.value !== 0n) refuse('native_value', `the deployment carries ${tx.value} wei`);
      const expected = concat([SWEEP_DELEGATE_SALT, sweepDelegateInitCode(gasStation, ctx.destinations)]).toLowerCase();
      if (tx.data.toLowerCase() !== expected) refuse('wrong_method', "the deployment is not the merchant's sweep delegate's init code");
      return send(delegate, 0n, CREATE2_DEPLOYER);
    }
    return justifyBatch(ctx, unsignedEvmTransaction(ctx.adapters, sweep, ctx.preimage, [2, 4]), delegate, send);
  }

  const tx = unsignedEvmTransaction(ctx.adapters, sweep, ctx.preimage);
  if (step.purpose === 'fund') {
    if (!isKey(ctx.gasStation.key)) refuse('wrong_key', 'a top-up is sent by the gas station');
    const to = canon(tx.to);
    const source = to === null ? null : await ctx.sourceByAddress(to);
    if (to === null || !source || source.state !== 'planned')
      refuse('wrong_recipient', `the top-up pays ${tx.to ?? 'no one'}, not a deposit address of sweep ${sweep.id} still to sweep`);
    if (tx.data !== '0x') refuse('wrong_method', 'a top-up carries no call');
    const feeCap = tx.maxFeePerGas ?? tx.gasPrice ?? 0n;
    const planned = plannedValue(step.step);
    if (tx.value > TOPUP_MAX_GAS * feeCap || tx.value > planned)
      refuse('wrong_amount', `the top-up sends ${tx.value} wei; at most ${TOPUP_MAX_GAS} gas at its fee cap and the planned ${planned}`);
    return send(to, 0n, '');
  }
  // transfer and reclaim are signed by a deposit key of this sweep, derived again from the seed.
  const source = await ctx.sourceByKey(ctx.key);
  if (!source) refuse('wrong_key', `the key is not a deposit key of sweep ${sweep.id}`);
  if (step.purpose === 'reclaim') {
    if (canon(tx.to) !== gasStation) refuse('wrong_recipient', `the reclaim pays ${tx.to ?? 'no one'}, not the gas station`);
    if (tx.data !== '0x') refuse('wrong_method', 'a reclaim carries no call');
    return send(gasStation, 0n, '');
  }
  if (source.state !== 'planned') refuse('not_payable', `deposit address ${source.address} is ${source.state} in sweep ${sweep.id}`);
  const call = decodeTransferCall(evmTokenCallData(ctx.adapters, adapter, sweep, ctx.token, ctx.preimage));
  if (!call) refuse('wrong_method', 'the transaction is not one transfer(address,uint256) call');
  const to = canon(`0x${call.to}`) ?? `0x${call.to}`;
  const sent = send(to, call.amount, ctx.token.address);
  if (!ctx.destinations.includes(to)) refuse('wrong_recipient', `the transfer pays ${to}, not the merchant's hot wallet or treasury`);
  if (call.amount > source.planned_base)
    refuse('wrong_amount', `the transfer moves ${call.amount}; the ledger planned ${source.planned_base} from ${source.address}`);
  return sent;
}

/** The gas station's sponsored batch: the delegate's `sweep` call, the sources and amounts, its authorizations. */
async function justifyBatch(
  ctx: SweepStepContext,
  tx: Transaction,
  delegate: string,
  send: (to: string, amount: bigint, contract: string) => JustifiedSend,
): Promise<JustifiedSend> {
  const { sweep, adapter } = ctx;
  const canon = (a: string) => adapter.normalizeAddress(a);
  if (tx.to === null || canon(tx.to) !== delegate)
    refuse('wrong_contract', `the batch calls ${tx.to ?? 'no contract'}, not the merchant's sweep delegate`);
  if (tx.value !== 0n) refuse('native_value', `the batch carries ${tx.value} wei`);
  const call = decodeSweepCall(tx.data);
  if (!call) refuse('wrong_method', 'the batch is not one sweep(address,address,address[],uint256[]) call');
  if (canon(call.token) !== canon(ctx.token.address))
    refuse('wrong_contract', `the batch sweeps ${call.token}, not the ${sweep.token} contract`);
  const to = canon(call.to) ?? call.to;
  const total = call.amounts.reduce((t, a) => t + a, 0n);
  const sent = send(to, total, ctx.token.address);
  if (!ctx.destinations.includes(to)) refuse('wrong_recipient', `the batch pays ${to}, not the merchant's hot wallet or treasury`);
  const sources = new Set<string>();
  for (const [i, raw] of call.sources.entries()) {
    const address = canon(raw);
    const source = address === null ? null : await ctx.sourceByAddress(address);
    if (address === null || !source || source.state !== 'planned' || sources.has(address))
      refuse('wrong_key', `batch source ${raw} is not a deposit address of sweep ${sweep.id} still to sweep (or is named twice)`);
    sources.add(address);
    if (call.amounts[i]! > source.planned_base)
      refuse('wrong_amount', `the batch moves ${call.amounts[i]} from ${address}; the ledger planned ${source.planned_base}`);
  }
  // Its authorizations were signed by this signer, each justified; checked again: the same delegate, this chain, and
  // only the batch's own sources.
  const chainId = ctx.adapters.chainId(sweep.network, sweep.mode);
  for (const a of tx.authorizationList ?? []) {
    if (a.chainId !== chainId) refuse('wrong_chain', `an authorization of the batch is for chain id ${a.chainId}`);
    if (canon(a.address) !== delegate) refuse('wrong_contract', `an authorization of the batch delegates to ${a.address}`);
    let authority: string | null = null;
    try {
      authority = canon(verifyAuthorization({ address: a.address, nonce: a.nonce, chainId: a.chainId }, a.signature));
    } catch {
      refuse('undecodable_transaction', 'an authorization of the batch has no valid signature');
    }
    if (authority === null || !sources.has(authority))
      refuse('wrong_key', `an authorization of the batch is by ${authority}, not one of its sources`);
  }
  return sent;
}

/** `sweep(token, to, sources, amounts)` read strictly: the selector and exactly the canonical encoding, nothing after. */
function decodeSweepCall(data: string): { token: string; to: string; sources: string[]; amounts: bigint[] } | null {
  if (data.length < 10 || data.slice(0, 10).toLowerCase() !== SWEEP_SELECTOR) return null;
  try {
    const [token, to, sources, amounts] = AbiCoder.defaultAbiCoder().decode(
      ['address', 'address', 'address[]', 'uint256[]'],
      dataSlice(data, 4),
    ) as unknown as [string, string, string[], bigint[]];
    const out = { token, to, sources: [...sources], amounts: [...amounts] };
    if (out.sources.length !== out.amounts.length || out.sources.length === 0) return null;
    // Canonical: re-encoded, the same bytes (no trailing data, no dirty padding, no aliased offsets).
    if (encodeSweepCall(token, to, out.sources, out.amounts).toLowerCase() !== data.toLowerCase()) return null;
    return out;
  } catch {
    return null;
  }
}

/** A fund step's planned value (wei) from the step JSON; 0 when unreadable (then no top-up is justified). */
function plannedValue(step: Record<string, unknown>): bigint {
  const v = step.value;
  return typeof v === 'string' && /^\d{1,40}$/.test(v) ? BigInt(v) : 0n;
}
