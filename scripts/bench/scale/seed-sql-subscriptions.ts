// The scale seeder's subscriptions and webhook deliveries (scripts/bench/scale/seed.ts; helpers in seed-sql.ts).
// Subscription k (1..U): a monthly plan started in the simulated year's first month, with its payment method (the
// approval), and 12 paid invoices, each with its succeeded charge, the charge's payment (a pay_ row in
// payment_sessions, as charge-payment.ts writes it), the charge's journal entry (customer → settlement address) and the
// invoice.created / invoice.paid events.

const sub = `
  (select k, c.ys + ((k % 30) || ' days')::interval + ((k % 86400) || ' seconds')::interval as started,
          m.id as merchant_id, case when k % 2 = 0 then 'test' else 'live' end as mode,
          case when k % 2 = 0 then m.hd_test else m.hd_live end as hd,
          n.network, n.family, case when k % 3 = 0 then 'USDC' else 'USDT' end as token,
          case when k % 3 = 0 then n.dec_usdc else n.dec_usdt end as dec,
          500 + (k % 5) * 1000 as unit, 'cus_sub' || k as customer,
          pg_temp.id('sub', k::text) as sid, pg_temp.id('pm', k::text) as pmid, pg_temp.addr(n.family, 'own' || k) as owner,
          pg_temp.addr(n.family, 'charger' || n.network) as charger, pg_temp.addr(n.family, 'settle' || m.id || n.network) as dest
   from generate_series($1::int, $2::int) k cross join clock c
   join mch m on m.idx = floor(c.m * power(((k::bigint * 2654435761) % 1000003)::float8 / 1000003, 2.5))::int
   join nets n on n.i = (k * 31) % 8 and n.mode = case when k % 2 = 0 then 'test' else 'live' end) s`;

/** Invoice n (1..12) of subscription s. */
const inv = `${sub} cross join generate_series(1, 12) n
  cross join lateral (select pg_temp.id('in', s.k || '-' || n) as iid, pg_temp.id('pay', s.k || '-' || n) as pay,
                             s.started + ((n - 1) || ' months')::interval as ps, s.started + (n || ' months')::interval as pe,
                             pg_temp.txh(s.family, 'ch' || s.k || '-' || n) as tx,
                             (s.unit::numeric * 10::numeric ^ (s.dec - 2)) as base) i`;

