import { id as keccakId, JsonRpcProvider, zeroPadValue } from 'ethers';
import { sql } from 'kysely';
import type { Invariant, InvariantContext, SimEvmChain, Violation } from './contract.js';

// The runner's own invariants (the checkers of scripts/sim/invariants/, branch s5-simcheck, are added to these when
// present): each reads the seed's database after the drain, the canonical chains through the nodes themselves (not
// the fault proxies), and what the webhook receiver got.

const TRANSFER = keccakId('Transfer(address,address,uint256)');

interface ChainLog {
  from: string;
  to: string;
  value: bigint;
  blockNumber: number;
  txHash: string;
}

/** Every Transfer of `token` on `chain` whose `to` (or `from`) is `address`, on the canonical chain. */
async function transfers(chain: SimEvmChain, token: string, o: { to?: string; from?: string }): Promise<ChainLog[]> {
  const provider = new JsonRpcProvider(chain.rpcUrl, undefined, { staticNetwork: true });
  try {
    const topic = (a?: string) => (a ? zeroPadValue(a.toLowerCase(), 32) : null);
    const logs = await provider.getLogs({
      address: chain.tokens[token],
      fromBlock: 0,
      toBlock: 'latest',
      topics: [TRANSFER, topic(o.from), topic(o.to)],
    });
    return logs.map((l) => ({
      from: `0x${l.topics[1]!.slice(26)}`,
      to: `0x${l.topics[2]!.slice(26)}`,
      value: BigInt(l.data),
      blockNumber: l.blockNumber,
      txHash: l.transactionHash,
    }));
  } finally {
    provider.destroy();
  }
}

async function blockTime(chain: SimEvmChain, n: number): Promise<number> {
  const provider = new JsonRpcProvider(chain.rpcUrl, undefined, { staticNetwork: true });
  try {
    const b = await provider.getBlock(n);
    return (b?.timestamp ?? 0) * 1000;
  } finally {
    provider.destroy();
  }
}

async function head(chain: SimEvmChain): Promise<number> {
  const provider = new JsonRpcProvider(chain.rpcUrl, undefined, { staticNetwork: true });
  try {
    return await provider.getBlockNumber();
  } finally {
    provider.destroy();
  }
}

/** No on-chain transfer is credited to a session twice (one credited deposit per network, tx and log index). */
export const noTransferCreditedTwice: Invariant = async ({ db }) => {
  const rows = await db
    .selectFrom('deposits')
    .select(['network', 'tx_hash', 'log_index', sql<string>`count(*)`.as('n')])
    .where('disposition', '=', 'credited')
    .groupBy(['network', 'tx_hash', 'log_index'])
    .having(sql`count(*)`, '>', 1)
    .execute();
  return rows.map((r) => ({
    invariant: 'no-transfer-credited-twice',
    message: `${r.network} ${r.tx_hash}#${r.log_index} credited ${r.n} times`,
    subject: r.tx_hash,
  }));
};

/** A session is paid iff the canonical chain holds enough confirmed transfers to its address before it expired. */
export const sessionPaidIffChainSays: Invariant = async ({ db, chains, events }) => {
  const out: Violation[] = [];
  const sessions = await db
    .selectFrom('payment_sessions')
    .leftJoin('session_settlements', 'session_settlements.session_id', 'payment_sessions.id')
    .select([
      'payment_sessions.id',
      'payment_sessions.network',
      'payment_sessions.token',
      'payment_sessions.deposit_address',
      'payment_sessions.status',
      'payment_sessions.expires_at',
      'payment_sessions.paid_at',
      'payment_sessions.shortfall_base',
      'session_settlements.due_base',
    ])
    .where('payment_sessions.deposit_address', 'is not', null)
    .execute();
  // The amount due for sessions that never got paid comes from the selection the runner logged (session.selected).
  const dueOf = new Map<string, bigint>();
  for (const e of events) if (e.kind === 'session.selected') dueOf.set(String(e.detail.sessionId), BigInt(String(e.detail.dueBase)));
  for (const s of sessions) {
    const chain = chains.evm.find((c) => c.network === s.network);
    if (!chain || !s.token || !s.deposit_address) continue;
    const tip = await head(chain);
    let sum = 0n;
    for (const t of await transfers(chain, s.token, { to: s.deposit_address })) {
      if (tip - t.blockNumber + 1 < chain.confirmations) continue;
      if ((await blockTime(chain, t.blockNumber)) > s.expires_at.getTime()) continue;
      sum += t.value;
    }
    const due = s.due_base !== null && s.due_base !== undefined ? BigInt(s.due_base) : dueOf.get(s.id);
    if (due === undefined) continue;
    const enough = sum + BigInt(s.shortfall_base ?? 0n) >= due;
    if (s.status === 'paid' && !enough)
      out.push({ invariant: 'session-paid-iff-chain', message: `paid with ${sum} of ${due} on chain before expiry`, subject: s.id });
    if (s.status !== 'paid' && sum >= due)
      out.push({
        invariant: 'session-paid-iff-chain',
        message: `${s.status} although ${sum} of ${due} landed before expiry`,
        subject: s.id,
      });
  }
  return out;
};

