// What a remote signer answers instead of a signature. The outbound engine treats both as "wait": a signer that is
// down or refuses never fails a payout and never makes one sign twice (docs/signer.md).

/** The signer refused this signature, with its reason code (docs/signer.md, "Refusals"). */
export class SignerRefusedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`signer refused (${code}): ${message}`);
    this.name = 'SignerRefusedError';
  }
}

/** The signer could not be asked (not running, socket missing, timed out, or answered something unreadable). */
export class SignerUnavailableError extends Error {
  constructor(message: string) {
    super(`signer unavailable: ${message}`);
    this.name = 'SignerUnavailableError';
  }
}
