import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositSetupOutboundStore } from '../../src/ledger/payments/deposit-setup-outbound-store.js';
import { ensureDepositSetup, settleDepositSetup } from '../../src/ledger/payments/deposit-setups.js';
import type { OutboundAttempt, OutboundStore } from '../../src/ledger/outbound/outbound-store.js';
import { completeRefund } from '../../src/ledger/refunds/refund-payouts.js';
import { refundOutboundStore } from '../../src/ledger/refunds/refund-outbound-store.js';
import { sweepOutboundStore } from '../../src/ledger/treasury/sweep-outbound-store.js';
import { createSweep, settleSweepStep, sweepSteps } from '../../src/ledger/treasury/sweeps.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// The attempt tables of every outbound kind kept by one store (src/ledger/outbound/attempt-store.ts), its state guard written
// once: an attempt, once settled (confirmed, dropped, replaced, failed), never goes back to `broadcast` or `signed`
// (src/ledger/outbound/outbound-store.ts). Two drivers of the same job (the worker's pass and the CLI's, or a duplicate job)
// and a receipt landing between them: driver A read the attempt live (signed, not yet broadcast) and goes to offer
// it; meanwhile driver B settles it (the receipt landed: confirmed; or proven expired: dropped); then A reports the
// node took the bytes. A's markBroadcast must not write the settled attempt back to `broadcast`.
// Real Postgres (a database of its own); the drivers are the kinds' OutboundStores, interleaved step by step.

let t: TestDatabase;
const MERCHANT = 'mch_guard';
let seq = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.insertInto('merchants').values({ id: MERCHANT, name: 'guard', webhook_url: null, webhook_secret_enc: 'x' }).execute();
}, 120_000);
afterAll(async () => {
  await t?.destroy();
});

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

/** An open session of the merchant on ethereum/USDT with a deposit address of its own. */
async function session(): Promise<{ id: string; address: string }> {
  const n = ++seq;
  const id = `cs_guard${n}`;
  const address = addr(0xd000 + n);
  await sql`insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, target_currency, target_amount_minor,
              hd_account, network, token, deposit_address, expires_at)
            values (${id}, ${MERCHANT}, 'test', ${id}, 100, 'USDT', 'USDT', 100, 1, 'ethereum', 'USDT', ${address},
                    now() + interval '1 day')`.execute(t.db);
  return { id, address };
}

/** What a test needs of one kind: its store, a fresh job in it, the job's attempt rows, and the landed receipt. */
interface Kind<J> {
  name: string;
  table: 'payout_attempts' | 'sweep_step_attempts' | 'deposit_setup_attempts';
  store: () => OutboundStore<J>;
  job: () => Promise<J>;
  /** Driver B: the attempt's transaction landed and is final; the job settles. */
  settle: (job: J, a: OutboundAttempt) => Promise<boolean>;
  /** Whether the kind takes account nonces (refunds and sweeps on EVM; deposit setups are Solana-only). */
  nonces: boolean;
}

const refunds: Kind<Awaited<ReturnType<typeof refundJob>>> = {
  name: 'refund payouts',
  table: 'payout_attempts',
  store: () => refundOutboundStore(t.db),
  job: refundJob,
  settle: async (job, a) => (await completeRefund(t.db, job.id, { id: a.id, tx_hash: a.txHash }, 1_000_000n)) !== undefined,
  nonces: true,
};

async function refundJob() {
  const s = await session();
  const id = `re_guard${seq}`;
  await t.db
    .insertInto('refunds')
    .values({
      id,
      merchant_id: MERCHANT,
      mode: 'test',
      refund_id: id,
      session_id: s.id,
      order_id: s.id,
      amount_minor: 100n,
      currency: 'USDT',
      network: 'ethereum',
      token: 'USDT',
      destination_address: addr(0xbeef),
      amount_base: 1_000_000n,
      request_fingerprint: 'x',
    } as never)
    .execute();
  const claimed = await refundOutboundStore(t.db).claim(id);
  if (claimed.kind !== 'job') throw new Error(`refund not claimed: ${claimed.status}`);
  return claimed.job;
}

