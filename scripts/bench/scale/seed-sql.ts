import { NETWORKS } from '../../../chains/registry.js';
import { PATTERN } from './sizes.js';

// The scale seeder's SQL (scripts/bench/scale/seed.ts): set-based INSERT ... SELECT generate_series statements, one
// range of sessions at a time, writing the rows the service writes (columns, id shapes, states, the journal's legs as
// src/ledger/journal/entries.ts builds them). Session g (1..S) decides everything about itself from g: its merchant
// (skewed: merchant 0 is the largest), mode (parity), network (all eight of the registry), token, amount, time (spread
// evenly over the simulated year) and fate (PATTERN, by g mod 20). Ids are `<prefix>_` + 24 base62 characters derived
// from g, so statements of later steps find the rows of earlier ones without a lookup table.

/** Temporary helpers (pg_temp: this session only) and the network table, built from the registry. */
export function setupSql(merchants: number, sessions: number): string {
  const nets = NETWORKS.flatMap((n, i) =>
    (['test', 'live'] as const).map((mode) => {
      const tokens = n[mode].tokens.length > 0 ? n[mode].tokens : n.live.tokens;
      const t = (sym: string) => tokens.find((x) => x.symbol === sym) ?? tokens[0]!;
      const canon = (a: string) => (n.family === 'evm' ? a.toLowerCase() : a);
      const q = (s: string) => `'${s.replace(/'/g, "''")}'`;
      return `(${i}, ${q(n.id)}, ${q(mode)}, ${q(n.family)}, ${n.blockTimeMs}, ${t('USDT').decimals}, ${t('USDC').decimals}, ${q(canon(t('USDT').address))}, ${q(canon(t('USDC').address))})`;
    }),
  );
  return `
    create function pg_temp.h(seed text) returns text language sql immutable as
      $$ select encode(sha256(convert_to(seed, 'UTF8')), 'hex') $$;
    create function pg_temp.b64(seed text) returns text language sql immutable as
      $$ select translate(encode(sha256(convert_to(seed, 'UTF8')) || sha256(convert_to(seed || '.', 'UTF8'))
                                 || sha256(convert_to(seed || '..', 'UTF8')), 'base64'), E'+/=\\n', '') $$;
    -- <prefix>_ and 24 base62 characters (src/domain/ids.ts).
    create function pg_temp.id(prefix text, seed text) returns text language sql immutable as
      $$ select prefix || '_' || substr(pg_temp.b64(prefix || seed), 1, 24) $$;
    -- Base58 (no 0, O, I, l).
    create function pg_temp.b58(seed text, len int) returns text language sql immutable as
      $$ select substr(translate(pg_temp.b64(seed), '0OIl', ''), 1, len) $$;
    -- A canonical address of the network's family: EVM lower-case hex, TRON 41-prefixed hex, Solana base58.
    create function pg_temp.addr(family text, seed text) returns text language sql immutable as
      $$ select case family when 'evm' then '0x' || substr(pg_temp.h(seed), 1, 40)
                            when 'tron' then '41' || substr(pg_temp.h(seed), 1, 40)
                            else pg_temp.b58(seed, 44) end $$;
    create function pg_temp.txh(family text, seed text) returns text language sql immutable as
      $$ select case family when 'evm' then '0x' || pg_temp.h(seed) when 'tron' then pg_temp.h(seed)
                            else pg_temp.b58(seed, 88) end $$;
    create function pg_temp.fee(family text) returns numeric language sql immutable as
      $$ select case family when 'evm' then 42000000000000::numeric when 'tron' then 13400000::numeric else 5000::numeric end $$;
    create temp table nets (i int, network text, mode text, family text, block_ms int, dec_usdt int, dec_usdc int,
                            usdt text, usdc text, primary key (i, mode));
    insert into nets values ${nets.join(',\n      ')};
    create temp table clock as select now() - interval '1 hour' - interval '365 days' as ys, ${sessions}::int as s, ${merchants}::int as m;
    create temp table mch (idx int primary key, id text not null, url text, hd_test int, hd_live int);`;
}

