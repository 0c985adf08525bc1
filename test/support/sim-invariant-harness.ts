import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { InvariantContext, ReceivedDelivery, Violation } from '../../scripts/sim/contract.js';
import type { ServiceHarness } from './service-harness.js';
import type { ReceivedRequest, WebhookReceiver } from './webhook-receiver.js';
import { REDIS_URL } from './env.js';
import { evmHexToTron, tronBase58 } from '../../chains/tron/address.js';

// What the tests of the simulator's invariants over a real service share (test/sim/invariants*.test.ts): the
// receiver's requests as the simulator records deliveries, the invariants' context on the harness's Anvil, and a
// corruption made inside a transaction that is always rolled back.

const answered = (a: ReceivedRequest['answeredWith']): number => (typeof a === 'number' ? a : typeof a === 'object' ? a.status : 0);

/** The receiver's requests as the simulator's `ReceivedDelivery` list, in arrival order. */
export function simDeliveries(receiver: WebhookReceiver): ReceivedDelivery[] {
  return receiver.received.map((r, seq) => {
    let objectId = '';
    try {
      objectId = String(JSON.parse(r.body).data?.object?.id ?? '');
    } catch {}
    return { eventId: r.eventId ?? '', type: r.eventType ?? '', objectId, body: r.body, answered: answered(r.answeredWith), seq };
  });
}

/** The invariants' context over the harness (its Anvil as the one `ethereum` chain, 2 confirmations). */
export function simContext(h: ServiceHarness, receiver: WebhookReceiver, over: Partial<InvariantContext> = {}): InvariantContext {
  return {
    db: h.t.db,
    chains: {
      evm: [
        {
          network: 'ethereum',
          rpcUrl: h.node.url,
          chainId: 31337,
          tokens: { USDT: h.tokens.USDT.address, USDC: h.tokens.USDC.address },
          confirmations: 2,
        },
      ],
    },
    deliveries: simDeliveries(receiver),
    events: [],
    redis: { url: REDIS_URL, prefix: h.env.REDIS_KEY_PREFIX! },
    ...over,
  };
}

class Rollback extends Error {}

/** Runs `f` against a transaction that is always rolled back: the corruption never outlives the check. */
export async function rolledBack<T>(db: Kysely<Database>, f: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  let result: T | undefined;
  await db
    .transaction()
    .execute(async (trx) => {
      result = await f(trx);
      throw new Rollback();
    })
    .catch((e) => {
      if (!(e instanceof Rollback)) throw e;
    });
  return result as T;
}

/** The subjects of the violations of one invariant. */
export const subjects = (vs: Violation[], invariant: string): Array<string | undefined> =>
  vs.filter((v) => v.invariant === invariant).map((v) => v.subject);

/**
 * The invariants' context with TRON as the only chain: the fake java-tron at `fakeUrl` (its wallet API and /jsonrpc),
 * tokens as configured for the service (base58 for USDT, the 0x form for USDC: both accepted), 3 confirmations.
 */
export function tronSimContext(
  db: InvariantContext['db'],
  o: { fakeUrl: string; usdt: string; usdc: string; redisPrefix: string },
): InvariantContext {
  return {
    db,
    chains: {
      evm: [],
      tron: {
        walletApiUrl: o.fakeUrl,
        jsonRpcUrl: `${o.fakeUrl}/jsonrpc`,
        tokens: { USDT: tronBase58(evmHexToTron(o.usdt)), USDC: o.usdc },
        confirmations: 3,
      },
    },
    deliveries: [],
    events: [],
    redis: { url: REDIS_URL, prefix: o.redisPrefix },
  };
}

/** The invariants' context with Solana as the only chain: the LiteSVM endpoint at `rpcUrl`, read at `finalized`. */
export function solanaSimContext(
  db: InvariantContext['db'],
  o: { rpcUrl: string; mints: { USDT: string; USDC: string }; redisPrefix: string },
): InvariantContext {
  return {
    db,
    chains: { evm: [], solana: { rpcUrl: o.rpcUrl, mints: o.mints, confirmations: 'finalized' } },
    deliveries: [],
    events: [],
    redis: { url: REDIS_URL, prefix: o.redisPrefix },
  };
}

/** `tronSimContext` over a TRON service harness (its fake java-tron, tokens and Redis prefix). */
export const tronHarnessContext =
  (h: { fake: { url: string }; tokens: { USDT: { address: string }; USDC: { address: string } }; env: Record<string, string> }) =>
  (db: InvariantContext['db']): InvariantContext =>
    tronSimContext(db, {
      fakeUrl: h.fake.url,
      usdt: h.tokens.USDT.address,
      usdc: h.tokens.USDC.address,
      redisPrefix: h.env.REDIS_KEY_PREFIX!,
    });