const sweeps: Kind<Awaited<ReturnType<typeof sweepJob>>> = {
  name: 'sweep steps',
  table: 'sweep_step_attempts',
  store: () => sweepOutboundStore(t.db),
  job: sweepJob,
  settle: (job, a) =>
    settleSweepStep(
      t.db,
      job.step.id,
      { id: a.id, txHash: a.txHash },
      { swept: [], fee: 0n, nativeMoved: 0n },
      { block: { height: 10n, hash: hash(0xb10c) } },
    ),
  nonces: true,
};

async function sweepJob() {
  const s = await session();
  const sweep = await createSweep(t.db, {
    merchantId: MERCHANT,
    network: 'ethereum',
    mode: 'test',
    token: 'USDT',
    method: 'topup',
    destinationKind: 'treasury',
    destination: addr(0x7ea5),
    request: {},
    sources: [{ address: s.address, key: { curve: 'secp256k1', path: "m/44'/60'/1'/0/1" }, amount: 1_000_000n }],
    steps: [{ group: 0, purpose: 'transfer', from: s.address, estimatedFee: 0n, json: {} }],
    estimatedFee: 0n,
    feeShareBps: null,
  });
  if (!sweep) throw new Error('sweep not created');
  const [step] = await sweepSteps(t.db, sweep.id);
  const claimed = await sweepOutboundStore(t.db).claim(step!.id);
  if (claimed.kind !== 'job') throw new Error(`step not claimed: ${claimed.status}`);
  return claimed.job;
}

const setups: Kind<Awaited<ReturnType<typeof setupJob>>> = {
  name: 'deposit setups',
  table: 'deposit_setup_attempts',
  store: () => depositSetupOutboundStore(t.db),
  job: setupJob,
  settle: (job, a) =>
    settleDepositSetup(t.db, job.id, {
      txHash: a.txHash,
      attemptId: a.id,
      feePayer: addr(0xfee),
      block: { height: 10n, hash: hash(0xb10c) },
      fee: 0n,
      rentPaid: 0n,
    }),
  nonces: false,
};

async function setupJob() {
  const s = await session();
  const setup = await ensureDepositSetup(t.db, s.id);
  const claimed = await depositSetupOutboundStore(t.db).claim(String(setup!.id));
  if (claimed.kind !== 'job') throw new Error(`setup not claimed: ${claimed.status}`);
  return claimed.job;
}

/** Signs one attempt of `job` through the store (its nonce taken from the wallet's row where the kind has nonces). */
async function signOne<J>(kind: Kind<J>, store: OutboundStore<J>, job: J, txHash: string, sender: string): Promise<OutboundAttempt> {
  const r = await store.sign(job, null, async (trx) => {
    let nonce: bigint | null = null;
    if (kind.nonces) {
      const taken = await trx.takeNonce({ network: 'ethereum', mode: 'test', address: sender }, 0n);
      if (taken.kind !== 'taken') throw new Error('nonce not taken');
      nonce = taken.nonce;
    }
    return trx.record({ signed: { hash: txHash, raw: '0x01', sender }, txHash, sender, nonce, feeBumpPercent: 0 });
  });
  if (r === 'raced' || r === 'closed') throw new Error(`not signed: ${r}`);
  return r;
}

async function rowOf(kind: Kind<unknown>, id: bigint): Promise<{ state: string; detail: string | null }> {
  const r = await sql<{
    state: string;
    detail: string | null;
  }>`select state, detail from ${sql.table(kind.table)} where id = ${id}`.execute(t.db);
  return r.rows[0]!;
}

async function rowsOf(kind: Kind<unknown>, txHash: string): Promise<Array<{ id: bigint; state: string; detail: string | null }>> {
  const r = await sql<{ id: bigint; state: string; detail: string | null }>`
    select id, state, detail from ${sql.table(kind.table)} where tx_hash = ${txHash} order by id`.execute(t.db);
  return r.rows;
}

