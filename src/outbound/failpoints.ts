// Fault injection for crash tests, one set of names for every kind of outbound transfer: when SP_FAILPOINTS names a
// point (comma-separated), the process kills itself there with SIGKILL, exactly as a power cut would. Unset in
// production; reading one variable at start-up is all it costs.
export const FAILPOINTS = [
  'outbound:after_sign',
  'outbound:after_broadcast',
  'outbound:after_receipt',
  'outbound:after_burnt_fee',
] as const;

/**
 * - after_sign: the signed bytes are committed, nothing was broadcast;
 * - after_broadcast: a node took the bytes, the ledger does not know yet;
 * - after_receipt: the landed transaction was read, the business row is not settled yet;
 * - after_burnt_fee: a landed transaction failed, its burnt fee is journaled, the business row is not failed yet.
 */
export type Failpoint = (typeof FAILPOINTS)[number];

const enabled = new Set(
  (process.env.SP_FAILPOINTS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

/** What a failpoint does when reached; the default kills the process where SP_FAILPOINTS names the point. */
export type FailpointAction = (name: Failpoint) => void;

export const killAtFailpoint: FailpointAction = (name) => {
  if (enabled.has(name)) process.kill(process.pid, 'SIGKILL');
};