/** Session g's derived facts, for g in [lo, hi]: one row per session, the base of every per-session statement. */
const base = (lo: number, hi: number) => `
  (select g, c.ys, m.id as merchant_id, m.url, case when g % 2 = 0 then 'test' else 'live' end as mode,
          case when g % 2 = 0 then m.hd_test else m.hd_live end as hd,
          n.network, n.family, n.block_ms, case when g % 3 = 0 then 'USDC' else 'USDT' end as token,
          case when g % 3 = 0 then n.usdc else n.usdt end as contract,
          case when g % 3 = 0 then n.dec_usdc else n.dec_usdt end as dec,
          1000 + (g::bigint * 7919) % 99000 as amount, g % 20 as p,
          c.ys + ((g - 1)::float8 / c.s) * interval '365 days' as t,
          pg_temp.id('cs', g::text) as sid, pg_temp.addr(n.family, 'a' || g) as address
   from generate_series(${lo}, ${hi}) g
   cross join clock c
   join mch m on m.idx = floor(c.m * power(((g::bigint * 2654435761) % 1000003)::float8 / 1000003, 2.5))::int
   join nets n on n.i = (g * 31) % 8 and n.mode = case when g % 2 = 0 then 'test' else 'live' end) b`;

const amountBase = `(b.amount::numeric * 10::numeric ^ (b.dec - 2))`;
const blockOf = (at: string) => `(20000000 + floor(extract(epoch from (${at}) - b.ys) * 1000 / b.block_ms))::bigint`;

