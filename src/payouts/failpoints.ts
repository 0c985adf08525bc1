// Fault injection for crash tests: when SP_FAILPOINTS names a point (comma-separated), the process kills itself
// there with SIGKILL, exactly as a power cut would. Unset in production; reading one variable is all it costs.
const enabled = new Set((process.env.SP_FAILPOINTS ?? '').split(',').map((s) => s.trim()).filter(Boolean));

export type Failpoint = 'payout:after_sign' | 'payout:after_broadcast' | 'payout:after_receipt';

export function failpoint(name: Failpoint): void {
  if (enabled.has(name)) process.kill(process.pid, 'SIGKILL');
}