export const SUBSCRIPTION_SQL: { label: string; text: string }[] = [
  {
    label: 'payment_methods',
    text: `insert into payment_methods (id, merchant_id, mode, customer, network, token, owner_address, spender_address,
        allowance_base, approval_tx_hash, approval_log_index, created_at, updated_at)
      select s.pmid, s.merchant_id, s.mode, s.customer, s.network, s.token, s.owner, s.charger,
        s.unit::numeric * 10::numeric ^ (s.dec - 2) * 24, pg_temp.txh(s.family, 'appr' || s.k), 0, s.started, s.started
      from ${sub}`,
  },
  {
    label: 'subscriptions',
    text: `insert into subscriptions (id, merchant_id, mode, customer, currency, price_id, product, unit_amount_minor, interval,
        quantity, status, payment_method_id, current_period_start, current_period_end, latest_invoice_id, paid_periods,
        period_number, auth_network, auth_token, auth_owner, auth_allowance_base, next_action, next_action_at, created_at, updated_at)
      select s.sid, s.merchant_id, s.mode, s.customer, 'USD', 'price_plan' || (s.k % 5), 'Plan ' || (s.k % 5), s.unit, 'month', 1,
        'active', s.pmid, s.started + interval '11 months', s.started + interval '12 months', pg_temp.id('in', s.k || '-12'), 12, 12,
        s.network, s.token, s.owner, s.unit::numeric * 10::numeric ^ (s.dec - 2) * 24, 'renew', s.started + interval '12 months',
        s.started, s.started + interval '11 months'
      from ${sub}`,
  },
  {
    label: 'payment_sessions (charge payments)',
    text: `insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, target_currency,
        target_amount_minor, exchange_rate, network, token, hd_account, status, received_base, created_at, expires_at, paid_at,
        quote_usdt_minor, quote_usdc_minor, shortfall_base)
      select i.pay, s.merchant_id, s.mode, 'inv-' || i.iid, s.unit, 'USD', s.token, s.unit, '1', s.network, s.token, s.hd, 'paid',
        i.base, i.ps, i.ps + interval '30 minutes', i.ps + interval '2 minutes', s.unit, s.unit, 0
      from ${inv}`,
  },
  {
    label: 'invoices',
    text: `insert into invoices (id, merchant_id, mode, subscription_id, customer, period_number, amount_due_minor,
        amount_paid_minor, currency, status, payment_status, billing_reason, period_start, period_end, due_date, payment_id,
        paid_at, attempt_count, created_at)
      select i.iid, s.merchant_id, s.mode, s.sid, s.customer, n, s.unit, s.unit, 'USD', 'paid', 'paid',
        case when n = 1 then 'subscription_create' else 'subscription_cycle' end, i.ps, i.pe, i.ps, i.pay,
        i.ps + interval '2 minutes', 1, i.ps
      from ${inv}`,
  },
  {
    label: 'subscription_charges',
    text: `with ch as (
        insert into subscription_charges (invoice_id, subscription_id, merchant_id, mode, network, token, owner_address,
          charger_address, destination_address, amount_base, state, tx_hash, payment_id, created_at, signed_at, settled_at,
          delivered_base)
        select i.iid, s.sid, s.merchant_id, s.mode, s.network, s.token, s.owner, s.charger, s.dest, i.base, 'succeeded', i.tx,
          i.pay, i.ps, i.ps + interval '5 seconds', i.ps + interval '2 minutes', i.base
        from ${inv}
        returning invoice_id, merchant_id, mode, network, token, destination_address, amount_base, tx_hash, payment_id, settled_at),
      e as (
        insert into journal_entries (network, mode, tx_hash, leg_key, revision, kind, block_height, block_hash, merchant_id,
          session_id, object_type, object_id)
        select ch.network, ch.mode, ch.tx_hash, 'tx', 0, 'charge',
          (20000000 + floor(extract(epoch from ch.settled_at - c.ys) * 1000 / n.block_ms))::bigint,
          pg_temp.txh(n.family, 'bh' || ch.tx_hash), ch.merchant_id, ch.payment_id, 'invoice', ch.invoice_id
        from ch cross join clock c join nets n on n.network = ch.network and n.mode = ch.mode
        returning id, object_id)
      insert into journal_legs (entry_id, account, asset, amount)
      select e.id, l.account, ch.network || ':' || ch.mode || ':' || ch.token, l.amount
      from e join ch on ch.invoice_id = e.object_id
      cross join lateral (values ('external', -ch.amount_base),
                                 ('address:' || ch.network || ':' || ch.mode || ':' || ch.destination_address, ch.amount_base))
        as l(account, amount)`,
  },
  {
    label: 'outbox_events (invoices)',
    text: `insert into outbox_events (id, merchant_id, mode, type, aggregate_id, payload, created_at, relayed_at)
      select y.id, y.merchant_id, y.mode, y.type, y.iid,
        jsonb_build_object('id', y.id, 'type', y.type, 'created_at', floor(extract(epoch from y.at))::bigint,
          'data', jsonb_build_object('object', jsonb_build_object('id', y.iid, 'object', 'invoice', 'subscription', y.sid,
            'customer', y.customer, 'status', y.st, 'amount_due', y.unit, 'amount_paid', case when y.st = 'paid' then y.unit else 0 end,
            'currency', 'USD', 'period_number', y.n))),
        y.at, y.at + interval '1 second'
      from (select 'evt_' || ((extract(epoch from x.at) * 1000000)::bigint * 1000 + nextval('outbox_event_id_seq') % 1000) as id, x.*
            from (select s.merchant_id, s.mode, s.sid, s.customer, s.unit, n, i.iid, t.type, t.st,
                    i.ps + case when t.st = 'paid' then interval '2 minutes' else interval '0' end as at
                  from ${inv} cross join (values ('invoice.created', 'open'), ('invoice.paid', 'paid')) t(type, st)) x) y
      order by y.at`,
  },
];

/** One delivery per event (seq in [$1, $2]), as the relay freezes it, delivered after `attempts` tries. */
export const DELIVERIES_SQL = `
  insert into webhook_deliveries (event_id, merchant_id, mode, event_type, body, status, generation, attempts, round_attempts,
    next_attempt_at, last_status_code, delivered_at, created_at, updated_at)
  select o.id, o.merchant_id, o.mode, o.type, o.payload::text, 'delivered', 0, a.n, a.n, o.relayed_at, 200,
    o.relayed_at + (a.n - 1) * interval '30 seconds' + interval '80 milliseconds', o.relayed_at,
    o.relayed_at + (a.n - 1) * interval '30 seconds' + interval '80 milliseconds'
  from outbox_events o
  cross join lateral (select $3::int + case when o.seq - $5::bigint < $4::bigint then 1 else 0 end as n) a
  where o.seq between $1 and $2
  order by o.seq`;

/** Every try of those deliveries: retries answered 500, the last one 200 (the attempt log as the worker writes it). */
export const ATTEMPTS_SQL = `
  insert into webhook_delivery_attempts (event_id, merchant_id, generation, attempt, url, status_code, error, latency_ms,
    response_excerpt, outcome, created_at)
  select d.event_id, d.merchant_id, 0, k, m.url, case when k = d.attempts then 200 else 500 end, null,
    case when k = d.attempts then 85 else 240 end,
    case when k = d.attempts then '{"received":true}' else 'Internal Server Error' end,
    case when k = d.attempts then 'delivered' else 'retrying' end,
    d.created_at + (k - 1) * interval '30 seconds'
  from outbox_events o join webhook_deliveries d on d.event_id = o.id join mch m on m.id = d.merchant_id
  cross join generate_series(1, d.attempts) k
  where o.seq between $1 and $2
  order by o.seq, k`;
