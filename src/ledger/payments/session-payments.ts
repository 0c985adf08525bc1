import { CompiledQuery, sql, type Kysely, type Transaction } from 'kysely';
import { nameStatement } from '../../db/named-statements.js';
import type { Database } from '../../db/schema.js';
import { sessionReceivedFields, type ReceivedPayment } from '../../domain/events/session-received.js';
import { SESSION_COLUMNS, type SessionRow } from './session-row.js';

/**
 * The final deposits to each of these sessions' addresses, in chain order (issue 16 item 5): credited ones and
 * unmatched ones alike. Provisional and orphaned transfers are not money yet and are left out, and so are look-alike
 * tokens (`unsupported_token`: payments[] lists USDT and USDC only; operators see them). One query.
 */
export async function receivedPayments(
  db: Kysely<Database> | Transaction<Database>,
  sessionIds: readonly string[],
): Promise<Map<string, ReceivedPayment[]>> {
  const out = new Map<string, ReceivedPayment[]>(sessionIds.map((id) => [id, []]));
  if (sessionIds.length === 0) return out;
  const rows = await db
    .selectFrom('deposits')
    .select([
      'id',
      'session_id',
      'network',
      'token',
      'tx_hash',
      'amount_base',
      'from_address',
      'confirmed_at',
      'disposition',
      'unmatched_reason',
    ])
    .where(sql<boolean>`session_id = any(${[...new Set(sessionIds)]}::text[])`) // one parameter, however many sessions
    .where('status', '=', 'confirmed')
    .where('unmatched_reason', 'is distinct from', 'unsupported_token')
    .orderBy('block_number')
    .orderBy('log_index')
    .execute();
  for (const r of rows) {
    out.get(r.session_id!)?.push({
      id: r.id,
      network: r.network,
      token: r.token,
      txHash: r.tx_hash,
      amountBase: r.amount_base,
      from: r.from_address,
      confirmedAt: r.confirmed_at,
      disposition: r.disposition ?? 'unmatched',
      unmatchedReason: r.unmatched_reason,
    });
  }
  return out;
}

/** The deposit columns of findSessionReceived's join, under names no session column has. */
const RECEIVED_COLUMNS = [
  'd.id as received_id',
  'd.network as received_network',
  'd.token as received_token',
  'd.tx_hash as received_tx_hash',
  'd.amount_base as received_amount_base',
  'd.from_address as received_from',
  'd.confirmed_at as received_confirmed_at',
  'd.disposition as received_disposition',
  'd.unmatched_reason as received_unmatched_reason',
] as const;

/** The statement of findSessionReceived for session `id`, as Kysely builds it (compiled once, below). */
const sessionReceivedQuery = (db: Kysely<Database>, id: string) =>
  db
    .selectFrom('payment_sessions as s')
    .leftJoin('deposits as d', (j) =>
      j
        .onRef('d.session_id', '=', 's.id')
        .on('d.status', '=', 'confirmed')
        .on('d.unmatched_reason', 'is distinct from', 'unsupported_token'),
    )
    .select(SESSION_COLUMNS.map((c) => `s.${c}` as const))
    .select(RECEIVED_COLUMNS)
    .where('s.id', '=', id)
    .orderBy('d.block_number')
    .orderBy('d.log_index');
type SessionReceivedRow = Awaited<ReturnType<ReturnType<typeof sessionReceivedQuery>['execute']>>[number];

/**
 * Compiled once per database handle with a marker id; each call swaps the marker for its id. The text is fixed, so
 * it is named. Keyed by the handle (its dialect compiles the text), held weakly: no module-level mutable state.
 */
const ID_MARKER = '\u0000session-id';
const compiledFor = new WeakMap<Kysely<Database>, { sql: string; parameters: readonly unknown[]; idAt: number }>();
function sessionReceivedStatement(db: Kysely<Database>, id: string): CompiledQuery<SessionReceivedRow> {
  let compiled = compiledFor.get(db);
  if (!compiled) {
    const c = sessionReceivedQuery(db, ID_MARKER).compile();
    const idAt = c.parameters.indexOf(ID_MARKER);
    if (idAt < 0 || c.parameters.lastIndexOf(ID_MARKER) !== idAt) throw new Error('findSessionReceived: the id is not one parameter');
    nameStatement('sp_find_session_received', c.sql);
    compiled = { sql: c.sql, parameters: c.parameters, idAt };
    compiledFor.set(db, compiled);
  }
  const parameters = [...compiled.parameters];
  parameters[compiled.idAt] = id;
  return CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<SessionReceivedRow>;
}

/**
 * One session by primary key and what it received (the deposits receivedPayments returns, in the same order), in one
 * statement: the session left-joined to its final deposits, one row per deposit (one row of NULL deposit columns when
 * none). Ownership is for the caller to check (sessions.ts ownedBy): the primary key alone keeps the plan on it.
 * The hot read of GET /checkout/sessions/:id: compiled once and sent as a named prepared statement where the pool
 * allows (src/db/named-statements.ts).
 */
export async function findSessionReceived(
  db: Kysely<Database>,
  id: string,
): Promise<{ session: SessionRow; payments: ReceivedPayment[] } | undefined> {
  const { rows } = await db.executeQuery(sessionReceivedStatement(db, id));
  const first = rows[0];
  if (!first) return undefined;
  const session: Record<string, unknown> = {};
  for (const c of SESSION_COLUMNS) session[c] = first[c];
  const payments: ReceivedPayment[] = [];
  for (const r of rows) {
    if (r.received_id === null) continue; // the session's row when it received nothing
    payments.push({
      id: r.received_id,
      network: r.received_network!,
      token: r.received_token!,
      txHash: r.received_tx_hash!,
      amountBase: r.received_amount_base!,
      from: r.received_from,
      confirmedAt: r.received_confirmed_at,
      disposition: r.received_disposition ?? 'unmatched',
      unmatchedReason: r.received_unmatched_reason,
    });
  }
  return { session: session as SessionRow, payments };
}

/**
 * The extension fields of payment.completed / payment.expired for one session as it now stands (inside the
 * transaction that writes the event, so the deposits just confirmed are included).
 */
export async function receivedEventFields(
  trx: Transaction<Database>,
  s: Pick<SessionRow, 'id' | 'status' | 'token' | 'target_amount_minor' | 'received_base'>,
  decimals: (network: string, token: string) => number | undefined,
  display?: (network: string, canonical: string) => string,
): Promise<Record<string, unknown>> {
  const payments = (await receivedPayments(trx, [s.id])).get(s.id) ?? [];
  return sessionReceivedFields(
    { status: s.status, token: s.token, targetAmountMinor: s.target_amount_minor, receivedBase: s.received_base },
    payments,
    decimals,
    display,
  );
}
