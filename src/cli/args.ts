import { parseArgs } from 'node:util';

export class UsageError extends Error {}

/** A command that ran and failed (exit code 1, its message alone on stderr). */
export class CliFailure extends Error {}

/** Parses `--name value` options strictly; unknown options are a usage error naming them. */
export function options<T extends Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>>(args: string[], spec: T) {
  try {
    return parseArgs({ args, options: spec, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function required(value: string | boolean | undefined, name: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);
}
