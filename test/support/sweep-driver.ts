import type {
  ChainAdapter,
  SweepMethodImpl,
  SweepPlan,
  SweepRequest,
  SweepStep,
  SweepStepReceipt,
  TxOutcome,
  TxSigner,
} from '../../chains/types.js';

// A minimal, NON-persistent driver for chain-level sweep tests: plan, then for each group build, sign, broadcast and
// wait for every step to be final, then read what it moved. The service drives steps through the outbound engine
// (src/treasury/); this only proves what a chain's method builds and reads, against a real node or the fakes.

export interface DrivenStep {
  step: SweepStep;
  /** null when the method decided at build time that the step is not needed (nothing worth reclaiming). */
  hash: string | null;
  outcome: TxOutcome | null;
  receipt: SweepStepReceipt | null;
}

export interface DriveOptions {
  /** Called between polls of a pending transaction (mine a block on Anvil, advance the fake). */
  tick?: () => Promise<void>;
  pollMs?: number;
  timeoutMs?: number;
}

export async function driveSweep(
  adapter: ChainAdapter,
  method: SweepMethodImpl,
  signer: TxSigner,
  request: SweepRequest,
  options: DriveOptions = {},
): Promise<{ plan: SweepPlan; steps: DrivenStep[] }> {
  const plan = await method.plan(request);
  const steps: DrivenStep[] = [];
  const groups = [...new Set(plan.steps.map((s) => s.group))].sort((a, b) => a - b);
  for (const g of groups) {
    const inGroup = plan.steps.filter((s) => s.group === g);
    const sent: Array<{ step: SweepStep; hash: string | null }> = [];
    // Steps of one group from the same wallet take consecutive nonces.
    const nextNonce = new Map<string, bigint | null>();
    for (const step of inGroup) {
      let nonce = nextNonce.get(step.from.address);
      if (nonce === undefined) nonce = await adapter.getAccountNonce(step.from.address);
      const unsigned = await method.build(request, step, nonce, 0);
      if (!unsigned) {
        sent.push({ step, hash: null });
        continue;
      }
      const signed = await adapter.signTransfer(unsigned, signer);
      const res = await adapter.broadcast(signed);
      if (res.status === 'rejected') throw new Error(`step ${step.purpose} refused: ${res.reason} ${res.detail}`);
      if (nonce !== null) nextNonce.set(step.from.address, nonce + 1n);
      sent.push({ step, hash: signed.hash });
    }
    for (const { step, hash } of sent) {
      if (!hash) {
        steps.push({ step, hash, outcome: null, receipt: null });
        continue;
      }
      const outcome = await waitFinal(adapter, hash, options);
      const receipt = outcome.status === 'succeeded' ? await method.read(hash, request, step) : null;
      steps.push({ step, hash, outcome, receipt });
      if (outcome.status !== 'succeeded') return { plan, steps };
    }
  }
  return { plan, steps };
}

async function waitFinal(adapter: ChainAdapter, hash: string, options: DriveOptions): Promise<TxOutcome> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const o = await adapter.getTransactionOutcome(hash);
    if ((o.status === 'succeeded' || o.status === 'failed') && o.final) return o;
    if (Date.now() > deadline) throw new Error(`transaction ${hash} not final in time (last: ${o.status})`);
    if (options.tick) await options.tick();
    await new Promise((r) => setTimeout(r, options.pollMs ?? 50));
  }
}
