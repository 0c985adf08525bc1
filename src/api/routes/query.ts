import { z } from 'zod';

/** A query-string integer: digits only (no exponent, sign or hex), within bounds. */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,9}$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}
