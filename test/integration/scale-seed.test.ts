import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSeeded } from '../../scripts/bench/scale/check.js';
import { seedScale, type SeededDatabase } from '../../scripts/bench/scale/seed.js';
import { scaleSizes } from '../../scripts/bench/scale/sizes.js';
import { runPrefix } from '../support/env.js';

// The scale benchmark's seeder (scripts/bench/scale/seed.ts) at a tiny factor: the rows it writes are the service's
// shapes (the real API answers GET for a seeded session), the journal balances, and the counts follow the factor.
const FACTOR = 0.0005;
let seeded: SeededDatabase;

beforeAll(async () => {
  seeded = await seedScale(FACTOR, () => {}, `${runPrefix()}_scale`);
}, 120_000);
afterAll(async () => {
  await seeded?.drop();
});

describe('scale seeder', () => {
  it('writes a balanced journal and sessions the signed API reads back', async () => {
    const check = await checkSeeded(seeded);
    expect(check.entries).toBeGreaterThan(0);
    expect(check.unbalanced).toBe(0);
    expect(check.entriesWithoutLegs).toBe(0);
    expect(check.getStatus).toBe(200);
    expect(check.getBody.id).toBe(check.session);
    expect(check.getBody.status).toBe('paid');
  });

  it('writes the counts the factor asks for, on all eight networks', async () => {
    const sizes = scaleSizes(FACTOR);
    const count = async (q: string) => Number((await sql.raw<{ n: string }>(q).execute(seeded.db)).rows[0]!.n);
    const charges = sizes.subscriptions * sizes.invoicesPerSubscription;
    expect(await count(`select count(*)::text as n from payment_sessions where id like 'cs\\_%'`)).toBe(sizes.sessions);
    expect(await count('select count(*)::text as n from deposits')).toBe(sizes.deposits);
    expect(await count('select count(*)::text as n from refunds')).toBe(sizes.refunds);
    expect(await count('select count(*)::text as n from subscription_charges')).toBe(charges);
    expect(await count('select count(*)::text as n from webhook_delivery_attempts')).toBe(sizes.webhookAttempts);
    expect(await count('select count(distinct network)::text as n from deposits')).toBe(8);
    // Every confirmed deposit is journaled once, and every paid session settled once.
    expect(await count(`select count(*)::text as n from journal_entries where kind = 'deposit'`)).toBe(sizes.deposits);
    expect(await count(`select count(*)::text as n from session_settlements`)).toBe(
      await count(`select count(*)::text as n from payment_sessions where status = 'paid' and id like 'cs\\_%'`),
    );
  });
});
