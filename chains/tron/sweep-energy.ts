import {
  TransferRejectedError,
  type SweepMethodImpl,
  type SweepPlan,
  type SweepRequest,
  type SweepStep,
  type UnsignedTransfer,
} from '../types.js';
import { normalizeTronAddress, tronBase58 } from './address.js';
import {
  ACTIVATION_SUN,
  BandwidthBudget,
  SYSTEM_TX_BYTES,
  TRANSFER_BYTES,
  accountState,
  buildSystemStep,
  delegatableSun,
  energyOfStake,
  sourcesWithEstimates,
  tronStep,
  readSweepStep,
  requestTargets,
  stakeForEnergy,
  sweepChainParams,
  withMargin,
} from './sweep-common.js';
import type { TronTokenSender, TronTxBody } from './token-sender.js';

// 'tron-energy-delegation' (preferred): the operator's resources account (OPERATOR_SLOT.resources) holds TRX staked for
// energy (Stake 2.0) and lends each deposit address exactly the energy its transfer needs, then takes it back. Per
// source: group 0 `activate` (a 1-sun TRX transfer from the gas station, only if the account does not exist) or `fund`
// (TRX for bandwidth, only if an existing account has no bandwidth left today); group 1 `delegate` (resources →
// deposit, the stake whose energy covers the estimate + margin); group 2 `transfer` (deposit → destination, energy from
// the delegation, bandwidth from the account's free daily allowance); group 3 `undelegate`. No TRX is burnt for the
// transfer's energy. docs/treasury-tron.md has the arithmetic and the security model.

/**
 * java-tron's refusals of an undelegation that has nothing (left) to take back (UnDelegateResourceActuator): "delegated
 * Resource does not exist", or "insufficient delegateFrozenBalance(Energy), ..." (sic; BANDWIDTH reads
 * "delegatedFrozenBalance"). Either means the delegation was already taken back.
 */
export const UNDELEGATE_GONE = /delegated Resource does not exist|insufficient delegated?FrozenBalance/i;

export class TronEnergyDelegationSweep implements SweepMethodImpl<TronTxBody> {
  readonly method = 'tron-energy-delegation' as const;

  constructor(
    private readonly sender: TronTokenSender,
    /** The resources account's canonical address once known (TronChainAdapter.deriveOperatorWallet), else null. */
    private readonly resourcesAddress: () => string | null,
  ) {}

  async available(): Promise<{ ok: true } | { ok: false; reason: string }> {
    const resources = this.resourcesAddress();
    if (!resources)
      return { ok: false, reason: 'TRON resources account not derived yet (deriveOperatorWallet(keys, OPERATOR_SLOT.resources))' };
    const max = await delegatableSun(this.sender, resources);
    if (max <= 0n)
      return {
        ok: false,
        reason: `TRON resources account ${tronBase58(resources)} has no staked energy to delegate (stake TRX for ENERGY with freezebalancev2)`,
      };
    return { ok: true };
  }