/** Statements that write sessions g in [lo, hi] and everything that hangs from them, in order. */
export function sessionRangeSql(lo: number, hi: number): { label: string; text: string }[] {
  const B = base(lo, hi);
  const paidAt = `b.t + interval '4 minutes'`;
  const secondAt = `b.t + interval '2 hours'`;
  const refundAt = `b.t + interval '3 days'`;
  return [
    {
      label: 'payment_sessions',
      text: `insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, description, success_url,
          cancel_url, metadata, target_currency, target_amount_minor, exchange_rate, rate_locked_at, network, token, hd_account,
          deposit_address, status, received_base, created_at, expires_at, paid_at, canceled_at, expired_at, quote_usdt_minor,
          quote_usdt_rate, quote_usdc_minor, quote_usdc_rate, shortfall_base)
        select b.sid, b.merchant_id, b.mode, 'order-' || b.g, b.amount, 'USD', 'Order ' || b.g, 'https://shop.example/ok',
          'https://shop.example/cancel', jsonb_build_object('customer_id', 'cus_' || (b.g % 50000)), b.token, b.amount, '1',
          b.t, b.network, b.token, b.hd, b.address,
          case when b.p < ${PATTERN.paidBelow} then 'paid' when b.p < ${PATTERN.expiredBelow} then 'expired' else 'canceled' end,
          case when b.p < ${PATTERN.paidBelow} then ${amountBase} else 0 end,
          b.t, b.t + interval '30 minutes',
          case when b.p < ${PATTERN.paidBelow} then ${paidAt} end,
          case when b.p >= ${PATTERN.expiredBelow} then b.t + interval '10 minutes' end,
          case when b.p >= ${PATTERN.paidBelow} and b.p < ${PATTERN.expiredBelow} then b.t + interval '30 minutes' end,
          b.amount, '1', b.amount, '1', case when b.p < ${PATTERN.paidBelow} then 0 end
        from ${B} order by b.g`,
    },
    {
      label: 'deposit_addresses',
      text: `insert into deposit_addresses (network, mode, address, session_id, created_at)
        select b.network, b.mode, b.address, b.sid, b.t + interval '20 seconds' from ${B} order by b.g`,
    },
    depositsSql(B, `b.p < ${PATTERN.paidBelow}`, 'dep', paidAt, `'credited', null::text`, `${amountBase}`),
    depositsSql(B, `b.p < ${PATTERN.secondDepositBelow}`, 'late', secondAt, `'unmatched', 'session_paid'`, `${amountBase} / 10`),
    {
      label: 'session_settlements',
      text: `insert into session_settlements (session_id, network, token, due_base, received_base, overpaid_base, paying_deposit_id,
          paid_at, shortfall_base)
        select b.sid, b.network, b.token, ${amountBase}, ${amountBase}, 0, pg_temp.id('dep', b.g::text), ${paidAt}, 0
        from ${B} where b.p < ${PATTERN.paidBelow}`,
    },
    {
      label: 'refunds',
      text: `with r as (
          insert into refunds (id, merchant_id, mode, refund_id, session_id, order_id, amount_minor, currency, reason, status,
            network, token, destination_address, amount_base, request_fingerprint, transaction_hash, receipt_number, created_at,
            signed_at, processed_at, delivered_base)
          select pg_temp.id('re', b.g::text), b.merchant_id, b.mode, 'refund-' || b.g, b.sid, 'order-' || b.g, b.amount, b.token,
            'requested_by_customer', 'completed', b.network, b.token, pg_temp.addr(b.family, 'f' || b.g), ${amountBase},
            pg_temp.h('fp' || b.g), pg_temp.txh(b.family, 'rt' || b.g), 'RCPT-' || to_char(${refundAt}, 'YYYYMMDD') || '-' || lpad(b.g::text, 7, '0'),
            ${refundAt}, ${refundAt} + interval '5 seconds', ${refundAt} + interval '1 minute', ${amountBase}
          from ${B} where b.g % ${PATTERN.refundEvery} = 0
          returning id, merchant_id, mode, session_id, network, token, amount_base, transaction_hash, processed_at),
        e as (
          insert into journal_entries (network, mode, tx_hash, leg_key, revision, kind, block_height, block_hash, merchant_id,
            session_id, object_type, object_id)
          select r.network, r.mode, r.transaction_hash, 'tx', 0, 'refund_payout',
            (20000000 + floor(extract(epoch from r.processed_at - c.ys) * 1000 / n.block_ms))::bigint,
            pg_temp.txh(n.family, 'bh' || r.transaction_hash), r.merchant_id, r.session_id, 'refund', r.id
          from r cross join clock c join nets n on n.network = r.network and n.mode = r.mode
          returning id, object_id)
        insert into journal_legs (entry_id, account, asset, amount)
        select e.id, l.account, l.asset, l.amount
        from e join r on r.id = e.object_id join nets n on n.network = r.network and n.mode = r.mode
        cross join lateral (values
          ('address:' || r.network || ':' || r.mode || ':' || pg_temp.addr(n.family, 'hot' || r.network || r.mode), r.network || ':' || r.mode || ':' || r.token, -r.amount_base),
          ('external', r.network || ':' || r.mode || ':' || r.token, r.amount_base),
          ('address:' || r.network || ':' || r.mode || ':' || pg_temp.addr(n.family, 'hot' || r.network || r.mode), r.network || ':' || r.mode || ':native', -pg_temp.fee(n.family)),
          ('fees:' || r.network, r.network || ':' || r.mode || ':native', pg_temp.fee(n.family))) as l(account, asset, amount)`,
    },
    {
      label: 'outbox_events',
      text: `insert into outbox_events (id, merchant_id, mode, type, aggregate_id, payload, created_at, relayed_at)
        select y.id, y.merchant_id, y.mode, y.type, y.agg,
          jsonb_build_object('id', y.id, 'type', y.type, 'created_at', floor(extract(epoch from y.at))::bigint,
                             'data', jsonb_build_object('object', y.object)),
          y.at, y.at + interval '1 second'
        from (select 'evt_' || ((extract(epoch from x.at) * 1000000)::bigint * 1000 + nextval('outbox_event_id_seq') % 1000) as id, x.*
        from (
          select b.merchant_id, b.mode, b.sid as agg,
            case when b.p < ${PATTERN.paidBelow} then 'payment.completed' when b.p < ${PATTERN.expiredBelow} then 'payment.expired'
                 else 'payment.cancelled' end as type,
            case when b.p < ${PATTERN.paidBelow} then ${paidAt} when b.p < ${PATTERN.expiredBelow} then b.t + interval '30 minutes'
                 else b.t + interval '10 minutes' end as at,
            jsonb_build_object('amount', to_char(b.amount / 100.0, 'FM999999990.00'),
              'status', case when b.p < ${PATTERN.paidBelow} then 'completed' when b.p < ${PATTERN.expiredBelow} then 'expired' else 'canceled' end,
              'currency', b.token, 'exchange_rate', '1', 'order_id', 'order-' || b.g, 'session_id', b.sid, 'source', 'api') as object,
            b.g * 2 as ord
          from ${B}
          union all
          select b.merchant_id, b.mode, pg_temp.id('re', b.g::text), 'refund.succeeded', ${refundAt} + interval '1 minute',
            jsonb_build_object('id', pg_temp.id('re', b.g::text), 'refund_id', 'refund-' || b.g, 'session_id', b.sid,
              'order_id', 'order-' || b.g, 'amount', b.amount, 'currency', b.token, 'status', 'succeeded', 'network', b.network,
              'transaction_hash', pg_temp.txh(b.family, 'rt' || b.g)),
            b.g * 2 + 1
          from ${B} where b.g % ${PATTERN.refundEvery} = 0) x) y
        order by y.at, y.ord`,
    },
  ];
}

