import type { JustifiedSend } from './justified.js';
import type { SweepStepContext } from './sweep-step-context.js';
import { refuse } from './refusal.js';

// Justification of an EVM sweep step (docs/signer.md, "Sweep steps"): being written.

export async function justifyEvmSweepStep(ctx: SweepStepContext): Promise<JustifiedSend> {
  return refuse('purpose_not_supported', `EVM sweep steps (${ctx.step.purpose}) are not justified by this signer yet`);
}
