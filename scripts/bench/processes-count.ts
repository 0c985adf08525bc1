// The counting of scripts/bench/processes.ts, apart from the benchmark so a unit test runs it
// (test/unit/bench-processes-count.test.ts): did anything get delivered or paid twice, did anything get lost, and the
// CPU time read from /proc. No timing here.

export interface DeliveryCount {
  /** Events the benchmark wrote (and expected at the receiver). */
  events: number;
  /** Events the receiver answered exactly once. */
  exactlyOnce: number;
  /** Events the receiver got more than once (at-least-once delivery: a count, not an error by itself). */
  duplicated: number;
  /** Receiver hits beyond the first, over all events. */
  extraHits: number;
  /** Events the receiver never got. */
  missing: number;
  /** Receiver hits whose event id the benchmark did not write. */
  unexpected: number;
}

/** Receiver hits per event id against the events written. */
export function countDeliveries(expected: Iterable<string>, hits: ReadonlyMap<string, number>): DeliveryCount {
  const want = new Set(expected);
  const c: DeliveryCount = { events: want.size, exactlyOnce: 0, duplicated: 0, extraHits: 0, missing: 0, unexpected: 0 };
  for (const id of want) {
    const n = hits.get(id) ?? 0;
    if (n === 0) c.missing++;
    else if (n === 1) c.exactlyOnce++;
    else {
      c.duplicated++;
      c.extraHits += n - 1;
    }
  }
  for (const [id, n] of hits) if (!want.has(id)) c.unexpected += n;
  return c;
}

/** Nonces of one sender's confirmed transactions: gaps between the smallest and the largest, and repeats. */
export function nonceProblems(nonces: readonly bigint[]): {
  count: number;
  first: bigint | null;
  last: bigint | null;
  gaps: number;
  repeats: number;
} {
  const sorted = [...nonces].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let gaps = 0;
  let repeats = 0;
  for (let i = 1; i < sorted.length; i++) {
    const d = sorted[i]! - sorted[i - 1]!;
    if (d === 0n) repeats++;
    else if (d > 1n) gaps += Number(d - 1n);
  }
  return { count: sorted.length, first: sorted[0] ?? null, last: sorted[sorted.length - 1] ?? null, gaps, repeats };
}

export interface PayoutInputs {
  /** The refunds the benchmark created, with their final status. */
  refunds: ReadonlyArray<{ id: string; status: string }>;
  /** The ledger's payout attempts (any state) of those refunds. */
  attempts: ReadonlyArray<{ refundId: string; txHash: string; sender: string; nonce: bigint | null; state: string }>;
  /** Token Transfer logs on chain whose sender is one of the hot wallets. */
  transfers: ReadonlyArray<{ txHash: string; from: string }>;
  /** Each hot wallet's transaction count on chain (its next nonce). */
  chainNonces: ReadonlyMap<string, bigint>;
}

export interface PayoutCount {
  refunds: number;
  completed: number;
  /** Refunds with exactly one token transfer on chain. */
  paidOnce: number;
  /** Refunds with more than one transfer on chain (a double payment). */
  paidTwice: number;
  /** Completed refunds with no transfer on chain. */
  unpaid: number;
  /** Transfers from a hot wallet in a transaction no attempt of these refunds recorded. */
  unknownTransfers: number;
  /** Over all senders: missing nonces between a sender's first and last confirmed one. */
  nonceGaps: number;
  /** Over all senders: a nonce confirmed for two attempts. */
  nonceRepeats: number;
  /** Senders whose count on chain differs from the ledger's confirmed attempts (nonces 0..n-1). */
  chainNonceMismatches: number;
}

export function countPayouts(i: PayoutInputs): PayoutCount {
  const refundOfTx = new Map<string, string>();
  for (const a of i.attempts) refundOfTx.set(a.txHash.toLowerCase(), a.refundId);
  const transfersOf = new Map<string, number>();
  let unknownTransfers = 0;
  for (const t of i.transfers) {
    const r = refundOfTx.get(t.txHash.toLowerCase());
    if (r === undefined) unknownTransfers++;
    else transfersOf.set(r, (transfersOf.get(r) ?? 0) + 1);
  }
  const c: PayoutCount = {
    refunds: i.refunds.length,
    completed: 0,
    paidOnce: 0,
    paidTwice: 0,
    unpaid: 0,
    unknownTransfers,
    nonceGaps: 0,
    nonceRepeats: 0,
    chainNonceMismatches: 0,
  };
  for (const r of i.refunds) {
    if (r.status === 'completed') c.completed++;
    const n = transfersOf.get(r.id) ?? 0;
    if (n === 1) c.paidOnce++;
    else if (n > 1) c.paidTwice++;
    else if (r.status === 'completed') c.unpaid++;
  }
  const confirmed = new Map<string, bigint[]>();
  for (const a of i.attempts)
    if (a.state === 'confirmed' && a.nonce !== null) {
      const s = a.sender.toLowerCase();
      confirmed.set(s, [...(confirmed.get(s) ?? []), a.nonce]);
    }
  for (const [sender, onChain] of i.chainNonces) {
    const p = nonceProblems(confirmed.get(sender.toLowerCase()) ?? []);
    c.nonceGaps += p.gaps + (p.first !== null && p.first > 0n ? Number(p.first) : 0);
    c.nonceRepeats += p.repeats;
    if (BigInt(p.count) !== onChain || (p.last !== null && p.last + 1n !== onChain)) c.chainNonceMismatches++;
  }
  return c;
}

/** utime + stime (clock ticks) from the text of /proc/<pid>/stat; the command name may hold spaces and parentheses. */
export function procStatTicks(stat: string): number {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields after the name start at field 3 (state); utime and stime are fields 14 and 15.
  return Number(rest[11]) + Number(rest[12]);
}

/** The first line of /proc/stat: busy and total clock ticks of all CPUs (idle and iowait are not busy). */
export function machineTicks(procStat: string): { busy: number; total: number } {
  const f = procStat.split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

/**
 * The most a run could reach, from CPU time per operation (µs; measured by the benchmark): one service process is one
 * event loop and gets at most one core; the load generator (one process) likewise; the machine has `cores` for
 * everything the operation costs (service, Postgres, Redis, Anvil, the generator). Answers operations per second for
 * 1 and 2 service processes and the ratio between them: a ceiling, not a prediction (waits, locks and other work on the
 * machine come on top).
 */
export function ratioCeiling(o: { serviceUs: number; generatorUs: number; totalUs: number; cores: number }): {
  perProcess: number;
  generator: number;
  machine: number;
  one: number;
  two: number;
  ratio: number;
} {
  const perProcess = 1e6 / o.serviceUs;
  const generator = o.generatorUs > 0 ? 1e6 / o.generatorUs : Number.POSITIVE_INFINITY;
  const machine = (o.cores * 1e6) / o.totalUs;
  const one = Math.min(perProcess, generator, machine);
  const two = Math.min(2 * perProcess, generator, machine);
  return { perProcess, generator, machine, one, two, ratio: two / one };
}