  async plan(request: SweepRequest): Promise<SweepPlan> {
    const { token, destination } = requestTargets(this.sender, request);
    const resources = request.resources && normalizeTronAddress(request.resources.address);
    if (!request.resources || !resources)
      throw new TransferRejectedError('invalid', 'tron-energy-delegation needs the resources account (request.resources)');
    const p = await sweepChainParams(this.sender);
    const [res, gas] = await Promise.all([accountState(this.sender, resources), accountState(this.sender, request.gasStation.address)]);
    let delegatable = await delegatableSun(this.sender, resources);
    let resBandwidth = new BandwidthBudget(res, p);
    // The resources account's own TRX pays the bandwidth its (un)delegations burn once its free and staked bandwidth is
    // used up. A delegation whose undelegation it could not pay would leave the energy lent out and the sweep stuck
    // after the tokens moved (the undelegate refused for BANDWITH_ERROR until someone tops the account up): such a
    // source is skipped here, with the reason, and the TRX top-up sweeps it instead.
    let resTrx = res.balanceSun;
    // Likewise the gas station's TRX pays each activation (or bandwidth top-up) and its fees: a source it cannot pay
    // for is skipped here, naming the gas station, rather than left running at a step no build can make.
    let gasBandwidth = new BandwidthBudget(gas, p);
    let gasTrx = gas.balanceSun;
    const gasCanon = normalizeTronAddress(request.gasStation.address) ?? request.gasStation.address;
    const steps: SweepStep[] = [];
    const skipped: SweepPlan['skipped'] = [];
    let cost = 0n;
    for await (const { source, address, estimate } of sourcesWithEstimates(this.sender, request, { token, destination }, skipped)) {
      const energy = withMargin(estimate, this.sender.energyMarginPercent);
      const stake = stakeForEnergy(energy, res.totalEnergyLimit, res.totalEnergyWeight);
      if (stake > delegatable) {
        skipped.push({
          address,
          reason: `resources account ${tronBase58(resources)} lacks delegatable energy: ${energy} energy needs ${stake} sun staked, ${delegatable} left`,
        });
        continue;
      }
      const resTrial = resBandwidth.copy();
      const delegateFee = resTrial.take(SYSTEM_TX_BYTES);
      const undelegateFee = resTrial.take(SYSTEM_TX_BYTES);
      if (delegateFee + undelegateFee > resTrx) {
        skipped.push({
          address,
          reason: `resources account ${tronBase58(resources)} lacks TRX for the bandwidth of delegating and taking back: needs ${delegateFee + undelegateFee} sun, ${resTrx} left`,
          waitsFor: { wallet: resources, amount: delegateFee + undelegateFee },
        });
        continue;
      }
      const wallet = { key: source.key, address };
      const st = await accountState(this.sender, address);
      const gasTrial = gasBandwidth.copy();
      let first: SweepStep | null = null;
      let firstSpend = 0n;
      if (!st.exists) {
        const fee = p.createNewAccountFeeSun + gasTrial.take(SYSTEM_TX_BYTES, true);
        first = tronStep({
          group: 0,
          purpose: 'activate',
          from: request.gasStation,
          to: address,
          value: ACTIVATION_SUN,
          estimatedFee: fee,
        });
        firstSpend = fee + ACTIVATION_SUN;
      } else if (st.freeNetLeft + st.stakedNetLeft < TRANSFER_BYTES && st.balanceSun < TRANSFER_BYTES * p.bandwidthSun) {
        // No bandwidth left today on an existing account: the transfer burns TRX for it, sent beforehand.
        const need = TRANSFER_BYTES * p.bandwidthSun;
        const fee = gasTrial.take(SYSTEM_TX_BYTES);
        first = tronStep({
          group: 0,
          purpose: 'fund',
          from: request.gasStation,
          to: address,
          value: need - st.balanceSun,
          params: { need: need.toString() },
          estimatedFee: fee,
        });
        firstSpend = fee + need - st.balanceSun;
      }
      if (firstSpend > gasTrx) {
        skipped.push({
          address,
          reason: `gas station ${tronBase58(gasCanon)} lacks TRX for the ${first!.purpose} step: needs ${firstSpend} sun, ${gasTrx} left`,
          waitsFor: { wallet: gasCanon, amount: firstSpend },
        });
        continue;
      }
      resBandwidth = resTrial;
      resTrx -= delegateFee + undelegateFee;
      delegatable -= stake;
      gasBandwidth = gasTrial;
      gasTrx -= firstSpend;
      if (first) steps.push(first);
      cost += firstSpend;
      const delegated = energyOfStake(stake, res.totalEnergyLimit, res.totalEnergyWeight);
      const params = { balance: stake.toString(), energy: delegated.toString(), estimate: estimate.toString() };
      steps.push(tronStep({ group: 1, purpose: 'delegate', from: request.resources, to: address, params, estimatedFee: delegateFee }));
      const transferFee = st.exists && st.freeNetLeft + st.stakedNetLeft < TRANSFER_BYTES ? TRANSFER_BYTES * p.bandwidthSun : 0n;
      steps.push(
        tronStep({
          group: 2,
          purpose: 'transfer',
          from: wallet,
          to: destination,
          sources: [address],
          params: { amount: source.amount.toString(), energy: estimate.toString() },
          estimatedFee: transferFee,
        }),
      );
      steps.push(tronStep({ group: 3, purpose: 'undelegate', from: request.resources, to: address, params, estimatedFee: undelegateFee }));
      cost += delegateFee + transferFee + undelegateFee;
    }
    return { method: this.method, steps, estimatedCost: cost, skipped };
  }

  async build(request: SweepRequest, s: SweepStep): Promise<UnsignedTransfer<TronTxBody> | null> {
    switch (s.purpose) {
      case 'activate': {
        const st = await accountState(this.sender, s.to);
        return st.exists ? null : buildSystemStep(this.sender, request, s, 'TransferContract', s.value);
      }
      case 'fund': {
        const st = await accountState(this.sender, s.to);
        const missing = BigInt(s.params.need ?? s.value.toString()) - st.balanceSun;
        if (missing <= 0n) return null;
        return buildSystemStep(this.sender, request, s, 'TransferContract', missing < s.value ? missing : s.value);
      }
      case 'delegate':
        return buildSystemStep(this.sender, request, s, 'DelegateResourceContract', BigInt(s.params.balance!));
      case 'undelegate':
        // Already taken back (a replay after a crash): nothing left to do.
        return buildSystemStep(this.sender, request, s, 'UnDelegateResourceContract', BigInt(s.params.balance!), UNDELEGATE_GONE);
      case 'transfer':
        return this.sender.build({ from: s.from, to: s.to, token: request.token, amount: BigInt(s.params.amount!) });
      default:
        throw new TransferRejectedError('invalid', `tron-energy-delegation has no ${s.purpose} step`);
    }
  }

  read(hash: string, request: SweepRequest, s: SweepStep) {
    return readSweepStep(this.sender, hash, request, s);
  }
}
