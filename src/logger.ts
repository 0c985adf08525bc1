// Structured JSON-line logger for the non-HTTP parts of the service (watchers, workers, jobs), in the same shape
// as the API's pino lines: {level, time, msg, ...fields}. Secrets must never be passed as fields.
const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity } as const;
export type LogLevel = keyof typeof LEVELS;

export interface Logger {
  debug(obj: Record<string, unknown>, msg: string): void;
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

export function createLogger(
  level: LogLevel,
  bindings: Record<string, unknown> = {},
  out: (line: string) => void = (l) => process.stdout.write(l),
): Logger {
  const min = LEVELS[level];
  const write = (lvl: number, obj: Record<string, unknown>, msg: string) => {
    if (lvl < min) return;
    const fields = Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, serialise(v)]));
    out(`${JSON.stringify({ level: lvl, time: Date.now(), ...bindings, ...fields, msg })}\n`);
  };
  return {
    debug: (o, m) => write(20, o, m),
    info: (o, m) => write(30, o, m),
    warn: (o, m) => write(40, o, m),
    error: (o, m) => write(50, o, m),
    child: (b) => createLogger(level, { ...bindings, ...b }, out),
  };
}

function serialise(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Error) return { type: v.name, message: v.message };
  return v;
}
