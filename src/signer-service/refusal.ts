import type { RefusalCode } from '../domain/signing.js';

// A signature the signer will not give, with its code (docs/signer.md, "Refusals") and a reason for the audit and
// the caller. Thrown inside the sign pipeline, turned into an audit row, a metric and a 403 at its edge.
export class Refusal extends Error {
  constructor(
    readonly code: RefusalCode,
    readonly reason: string,
  ) {
    super(`${code}: ${reason}`);
    this.name = 'Refusal';
  }
}

export function refuse(code: RefusalCode, reason: string): never {
  throw new Refusal(code, reason);
}
