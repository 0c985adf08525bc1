// Business ids on log lines (docs/operations.md, "Logs"): one grep for a session, refund, charge, event or
// transaction id finds every line about it. Field names are the API's: session_id, refund_id, charge_id,
// subscription_id, invoice_id, event_id, deposit_id, tx_hash, network, mode; sweeps: sweep_id, sweep_step_id, merchant_id.

type FieldLogger = {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
};

/** `log` with `ids` added to every line (a child logger for loggers that have no child()). Fields of a line win. */
export function withIds<L extends FieldLogger>(log: L, ids: Record<string, string | undefined>): L {
  const fixed = Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== undefined));
  const wrapped = Object.create(log) as L;
  for (const level of ['info', 'warn', 'error'] as const) {
    wrapped[level] = (obj: Record<string, unknown>, msg: string) => log[level]({ ...fixed, ...obj }, msg);
  }
  return wrapped;
}

const AGGREGATE_FIELD: Record<string, string> = {
  cs: 'session_id',
  re: 'refund_id',
  sub: 'subscription_id',
  in: 'invoice_id',
  pay: 'payment_id',
  swp: 'sweep_id',
  sws: 'sweep_step_id',
};

/** The log field of an object id by its prefix (`cs_...` -> session_id); `object_id` for any other. */
export function idField(id: string): Record<string, string> {
  const prefix = /^([a-z]+)_/.exec(id)?.[1] ?? '';
  return { [AGGREGATE_FIELD[prefix] ?? 'object_id']: id };
}
