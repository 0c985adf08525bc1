import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { KeyDeriver, TxSigner } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { ApiError } from '../domain/errors.js';
import type { Logger } from '../logger.js';
import type { NativePriceService } from '../rates/native-prices.js';
import type { PlannerDeps } from '../treasury/planner.js';

// What treasury and sweep actions need beyond the database and chains: the keys deriving the deposit and operator
// addresses, the signer (sending sweeps), the native prices (pricing fees), the engine's settings. Built by the entry
// point (the CLI's treasuryContext, the service's console) and handed to the operations as OperationsContext.treasury.

export interface TreasuryDeps {
  keys: KeyDeriver | null;
  signer: TxSigner | null;
  /** Throws when no price source is configured (then no batch can be priced). */
  prices: () => NativePriceService;
  engine: { pollMs: number; stuckAfterMs: number; feeBumpPercent: number };
}

/** What a sweep operation is given: the database, the chains of this process and the treasury's deps (if any). */
export interface SweepOpsDeps {
  db: Db;
  adapters: ChainRegistry;
  treasury: TreasuryDeps | undefined;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export const treasuryNotConfigured = (what: string): ApiError =>
  new ApiError(409, 'invalid_request_error', 'treasury_not_configured', what);

/** The planner's deps; refused (409) without the keys that derive the deposit addresses. */
export function plannerDepsOf(d: SweepOpsDeps): PlannerDeps {
  if (!d.treasury?.keys) throw treasuryNotConfigured('sweeping needs HD_MNEMONIC or HD_ACCOUNT_XPUBS to derive the deposit addresses');
  let prices: NativePriceService | null = null;
  try {
    prices = d.treasury.prices();
  } catch (err) {
    d.log?.warn({ err }, 'no native price source: every batch is reported as not priceable');
  }
  return { db: d.db, adapters: d.adapters, keys: d.treasury.keys, prices };
}
