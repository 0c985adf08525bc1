import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import type { SecretBox } from '../../src/security/secret-box.js';
import { webhookSecretAad } from '../../src/security/sealed-column-aad.js';

// A year of console data written by set-based SQL (generate_series), for the console benchmark
// (scripts/bench/console.ts) and the console's query-plan test (test/integration/console-query-plans.test.ts).
// Deterministic: row i's merchant, time, network, token, status and amounts are functions of i, so a run at any size
// has the same spread. Per 20 sessions: 13 paid, 1 expired with money received (stranded), 4 expired, 1 canceled,
// 1 open. Deposits: one per paid or stranded session, a second for 4 in 20 (paid in two transfers), and unmatched
// deposits (no session) for the rest of `sessions` (deposits = sessions in all). Refunds on paid sessions, each with
// payout attempts; a webhook delivery per refund and per paid session up to `deliveries`; merchant 1 has a failing
// endpoint.

export interface ConsoleSeedSize {
  merchants: number;
  sessions: number;
  refunds: number;
  deliveries: number;
  /** The newest row's time; rows spread over the 365 days before it. */
  now: Date;
  /** Seals real webhook secrets for merchants 1–5 (the routes that open one); the others hold a placeholder. */
  box: SecretBox;
}

export const merchantIdOf = (n: number) => `mer_bench${String(n).padStart(5, '0')}`;
export const sessionIdOf = (i: number) => `cs_bench${String(i).padStart(8, '0')}`;

/** The deposit transaction hash of session i (its first deposit), as the seed writes it. */
export const txHashOf = (i: number) => `bench-tx-${i}-0`;
/** The deposit address of session i. */
export const depositAddressOf = (i: number) => `bench-addr-${i}`;

