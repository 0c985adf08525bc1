import { Refusal } from '../operations/refunds-refusal.js';
import { UsageError } from './args.js';

/** An application-layer refusal (src/operations/) as the CLI's usage error: its sentence alone, exit code 2. */
export function usageOfRefusal(e: unknown): never {
  if (e instanceof Refusal) throw new UsageError(e.message);
  throw e;
}
