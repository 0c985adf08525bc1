import { FAILPOINTS } from '../../src/outbound/failpoints.js';
import { WATCHER_FAILPOINTS } from '../../src/watcher/failpoints.js';
import type { ScheduledFault } from './contract.js';
import type { Prng } from './prng.js';
import { networkEntry } from '../../chains/registry.js';
import { isEvmNetwork } from './env/chain.js';
import type { RoleName } from './supervisor.js';

// The fault schedule of one seed, drawn from its PRNG before anything runs (so a replay injects the same faults at
// the same moments and shrinking can drop entries). Kinds (docs/simulation.md):
// - rpc: a window of JSON-RPC errors, timeouts, 429s, 5xx and range-too-large answers on one network's fault proxy;
// - kill: SIGKILL one role (api, worker, watcher-a, watcher-b: killing the leader is a standby takeover);
// - failpoint: restart the worker with SP_FAILPOINTS naming one outbound failpoint (it kills itself there), and both
//   watchers with the watcher's `watcher:before_commit` (each kills itself before committing a step that records deposits);
// - reorg: an EVM reorg shallower than the confirmation depth on Anvil (faults/chain-evm.ts), re-including or dropping
//   the removed transactions; on Ethereum, BSC, and TRON (the Anvil node under the fake java-tron) when it runs;
// - redis.restart / postgres.restart: SIGKILL / immediate-stop the private instance, start it again after downMs;
// - solana.blockhash-expiry / solana.drop (only when Solana runs): every blockhash handed out expires; the next 1–3
//   transactions sent, or all sent during 1–4 s, are accepted and never land (faults/chain-solana.ts);
// - solana.stall (only when Solana runs, in about a third of its seeds, from a stream of its own): a leader holds every
//   transaction sent during 1–4 s, then lands the held ones late, or first lets their blockhashes expire so that none
//   of them ever lands.
// - signer.kill / signer.stall / signer.pause (only when the roles ask a separate signer process, the default; from a
//   stream of their own, so the other faults of a seed are what they were): SIGKILL the signer (restarted like any
//   role); SIGSTOP it for 1–4 s then SIGCONT (a slow signer: requests hang, then are answered or time out); `signer
//   pause` for 1–4 s then `resume` (a signer that refuses every signature with `paused`). Sends wait, nothing fails.

export const FAULT_KINDS = ['rpc', 'kill', 'failpoint', 'redis.restart', 'postgres.restart', 'reorg'] as const;
/** Drawn only when the seed runs Solana (an EVM-only seed's schedule is what it always was). */
export const SOLANA_FAULT_KINDS = ['solana.blockhash-expiry', 'solana.drop'] as const;
/** A stalled Solana leader: added from its own stream (`fork`), so a seed's other faults are what they were before it. */
export const SOLANA_STALL = 'solana.stall';
/** The signer's faults (faults/signer.ts), one of each per seed (× intensity) that runs a separate signer. */
export const SIGNER_FAULT_KINDS = ['signer.kill', 'signer.stall', 'signer.pause'] as const;
export const SIGNER_STREAM = 'signer';
export const ROLES: RoleName[] = ['api', 'worker', 'watcher-a', 'watcher-b'];

