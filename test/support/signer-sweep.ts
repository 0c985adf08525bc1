import type { ChainAdapter, SweepMethodImpl, SweepPlan, SweepRequest, TxOutcome, TxSigner } from '../../chains/types.js';
import type { Db } from '../../src/db/database.js';
import { createSweep, sweepSteps } from '../../src/ledger/treasury/sweeps.js';
import type { SweepStepRow } from '../../src/ledger/treasury/sweeps.js';
import { withIntent } from '../../src/signer/intent.js';
import { RemoteSigner } from '../../src/signer/remote-signer.js';
import { requestToJson, stepToJson } from '../../src/treasury/codec.js';

// Sweeps for the signer role's tests (docs/signer.md, "Sweep steps"): a real method's plan persisted as the ledger's
// sweep (what the planner writes), then its steps built by the method, signed through a RemoteSigner under each
// step's `sweep_step` intent, broadcast and waited for, group by group, as the outbound engine would drive them.

/** Persists `plan` of `request` as a running sweep of `merchantId`; answers its id and step rows (plan order). */
export async function persistSweep(
  db: Db,
  o: { merchantId: string; network: ChainAdapter['network']; method: string; request: SweepRequest; plan: SweepPlan },
): Promise<{ id: string; steps: SweepStepRow[] }> {
  const sweep = await createSweep(db, {
    merchantId: o.merchantId,
    network: o.network,
    mode: 'test',
    token: o.request.token,
    method: o.method,
    destinationKind: 'hot_wallet',
    destination: o.request.destination,
    request: requestToJson(o.request),
    sources: o.request.sources.map((s) => ({ address: s.address, key: s.key, amount: s.amount })),
    steps: o.plan.steps.map((s) => ({
      group: s.group,
      purpose: s.purpose,
      from: s.from.address,
      estimatedFee: s.estimatedFee,
      json: stepToJson(s),
    })),
    estimatedFee: o.plan.estimatedCost,
    feeShareBps: null,
  });
  if (!sweep) throw new Error('a source is already in a running sweep');
  return { id: sweep.id, steps: await sweepSteps(db, sweep.id) };
}

/** A RemoteSigner on `socketPath` asking under one step's intent. */
export function stepSigner(socketPath: string, sweepId: string, stepId: string): TxSigner {
  return withIntent(new RemoteSigner(socketPath) as unknown as TxSigner, { purpose: 'sweep_step', sweep_id: sweepId, step_id: stepId });
}

/** Every step of the persisted sweep, group by group: built, signed through the signer, broadcast, final. */
export async function driveThroughSigner(
  o: { adapter: ChainAdapter; method: SweepMethodImpl; request: SweepRequest; plan: SweepPlan; sweepId: string; steps: SweepStepRow[] },
  socketPath: string,
  tick: () => Promise<void>,
): Promise<Array<{ purpose: string; hash: string | null; outcome: TxOutcome | null }>> {
  const out: Array<{ purpose: string; hash: string | null; outcome: TxOutcome | null }> = [];
  const groups = [...new Set(o.plan.steps.map((s) => s.group))].sort((a, b) => a - b);
  for (const g of groups) {
    const sent: Array<{ purpose: string; hash: string | null }> = [];
    for (const [i, step] of o.plan.steps.entries()) {
      if (step.group !== g) continue;
      const unsigned = await o.method.build(o.request, step, null, 0);
      if (!unsigned) {
        sent.push({ purpose: step.purpose, hash: null });
        continue;
      }
      const signed = await o.adapter.signTransfer(unsigned, stepSigner(socketPath, o.sweepId, o.steps[i]!.id));
      const res = await o.adapter.broadcast(signed);
      if (res.status === 'rejected') throw new Error(`step ${step.purpose} refused by the node: ${res.reason} ${res.detail}`);
      sent.push({ purpose: step.purpose, hash: signed.hash });
    }
    for (const s of sent) {
      if (!s.hash) {
        out.push({ ...s, outcome: null });
        continue;
      }
      let outcome = await o.adapter.getTransactionOutcome(s.hash);
      for (let i = 0; i < 200 && !((outcome.status === 'succeeded' || outcome.status === 'failed') && outcome.final); i++) {
        await tick();
        outcome = await o.adapter.getTransactionOutcome(s.hash);
      }
      out.push({ ...s, outcome });
    }
  }
  return out;
}
