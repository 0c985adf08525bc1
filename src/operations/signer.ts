import type { Db } from '../db/database.js';
import { readSignerState, setSignerPausedState, type SignerState } from '../ledger/signer/signer-state.js';
import { setSignerPaused } from '../metrics/signer.js';

// The signer's kill switch (docs/signer.md, "Pause"): paused, the signer role refuses every signature with `paused`
// (the outbound engine's sends wait, nothing fails) until resumed. Each change is a signer_audit row naming its actor.

export interface SignerStatus {
  paused: boolean;
  changed_at: string;
  changed_by: string | null;
  reason: string | null;
}

const view = (s: SignerState): SignerStatus => ({
  paused: s.paused,
  changed_at: s.changedAt.toISOString(),
  changed_by: s.changedBy,
  reason: s.reason,
});

export async function pauseSigner(db: Db, actor: string, reason: string | null): Promise<SignerStatus & { was_paused: boolean }> {
  const r = await setSignerPausedState(db, { paused: true, actor, reason });
  setSignerPaused(true);
  return { ...view(r.after), was_paused: r.before.paused };
}

export async function resumeSigner(db: Db, actor: string): Promise<SignerStatus & { was_paused: boolean }> {
  const r = await setSignerPausedState(db, { paused: false, actor, reason: null });
  setSignerPaused(false);
  return { ...view(r.after), was_paused: r.before.paused };
}

export async function signerStatus(db: Db): Promise<SignerStatus> {
  return view(await readSignerState(db));
}
