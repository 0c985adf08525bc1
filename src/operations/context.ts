import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { KeyDeriver } from '../../chains/types.js';
import type { ReadDb } from '../db/read-db.js';
import type { Database } from '../db/schema.js';
import type { Clock } from '../domain/clock.js';
import type { Logger } from '../logger.js';
import type { SecretBox } from '../security/secret-box.js';
import type { TreasuryDeps } from './treasury-deps.js';

// The application layer (docs/architecture.md, "operations"): every operator and merchant action once, called by the
// CLI and by the console alike. A function here takes this context, the actor (for the audit row) and typed input,
// and returns data; printing (CLI) and HTTP (console) stay in their faces.

export interface OperationsContext {
  db: Kysely<Database>;
  /** Reporting reads (lists, search, exports): the read replica when READ_DATABASE_URL is set; absent: `db`. */
  reads?: ReadDb | undefined;
  box: SecretBox;
  redis: Redis;
  redisPrefix: string;
  /** The verified chain adapters of this process (explorer links, address checks, balances, decimals). */
  chains: ChainRegistry;
  clock: Clock;
  log: Logger;
  /** Derives the hot wallets' addresses (HD_MNEMONIC or HD_ACCOUNT_XPUBS); absent or null when not configured. */
  keys?: KeyDeriver | null;
  /** Hands a new or retried refund to the payout workers (BullMQ). */
  enqueuePayout(refundId: string): Promise<void>;
  /** The hosted pages' base URL (checkout links in a session's detail). */
  checkoutBaseUrl: string;
  /** The deployment's environment (chain settings for treasury and sweep actions). */
  env: Record<string, string | undefined>;
  /** Keys, signer, native prices and engine settings for treasury and sweep actions (as the CLI's treasuryContext builds
   * them); absent: those actions answer 409 treasury_not_configured and wallets are reported as unavailable. */
  treasury?: TreasuryDeps;
}
