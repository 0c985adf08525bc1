import { plainSession } from '../support/new-session.js';
import { randomBytes } from 'node:crypto';
import { ChainRegistry } from '../../chains/chain-registry.js';
import type { ChainAdapter } from '../../chains/types.js';
import type { Db } from '../../src/db/database.js';
import { insertSession } from '../../src/ledger/payments/sessions.js';

// Shared by the console's payments, refunds, stranded and search tests: a chain registry of one test network
// without a node (decimals, address checks, explorer links) and sessions made the way the API makes them.

export const EXPLORER = 'https://explorer.test/tx/{tx}';

export function fakeChains(): ChainRegistry {
  const adapter = {
    network: 'ethereum',
    mode: 'test',
    tokens: [
      { symbol: 'USDT', decimals: 6, contract: `0x${'ab'.repeat(20)}` },
      { symbol: 'USDC', decimals: 6, contract: `0x${'cd'.repeat(20)}` },
    ],
    normalizeAddress: (t: string) => (/^0x[0-9a-fA-F]{40}$/.test(t) ? t.toLowerCase() : null),
    displayAddress: (a: string) => a,
  } as unknown as ChainAdapter;
  return new ChainRegistry([{ adapter, explorerTxUrl: EXPLORER, confirmations: 12 }]);
}

export async function makeSession(
  db: Db,
  merchantId: string,
  o: { orderId?: string; amountMinor?: bigint; currency?: string; mode?: 'test' | 'live' } = {},
): Promise<string> {
  const id = `cs_${randomBytes(12).toString('hex')}`;
  await db.transaction().execute((trx) =>
    insertSession(
      trx,
      plainSession({
        id,
        merchantId,
        mode: o.mode ?? 'test',
        orderId: o.orderId ?? `order-${randomBytes(4).toString('hex')}`,
        amountMinor: o.amountMinor ?? 500n,
        currency: o.currency ?? 'USD',
      }),
    ),
  );
  return id;
}

export const auditRows = (db: Db, action: string) =>
  db.selectFrom('console_audit').selectAll().where('action', '=', action).orderBy('id').execute();
