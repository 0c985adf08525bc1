// The logging surface the webhook components use; pino's Logger satisfies it. Never pass secrets or bodies.
export interface WebhookLogger {
  debug?(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: WebhookLogger = { info() {}, warn() {}, error() {} };

/** Only the message of an error: stacks and causes can carry URLs with credentials or response text. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
