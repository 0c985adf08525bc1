// THIS IS A FAKE's error: a transaction java-tron refuses, with its response code (BANDWITH_ERROR, SIGERROR,
// CONTRACT_VALIDATE_ERROR, ...) and message, as /wallet/broadcasttransaction answers them.
export class BroadcastRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