/** Each refund moved money at most once, exactly once when completed, and never when canceled or failed. */
export const refundsMovedOnce: Invariant = async ({ db, chains }) => {
  const out: Violation[] = [];
  const refunds = await db
    .selectFrom('refunds')
    .select(['id', 'refund_id', 'status', 'network', 'token', 'destination_address', 'amount_base', 'transaction_hash'])
    .execute();
  const attempts = await db.selectFrom('payout_attempts').select(['refund_id', 'state', 'sender', 'tx_hash']).execute();
  const groups = new Map<
    string,
    { completed: number; chain: SimEvmChain; token: string; sender: string; to: string; amount: bigint; ids: string[] }
  >();
  for (const r of refunds) {
    const mine = attempts.filter((a) => a.refund_id === r.id);
    const confirmed = mine.filter((a) => a.state === 'confirmed').length;
    if (confirmed > 1)
      out.push({ invariant: 'refund-moved-once', message: `${confirmed} confirmed payout attempts`, subject: r.refund_id });
    if (r.status === 'completed' && confirmed !== 1)
      out.push({ invariant: 'refund-moved-once', message: `completed with ${confirmed} confirmed attempts`, subject: r.refund_id });
    const chain = chains.evm.find((c) => c.network === r.network);
    const sender = mine[0]?.sender;
    if (!chain || !sender) continue;
    const key = `${r.network}|${r.token}|${sender.toLowerCase()}|${r.destination_address.toLowerCase()}|${r.amount_base}`;
    const g = groups.get(key) ?? {
      completed: 0,
      chain,
      token: r.token,
      sender,
      to: r.destination_address,
      amount: BigInt(r.amount_base),
      ids: [],
    };
    if (r.status === 'completed') g.completed++;
    g.ids.push(r.refund_id);
    groups.set(key, g);
  }
  for (const g of groups.values()) {
    const moved = (await transfers(g.chain, g.token, { from: g.sender, to: g.to })).filter((t) => t.value === g.amount).length;
    if (moved !== g.completed)
      out.push({
        invariant: 'refund-moved-once',
        message: `${moved} transfers of ${g.amount} from ${g.sender} to ${g.to} on chain, ${g.completed} refunds completed`,
        subject: g.ids.join(','),
      });
  }
  return out;
};

/** Every outbox event reached the receiver with a 2xx at least once, and always with the same body. */
export const everyEventDelivered: Invariant = async ({ db, deliveries }) => {
  const out: Violation[] = [];
  const events = await db
    .selectFrom('outbox_events')
    .innerJoin('merchants', 'merchants.id', 'outbox_events.merchant_id')
    .select(['outbox_events.id', 'outbox_events.type', 'merchants.webhook_url'])
    .execute();
  for (const e of events) {
    if (!e.webhook_url) continue;
    const got = deliveries.filter((d) => d.eventId === e.id);
    if (!got.some((d) => d.answered >= 200 && d.answered < 300))
      out.push({ invariant: 'every-event-delivered', message: `${e.type} never acknowledged (${got.length} attempts)`, subject: e.id });
    if (new Set(got.map((d) => d.body)).size > 1)
      out.push({ invariant: 'one-body-per-event', message: `${new Set(got.map((d) => d.body)).size} different bodies`, subject: e.id });
  }
  return out;
};

export const runnerInvariants: Record<string, Invariant> = {
  noTransferCreditedTwice,
  sessionPaidIffChainSays,
  refundsMovedOnce,
  everyEventDelivered,
};

export async function checkAll(invariants: Record<string, Invariant>, ctx: InvariantContext): Promise<Violation[]> {
  const out: Violation[] = [];
  for (const [name, inv] of Object.entries(invariants)) {
    try {
      out.push(...(await inv(ctx)));
    } catch (err) {
      out.push({ invariant: name, message: `the checker failed: ${(err as Error).message}` });
    }
  }
  return out;
}
