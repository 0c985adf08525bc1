import { sql } from 'kysely';
import type { Db } from '../../../src/db/database.js';
import { pauseSigner, resumeSigner } from '../../../src/operations/signer.js';
import type { ScheduledFault } from '../contract.js';
import type { Supervisor } from '../supervisor.js';

// The signer's faults (docs/simulation.md, "Signer faults"), for a seed whose roles ask a separate signer process
// (docs/signer.md) over its Unix socket:
// - signer.kill: SIGKILL the signer; the supervisor starts it again (it removes the dead one's socket file). Meanwhile
//   every signature asked fails to connect: the outbound engine's sends wait (SignerUnavailable), nothing fails;
// - signer.stall: SIGSTOP the signer for `forMs`, then SIGCONT (a slow signer: connections are accepted by the kernel
//   and hang; each is answered late or times out on the client's side, and the send waits);
// - signer.pause: the operator's kill switch (`pauseSigner`, what `signer pause` runs) for `forMs`, then `resumeSigner`:
//   every signature asked meanwhile is refused `paused` (an audit row each); the sends wait and go out once resumed.
// Each returns once healed, so the drain never starts with the signer stopped or paused. `fault.signer.*` events say
// what happened (the pid stopped; how many signatures the pause refused).

export const SIGNER_ACTOR = 'simulator';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A database call retried while the private PostgreSQL is down (a restart fault running at the same time). */
async function retry<T>(f: () => Promise<T>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await f();
    } catch (err) {
      if (Date.now() > end) throw err;
      await sleep(300);
    }
  }
}

export async function injectSignerFault(
  f: ScheduledFault,
  o: { sup: Supervisor; db: Db; ev: (kind: string, detail: Record<string, unknown>) => void },
): Promise<void> {
  const forMs = Number(f.params.forMs ?? 0);
  if (f.kind === 'signer.kill') {
    o.sup.kill('signer');
  } else if (f.kind === 'signer.stall') {
    const pid = o.sup.signal('signer', 'SIGSTOP');
    o.ev('fault.signer.stopped', { pid: pid ?? null });
    await sleep(forMs);
    // The process stopped, or (after a kill meanwhile) its successor, which a SIGCONT leaves as it is.
    o.ev('fault.signer.continued', { pid: o.sup.signal('signer', 'SIGCONT') ?? null });
  } else if (f.kind === 'signer.pause') {
    await retry(() => pauseSigner(o.db, SIGNER_ACTOR, `simulator fault at ${f.at} ms`));
    const from = await retry(() => lastAuditId(o.db));
    await sleep(forMs);
    await retry(() => resumeSigner(o.db, SIGNER_ACTOR));
    const refused = await retry(() =>
      o.db
        .selectFrom('signer_audit')
        .select(sql<string>`count(*)`.as('n'))
        .where('id', '>', BigInt(from))
        .where('code', '=', 'paused')
        .executeTakeFirstOrThrow(),
    );
    o.ev('fault.signer.resumed', { refusedPaused: Number(refused.n) });
  }
}

async function lastAuditId(db: Db): Promise<string> {
  const r = await db.selectFrom('signer_audit').select(sql<string>`coalesce(max(id), 0)`.as('id')).executeTakeFirstOrThrow();
  return String(r.id);
}
