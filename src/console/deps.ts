import type { RateLimiter } from '../api/rate-limit.js';
import type { OperationsContext } from '../operations/context.js';
import type { ConsoleSettings } from './settings.js';

/** What every part of the console is given: the application layer's context, its settings, the GCRA limiter. */
export interface ConsoleDeps {
  ops: OperationsContext;
  settings: ConsoleSettings;
  limiter: RateLimiter;
  docsUrl: string;
}
