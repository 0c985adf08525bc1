import type { JustifiedSend } from './justified.js';
import type { SweepStepContext } from './sweep-step-context.js';
import { refuse } from './refusal.js';

// Justification of a Solana sweep step (docs/signer.md, "Sweep steps"). Not written yet: every Solana sweep step is refused
// `purpose_not_supported`, so a deployment that sweeps Solana keeps an in-process signer until it lands.
//
// The contract (sweep-step-context.ts `SweepStepContext`): `ctx` holds the ledger's rows (sweep, step, sources: never
// trusted for destinations), the wallets the signer derived (refunds hot wallet, treasury, allowed `destinations`,
// gas station, resources account), `sourceByKey`/`sourceByAddress` (a source whose deposit key derives from the seed
// under the merchant's account), the key asked for, the preimage and `seen` (what the audit shows). Answer the
// JustifiedSend (`amount`: token base units moved out of deposit addresses, 0 otherwise; `summary.to`: where they
// go) or refuse with a code. The common part re-checks that tokens go to an allowed destination and applies the limits.

export async function justifySolanaSweepStep(ctx: SweepStepContext): Promise<JustifiedSend> {
  return refuse('purpose_not_supported', `Solana sweep steps (${ctx.step.purpose}) are not justified by this signer yet`);
}
