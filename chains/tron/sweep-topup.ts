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
  BandwidthBudget,
  SYSTEM_TX_BYTES,
  TRANSFER_BYTES,
  accountState,
  buildSystemStep,
  sourcesWithEstimates,
  tronStep,
  readSweepStep,
  requestTargets,
  sweepChainParams,
  withMargin,
} from './sweep-common.js';
import type { TronTokenSender, TronTxBody } from './token-sender.js';

// 'tron-trx-topup' (fallback, no staked energy): the gas station sends each deposit address the TRX its transfer will
// burn, sized from the energy estimate (+ margin) × getEnergyFee, plus bandwidth × getTransactionFee when the account
// has no free bandwidth left today; that transfer also activates a new account (the gas station pays the creation
// fees). Group 0 `fund`, group 1 `transfer`. The margin not burnt stays on the deposit address (counted as cost).

export class TronTrxTopupSweep implements SweepMethodImpl<TronTxBody> {
  readonly method = 'tron-trx-topup' as const;

  constructor(private readonly sender: TronTokenSender) {}

  async available(): Promise<{ ok: true }> {
    return { ok: true };
  }

  async plan(request: SweepRequest): Promise<SweepPlan> {
    const { token, destination } = requestTargets(this.sender, request);
    const p = await sweepChainParams(this.sender);
    const gas = await accountState(this.sender, request.gasStation.address);
    let gasBandwidth = new BandwidthBudget(gas, p);
    // The gas station's TRX pays every top-up: a source it cannot pay for is skipped, naming the gas station.
    let gasTrx = gas.balanceSun;
    const gasCanon = normalizeTronAddress(request.gasStation.address) ?? request.gasStation.address;
    const steps: SweepStep[] = [];
    const skipped: SweepPlan['skipped'] = [];
    let cost = 0n;
    for await (const { source, address, estimate } of sourcesWithEstimates(this.sender, request, { token, destination }, skipped)) {
      const st = await accountState(this.sender, address);
      // A new account gets the free daily bandwidth once created; an existing one may have used it today.
      const bandwidthBurn = st.exists && st.freeNetLeft + st.stakedNetLeft < TRANSFER_BYTES ? TRANSFER_BYTES * p.bandwidthSun : 0n;
      const energyBurn = estimate * p.energySun;
      const need = withMargin(estimate, this.sender.energyMarginPercent) * p.energySun + bandwidthBurn;
      const missing = need - st.balanceSun;
      if (missing > 0n) {
        const trial = gasBandwidth.copy();
        const fee = st.exists ? trial.take(SYSTEM_TX_BYTES) : p.createNewAccountFeeSun + trial.take(SYSTEM_TX_BYTES, true);
        if (fee + missing > gasTrx) {
          skipped.push({
            address,
            reason: `gas station ${tronBase58(gasCanon)} lacks TRX for the top-up: needs ${fee + missing} sun, ${gasTrx} left`,
            waitsFor: { wallet: gasCanon, amount: fee + missing },
          });
          continue;
        }
        gasBandwidth = trial;
        gasTrx -= fee + missing;
        steps.push(
          tronStep({
            group: 0,
            purpose: 'fund',
            from: request.gasStation,
            to: address,
            value: missing,
            params: { need: need.toString(), energy: estimate.toString() },
            estimatedFee: fee,
          }),
        );
        // Sent TRX is spent: burnt by the transfer, or left on the address as the margin.
        cost += fee + missing - (energyBurn + bandwidthBurn < missing ? energyBurn + bandwidthBurn : missing);
      }
      const wallet = { key: source.key, address };
      steps.push(
        tronStep({
          group: 1,
          purpose: 'transfer',
          from: wallet,
          to: destination,
          sources: [address],
          params: { amount: source.amount.toString(), energy: estimate.toString() },
          estimatedFee: energyBurn + bandwidthBurn,
        }),
      );
      cost += energyBurn + bandwidthBurn;
    }
    return { method: this.method, steps, estimatedCost: cost, skipped };
  }

  async build(request: SweepRequest, s: SweepStep): Promise<UnsignedTransfer<TronTxBody> | null> {
    if (s.purpose === 'fund') {
      const st = await accountState(this.sender, s.to);
      const missing = BigInt(s.params.need!) - st.balanceSun;
      if (missing <= 0n) return null;
      return buildSystemStep(this.sender, request, s, 'TransferContract', missing < s.value ? missing : s.value);
    }
    if (s.purpose === 'transfer')
      return this.sender.build({ from: s.from, to: s.to, token: request.token, amount: BigInt(s.params.amount!) });
    throw new TransferRejectedError('invalid', `tron-trx-topup has no ${s.purpose} step`);
  }

  read(hash: string, request: SweepRequest, s: SweepStep) {
    return readSweepStep(this.sender, hash, request, s);
  }
}
