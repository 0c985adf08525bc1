import { readFileSync } from 'node:fs';
import type pg from 'pg';

// CPU time spent by every Postgres backend connected to one database (Postgres on this host): utime + stime from
// /proc/<pid>/stat (10 ms ticks), per backend pid. A benchmark takes a snapshot before and after a phase and sums
// the differences: the database's share of a phase's work, steadier on a shared machine than wall time. A backend
// that connects during the phase counts from zero; one that exits during it is lost (its pid is gone).

export type BackendCpu = Map<number, number>;

const tick = 100; // USER_HZ, the unit of /proc/<pid>/stat's utime and stime

/** µs of CPU per backend pid of `database` so far. */
export async function backendsCpu(admin: pg.Client, database: string): Promise<BackendCpu> {
  const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [database]);
  const out: BackendCpu = new Map();
  for (const { pid } of rows) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      out.set(pid, ((Number(f[11]) + Number(f[12])) / tick) * 1e6);
    } catch {
      // exited since pg_stat_activity listed it
    }
  }
  return out;
}

/** µs of CPU the backends spent between two snapshots. */
export function backendsCpuSince(before: BackendCpu, after: BackendCpu): number {
  let us = 0;
  for (const [pid, t] of after) us += t - (before.get(pid) ?? 0);
  return us;
}