export function buildSchedule(
  prng: Prng,
  o: { activeMs: number; networks: string[]; intensity: number; confirmations: number; signer?: boolean },
): ScheduledFault[] {
  const faults: ScheduledFault[] = [];
  const n = Math.max(1, Math.round(prng.int(2, 6) * o.intensity));
  for (let i = 0; i < n; i++) {
    const at = prng.int(1500, Math.max(2000, o.activeMs - 2000));
    const kind = prng.pick([
      ...FAULT_KINDS,
      'rpc',
      'kill',
      'failpoint',
      ...(o.networks.includes('solana') ? SOLANA_FAULT_KINDS : []),
    ] as const);
    if (kind === 'rpc') {
      faults.push({
        at,
        kind,
        params: {
          network: prng.pick(o.networks),
          durationMs: prng.int(1000, 6000),
          errorRate: prng.pick([0, 0.1, 0.3]),
          timeoutRate: prng.pick([0, 0.05, 0.2]),
          http429Rate: prng.pick([0, 0.1, 0.3]),
          http5xxRate: prng.pick([0, 0.1, 0.2]),
          maxLogsRange: prng.pick([1, 3, 10, 1000]),
        },
      });
    } else if (kind === 'kill') {
      faults.push({ at, kind, params: { role: prng.pick(ROLES) } });
    } else if (kind === 'reorg') {
      // Anvil reorgs: on an Anvil-backed network of the seed, TRON included (a seed without one draws a network that
      // the runner skips). One draw whatever the list: a seed without TRON draws what it always did.
      const anvil = o.networks.filter((n) => isEvmNetwork(n) || networkEntry(n)?.family === 'tron');
      faults.push({
        at,
        kind,
        params: {
          network: prng.pick(anvil.length > 0 ? anvil : o.networks),
          // A block with `confirmations` confirmations is final: a deeper reorg is one the service rightly refuses to
          // absorb (the watcher stops and alerts), so the schedule stays below it.
          depth: prng.int(1, Math.max(1, o.confirmations - 1)),
          drop: prng.pick(['none', 'none', 'all', 'alternate']),
          extend: prng.int(0, 1),
        },
      });
    } else if (kind === 'failpoint') {
      // The watchers are armed at their own crash point as well (no draw: the seeds' schedules stay as they were).
      faults.push({ at, kind, params: { role: 'worker', point: prng.pick(FAILPOINTS), watchers: WATCHER_FAILPOINTS[0] } });
    } else if (kind === 'solana.blockhash-expiry') {
      faults.push({ at, kind, params: {} });
    } else if (kind === 'solana.drop') {
      faults.push({ at, kind, params: prng.chance(0.5) ? { count: prng.int(1, 3) } : { forMs: prng.int(1000, 4000) } });
    } else {
      faults.push({ at, kind, params: { downMs: prng.int(300, 3000) } });
    }
  }
  if (o.networks.includes('solana')) {
    const stall = prng.fork(SOLANA_STALL);
    if (stall.chance(0.35))
      faults.push({
        at: stall.int(1500, Math.max(2000, o.activeMs - 2000)),
        kind: SOLANA_STALL,
        params: { forMs: stall.int(1000, 4000), expire: stall.chance(0.5) },
      });
  }
  if (o.signer) {
    const signer = prng.fork(SIGNER_STREAM);
    const each = Math.max(1, Math.round(o.intensity));
    for (const kind of SIGNER_FAULT_KINDS)
      for (let i = 0; i < each; i++)
        faults.push({
          at: signer.int(1500, Math.max(2000, o.activeMs - 2000)),
          kind,
          params: kind === 'signer.kill' ? {} : { forMs: signer.int(1000, 4000) },
        });
  }
  return spaceReorgs(
    faults.sort((a, b) => a.at - b.at),
    o,
  );
}

/**
 * Each reorg stays below the confirmation depth, but two on one network a block or two apart can together replace a
 * block the watcher already holds final (seed 108: depth 2 at 5.2 s, then depth 1 at 6.1 s), and the watcher then stops
 * by design. A reorg less than `confirmations + 1` block times (1 s each) after the previous one on its network is
 * moved to that distance, or left out when that is past the active phase. No PRNG draw: every other schedule is
 * unchanged (the CI seeds' included).
 */
function spaceReorgs(faults: ScheduledFault[], o: { activeMs: number; confirmations: number }): ScheduledFault[] {
  const gap = (o.confirmations + 1) * 1000;
  const last = new Map<string, number>();
  const out: ScheduledFault[] = [];
  for (const f of faults) {
    if (f.kind !== 'reorg') {
      out.push(f);
      continue;
    }
    const network = String(f.params.network);
    const prev = last.get(network);
    const at = prev === undefined ? f.at : Math.max(f.at, prev + gap);
    if (at > o.activeMs - 1000) continue;
    last.set(network, at);
    out.push(at === f.at ? f : { ...f, at });
  }
  return out.sort((a, b) => a.at - b.at);
}

export function countByKind(faults: ScheduledFault[], into: Record<string, number>): void {
  for (const f of faults) {
    const k = f.kind === 'kill' ? `kill:${String(f.params.role)}` : f.kind === 'failpoint' ? `failpoint:${String(f.params.point)}` : f.kind;
    into[k] = (into[k] ?? 0) + 1;
  }
}