describe.each([refunds, sweeps, setups] as Array<Kind<unknown>>)('the attempts of $name', (kind) => {
  it('a receipt landing between two drivers: the confirmed attempt is never written back to broadcast', async () => {
    const store = kind.store();
    const job = await kind.job();
    const signed = await signOne(kind, store, job, hash(++seq), addr(0xa000 + seq));
    // Driver A reads the job's attempts: one live, never offered yet.
    const [seenByA] = await store.liveAttempts(job);
    expect(seenByA).toMatchObject({ id: signed.id, broadcast: false });
    // Driver B finds the receipt final and settles the job: the attempt is confirmed.
    expect(await kind.settle(job, seenByA!)).toBe(true);
    expect((await rowOf(kind, signed.id)).state).toBe('confirmed');
    // Driver A's offer went through (the node knows the bytes): it reports them broadcast, too late.
    await store.markBroadcast(job, seenByA!);
    expect((await rowOf(kind, signed.id)).state).toBe('confirmed');
    // Nor can a late drop undo the landing.
    await store.dropAttempt(job, seenByA!, 'expired before landing');
    expect((await rowOf(kind, signed.id)).state).toBe('confirmed');
    expect(await store.liveAttempts(job)).toEqual([]);
  });

  it('an attempt dropped between two drivers stays dropped: a late markBroadcast does not make it live again', async () => {
    const store = kind.store();
    const job = await kind.job();
    const signed = await signOne(kind, store, job, hash(++seq), addr(0xa000 + seq));
    const [seenByA] = await store.liveAttempts(job);
    expect(seenByA?.broadcast).toBe(false);
    // Driver B proves the bytes can never land (their validity ran out) and drops them.
    await store.dropAttempt(job, seenByA!, 'expired before landing');
    await store.markBroadcast(job, seenByA!);
    expect(await rowOf(kind, signed.id)).toEqual({ state: 'dropped', detail: 'expired before landing' });
    expect(await store.liveAttempts(job)).toEqual([]);
  });

  it('live attempts move forward: signed → broadcast → dropped, each once', async () => {
    const store = kind.store();
    const job = await kind.job();
    const signed = await signOne(kind, store, job, hash(++seq), addr(0xa000 + seq));
    await store.markBroadcast(job, signed);
    expect(await store.liveAttempts(job)).toMatchObject([{ id: signed.id, broadcast: true }]);
    await store.dropAttempt(job, signed, 'nonce too low');
    expect(await rowOf(kind, signed.id)).toEqual({ state: 'dropped', detail: 'nonce too low' });
    // A second drop with another reason (a slower driver) keeps the first reason.
    await store.dropAttempt(job, signed, 'expired before landing');
    expect((await rowOf(kind, signed.id)).detail).toBe('nonce too low');
  });

  // Issue 34 item 2: signed again at the same nonce and fee after a refusal, the bytes (and hash) are identical.
  it('identical bytes signed again after the attempt was dropped revive that attempt: one row, live, never a unique violation', async () => {
    const store = kind.store();
    const job = await kind.job();
    const txHash = hash(++seq);
    const sender = addr(0xa000 + seq);
    const first = await signOne(kind, store, job, txHash, sender);
    // The network refused the first offer: the nonce is given back where the kind has nonces, else the bytes dropped.
    const released = await store.releaseNonceIfLast(job, { network: 'ethereum', mode: 'test', address: sender }, first);
    expect(released).toBe(kind.nonces);
    if (!released) await store.dropAttempt(job, first, 'refused by the network before landing');
    expect((await rowOf(kind, first.id)).state).toBe('dropped');
    expect(await store.liveAttempts(job)).toEqual([]);

    const again = await signOne(kind, store, job, txHash, sender);
    expect(again.id).toBe(first.id);
    if (kind.nonces) expect(again.nonce).toBe(first.nonce);
    const rows = await rowsOf(kind, txHash);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.state).toBe('signed');
    expect(rows[0]!.detail).toMatch(/^signed again with identical bytes after it was dropped: refused by the network/);
    expect(await store.liveAttempts(job)).toMatchObject([{ id: first.id, broadcast: false }]);
  });

  it('the same hash on another job, or on a live attempt, is refused and nothing is stored', async () => {
    const store = kind.store();
    const job = await kind.job();
    const txHash = hash(++seq);
    const sender = addr(0xa000 + seq);
    await signOne(kind, store, job, txHash, sender);
    const other = await kind.job();
    await expect(signOne(kind, store, other, txHash, sender)).rejects.toThrow(/already recorded/);
    expect(await rowsOf(kind, txHash)).toHaveLength(1);
    expect(await store.liveAttempts(other)).toEqual([]);
  });
});