export async function seedConsoleData(db: Db, s: ConsoleSeedSize): Promise<void> {
  const { merchants: M, sessions: N, refunds: R, deliveries: W } = s;
  const now = s.now.toISOString();
  await sql`
    insert into merchants (id, name, webhook_url, webhook_secret_enc, created_at)
    select 'mer_bench' || lpad(m::text, 5, '0'), 'Bench shop ' || m, 'https://shop' || m || '.example/hooks', 'sealed',
      ${now}::timestamptz - interval '400 days'
    from generate_series(1, ${M}) m`.execute(db);
  for (let m = 1; m <= Math.min(5, M); m++) {
    const id = merchantIdOf(m);
    await sql`update merchants set webhook_secret_enc = ${s.box.seal(`whsec_bench_${m}`, webhookSecretAad(id))} where id = ${id}`.execute(
      db,
    );
  }
  await sql`
    insert into api_keys (id, merchant_id, mode, key_prefix, key_hash, secret_enc, created_at)
    select 'key_bench' || m || k.mode, 'mer_bench' || lpad(m::text, 5, '0'), k.mode, 'pk_' || k.mode || '_b' || m,
      md5('key' || m || k.mode), 'sealed', ${now}::timestamptz - interval '400 days'
    from generate_series(1, ${M}) m cross join (values ('test'), ('live')) k(mode)`.execute(db);

  // Sessions: i → merchant 1 + i % M; created at a pseudo-random second of the year (multiplicative hash of i).
  await sql`
    insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, metadata, target_currency,
      target_amount_minor, exchange_rate, rate_locked_at, network, token, hd_account, address_index, deposit_address,
      status, received_base, created_at, expires_at, paid_at, canceled_at, expired_at, quote_usdt_minor, quote_usdt_rate,
      quote_usdc_minor, quote_usdc_rate)
    select 'cs_bench' || lpad(i::text, 8, '0'), 'mer_bench' || lpad((1 + i % ${M})::text, 5, '0'),
      case when i % 10 = 0 then 'test' else 'live' end, 'order-' || i, a.amount, 'USD', '{}'::jsonb,
      case when i % 3 = 0 then 'USDC' else 'USDT' end, a.amount, '1', t.created,
      n.network, n.token, 1 + i % ${M}, 1000000000 + i, 'bench-addr-' || i,
      st.status, case when st.status = 'paid' or st.stranded then a.amount * 10000 else 0 end,
      t.created, t.created + interval '30 minutes',
      case when st.status = 'paid' then t.created + make_interval(secs => 30 + i % 600) end,
      case when st.status = 'canceled' then t.created + interval '5 minutes' end,
      case when st.status = 'expired' then t.created + interval '30 minutes' end,
      a.amount, '1', a.amount, '1'
    from generate_series(1, ${N}) i
    cross join lateral (select 100 + (i::bigint * 7907) % 99900 as amount) a
    cross join lateral (select ${now}::timestamptz - make_interval(secs => ((i::bigint * 2654435761) % 31536000)::double precision) - interval '2 hours' as created) t
    cross join lateral (select (array['ethereum','bsc','tron','solana'])[1 + (i / 7) % 4] as network,
                               case when i % 3 = 0 then 'USDC' else 'USDT' end as token) n
    cross join lateral (select case when i % 20 < 13 then 'paid' when i % 20 < 18 then 'expired'
                                    when i % 20 = 18 then 'canceled' else 'open' end as status,
                               i % 20 = 13 as stranded) st`.execute(db);
  await sql`update payment_sessions set expires_at = ${now}::timestamptz + interval '30 minutes'
            where status = 'open'`.execute(db);

  // Deposits: the first of every paid or stranded session, a second of 4 in 20, then unmatched ones up to N in all.
  await sql`
    insert into deposits (id, network, mode, tx_hash, log_index, block_number, block_hash, block_time, token,
      token_contract, from_address, to_address, amount_base, session_id, status, disposition, observed_at, confirmed_at)
    select 'dep_bench' || i || '_' || k, s.network, s.mode, 'bench-tx-' || i || '-' || k, 0, 1000000 + i, 'bench-block-' || i,
      s.created_at + make_interval(secs => 10 + k * 5), s.token, 'bench-token-' || s.token, 'bench-from-' || i,
      s.deposit_address, case when k = 0 and i % 20 < 4 then s.received_base / 2
                              when k = 1 then s.received_base - s.received_base / 2 else s.received_base end,
      s.id, 'confirmed', 'credited', s.created_at + make_interval(secs => 10 + k * 5),
      s.created_at + make_interval(secs => 20 + k * 5)
    from generate_series(1, ${N}) i
    join payment_sessions s on s.id = 'cs_bench' || lpad(i::text, 8, '0')
    cross join generate_series(0, case when i % 20 < 4 then 1 else 0 end) k
    where i % 20 < 14`.execute(db);
  const matched = await sql<{ n: string }>`select count(*)::text as n from deposits`.execute(db);
  const unmatched = N - Number(matched.rows[0]?.n ?? 0);
  await sql`
    insert into deposits (id, network, mode, tx_hash, log_index, block_number, block_hash, block_time, token,
      token_contract, from_address, to_address, amount_base, session_id, status, disposition, unmatched_reason,
      observed_at, confirmed_at)
    select 'dep_bench_u' || u, (array['ethereum','bsc','tron','solana'])[1 + u % 4], 'live', 'bench-utx-' || u, 0,
      2000000 + u, 'bench-ublock-' || u, t.at, 'USDT', 'bench-token-USDT', 'bench-ufrom-' || u, 'bench-addr-' || (u * 20 + 15),
      1000000, null, 'confirmed', 'unmatched', 'session_not_payable', t.at, t.at + interval '10 seconds'
    from generate_series(1, ${Math.max(0, unmatched)}) u
    cross join lateral (select ${now}::timestamptz - make_interval(secs => ((u::bigint * 40503) % 31536000)::double precision) - interval '2 hours' as at) t`.execute(
    db,
  );

  // Refunds: refund r on a paid session (i % 20 in 1..12), r's session spread over the year.
  const blocks = Math.max(1, Math.floor(N / 20));
  await sql`
    insert into refunds (id, merchant_id, mode, refund_id, session_id, order_id, amount_minor, currency, status,
      failure_reason, network, token, destination_address, amount_base, request_fingerprint, transaction_hash,
      receipt_number, created_at, signed_at, processed_at, canceled_at, delivered_base)
    select 'rf_bench' || r, s.merchant_id, s.mode, 'refund-' || r, s.id, s.order_id, greatest(1, s.amount_minor / 2),
      s.target_currency, st.status, case when st.status = 'failed' then 'insufficient_funds' end, s.network, s.token,
      'bench-from-' || x.i, greatest(1, s.amount_minor / 2) * 10000, md5('fp' || r),
      case when st.status in ('completed', 'processing', 'failed') then 'bench-rtx-' || r end, 'R-' || r,
      s.created_at + interval '1 hour', case when st.status <> 'pending' then s.created_at + interval '61 minutes' end,
      case when st.status in ('completed', 'failed') then s.created_at + interval '65 minutes' end,
      case when st.status = 'canceled' then s.created_at + interval '62 minutes' end,
      case when st.status = 'completed' then greatest(1, s.amount_minor / 2) * 10000 end
    from generate_series(1, ${R}) r
    cross join lateral (select 20 * ((r - 1) % ${blocks}) + 1 + ((r - 1) / ${blocks}) % 12 as i) x
    join payment_sessions s on s.id = 'cs_bench' || lpad(x.i::text, 8, '0')
    cross join lateral (select case when r % 100 < 90 then 'completed' when r % 100 < 93 then 'failed'
                                    when r % 100 < 95 then 'pending' when r % 100 < 97 then 'processing'
                                    else 'canceled' end as status) st`.execute(db);
  await sql`
    insert into payout_attempts (refund_id, network, mode, sender, nonce, tx_hash, signed, state, created_at, broadcast_at, settled_at)
    select f.id, f.network, f.mode, 'bench-hot-' || f.network, k, case when k = 1 then f.transaction_hash else f.transaction_hash || '-r' end,
      '{}'::jsonb, case when k = 0 then 'replaced' when f.status = 'completed' then 'confirmed' when f.status = 'failed' then 'failed'
                        else 'broadcast' end,
      f.signed_at, f.signed_at + interval '5 seconds', case when f.status in ('completed', 'failed') then f.processed_at end
    from refunds f cross join generate_series(case when f.id like '%0' then 0 else 1 end, 1) k
    where f.transaction_hash is not null`.execute(db);

  // Webhook deliveries (outbox event + delivery): one per refund, then per paid session, up to W; merchant 1's last
  // deliveries failed (a failing endpoint on the overview).
  await sql`
    insert into outbox_events (id, merchant_id, mode, type, aggregate_id, payload, created_at, relayed_at)
    select 'evt_bench' || w, s.merchant_id, s.mode, 'checkout.session.paid', s.id, '{}'::jsonb, s.paid_at, s.paid_at
    from generate_series(1, ${W}) w
    join payment_sessions s on s.id = 'cs_bench' || lpad((20 * ((w - 1) % ${blocks}) + ((w - 1) / ${blocks}) % 13)::text, 8, '0')
    where s.paid_at is not null`.execute(db);
  await sql`
    insert into webhook_deliveries (event_id, merchant_id, mode, event_type, body, status, attempts, last_status_code,
      last_error, delivered_at, failed_at, created_at, updated_at, next_attempt_at)
    select e.id, e.merchant_id, e.mode, e.type, '{"type":"checkout.session.paid"}', st.status, case when st.status = 'failed' then 8 else 1 end,
      case when st.status = 'failed' then 500 else 200 end, case when st.status = 'failed' then 'HTTP 500' end,
      case when st.status = 'delivered' then e.created_at + interval '1 second' end,
      case when st.status = 'failed' then e.created_at + interval '1 day' end, e.created_at, e.created_at, e.created_at
    from outbox_events e
    cross join lateral (select case when e.merchant_id = 'mer_bench00001' or e.seq % 50 = 0 then 'failed' else 'delivered' end as status) st
    where e.id like 'evt_bench%'`.execute(db);
  await sql`update webhook_deliveries set failed_at = ${now}::timestamptz - interval '1 hour'
            where event_id in (select event_id from webhook_deliveries where merchant_id = 'mer_bench00001'
                               order by created_at desc limit 5)`.execute(db);
  await sql`
    insert into console_audit (at, actor_kind, actor_id, actor_email, actor_role, action, object_type, object_id, merchant_id, ip)
    select ${now}::timestamptz - make_interval(secs => ((a::bigint * 3163) % 31536000)::double precision), 'console', 'cu_bench_op', 'op@bench.test',
      'operator', 'payment.cancel', 'payment_session', 'cs_bench' || lpad(a::text, 8, '0'),
      'mer_bench' || lpad((1 + a % ${M})::text, 5, '0'), '127.0.0.1'
    from generate_series(1, ${Math.max(10, Math.floor(N / 100))}) a`.execute(db);
}