/** Deposits of the sessions `where` picks, journaled in the same statement as withDepositEntries does it. */
function depositsSql(B: string, where: string, prefix: string, at: string, disposition: string, amount: string) {
  return {
    label: `deposits (${prefix})`,
    text: `with d as (
        insert into deposits (id, network, mode, tx_hash, log_index, block_number, block_hash, block_time, token, token_contract,
          from_address, to_address, amount_base, session_id, status, disposition, unmatched_reason, observed_at, confirmed_at)
        select pg_temp.id('dep', ${prefix === 'dep' ? '' : `'${prefix}' || `}b.g::text), b.network, b.mode, pg_temp.txh(b.family, '${prefix}' || b.g), 0,
          ${blockOf(at)}, pg_temp.txh(b.family, 'bh${prefix}' || b.g), ${at}, b.token, b.contract, pg_temp.addr(b.family, 'f' || b.g),
          b.address, ${amount}, b.sid, 'confirmed', ${disposition}, ${at} - interval '30 seconds', ${at}
        from ${B} where ${where} order by b.g
        returning id, network, mode, tx_hash, log_index, block_number, block_hash, token, to_address, amount_base, session_id),
      ins as (
        insert into journal_entries (network, mode, tx_hash, leg_key, revision, kind, block_height, block_hash, merchant_id,
          session_id, object_type, object_id)
        select d.network, d.mode, d.tx_hash, 'log:' || d.log_index, 0, 'deposit', d.block_number, d.block_hash, s.merchant_id,
          d.session_id, 'deposit', d.id
        from d join payment_sessions s on s.id = d.session_id where d.amount_base <> 0
        order by d.block_number, d.tx_hash, d.log_index
        returning id, object_id)
      insert into journal_legs (entry_id, account, asset, amount)
      select ins.id, l.account, d.network || ':' || d.mode || ':' || d.token, l.amount
      from ins join d on d.id = ins.object_id
      cross join lateral (values ('external', -d.amount_base),
                                 ('address:' || d.network || ':' || d.mode || ':' || d.to_address, d.amount_base)) as l(account, amount)`,
  };
}

/** The hot wallets' opening balances: what the seeded refunds paid out and burnt in fees (never a negative balance). */
export const OPENING_BALANCES_SQL = `
  with spent as (
    select e.network, e.mode, l.account, l.asset, -sum(l.amount) as amount
    from journal_entries e join journal_legs l on l.entry_id = e.id
    where e.kind = 'refund_payout' and l.account like 'address:%' group by 1, 2, 3, 4),
  e as (
    insert into journal_entries (network, mode, tx_hash, leg_key, revision, kind, block_height, merchant_id)
    select s.network, s.mode, 'opening:' || s.account, 'tx', 0, 'opening_balance', 20000000, null
    from (select distinct network, mode, account from spent) s
    returning id, network, mode, tx_hash)
  insert into journal_legs (entry_id, account, asset, amount)
  select e.id, l.account, l.asset, l.amount
  from e join spent s on 'opening:' || s.account = e.tx_hash
  cross join lateral (values (s.account, s.asset, s.amount), ('external', s.asset, -s.amount)) as l(account, asset, amount)`;
