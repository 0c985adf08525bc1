import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Supervisor, startSupervisor } from '../../scripts/sim/supervisor.js';

// The simulator's supervisor keeps a role armed with failpoints until one fires (scripts/sim/supervisor.ts): a start-up
// that fails, or a `kill` fault, restarts the role armed again; only the failpoint's own SIGKILL disarms it. Real
// processes (node -e), so the exits are the kernel's. Without this a watcher armed at `watcher:before_commit` that died
// of an RPC fault window during its start-up came back unarmed, and the mutant it exists to catch could slip by.

// The role: counts its starts in a file; armed, its first start exits 1 (a failed start-up), its second stays up (for
// the kill fault), its third SIGKILLs itself (the failpoint firing); unarmed it stays up.
const ROLE = `
const fs = require('node:fs');
const f = process.env.COUNT_FILE;
const n = fs.readFileSync(f, 'utf8').length;
fs.appendFileSync(f, process.env.SP_FAILPOINTS ? 'a' : 'u');
if (!process.env.SP_FAILPOINTS) setInterval(() => {}, 1000);
else if (n === 1) process.exit(1);
else if (n === 2) setInterval(() => {}, 1000);
else process.kill(process.pid, 'SIGKILL');
`;

const state: { dir?: string; sup?: Supervisor } = {};

afterEach(async () => {
  await state.sup?.stopAll();
  if (state.dir) rmSync(state.dir, { recursive: true, force: true });
});

async function until(f: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('simulator supervisor: a failpoint stays armed until it fires', () => {
  it('a failed start and a kill keep the arming; the failpoint firing ends it', async () => {
    state.dir = mkdtempSync(join(tmpdir(), 'sim-supervisor-'));
    const count = join(state.dir, 'starts');
    writeFileSync(count, '');
    const events: Array<{ kind: string; detail: Record<string, unknown> }> = [];
    const sup = startSupervisor([{ name: 'watcher-a', env: { COUNT_FILE: count } }], {
      logFile: join(state.dir, 'service.log'),
      restartDelayMs: 50,
      onEvent: (kind, detail) => events.push({ kind, detail }),
      args: ['-e', ROLE],
    });
    state.sup = sup;
    const starts = () => readFileSync(count, 'utf8');
    await until(() => starts() === 'u');
    sup.arm('watcher-a', ['watcher:before_commit']);
    // Start 1 (armed) exits 1: restarted armed; start 2 stays up.
    await until(() => starts() === 'uaa');
    await new Promise((r) => setTimeout(r, 300));
    expect(starts()).toBe('uaa');
    expect(events.some((e) => e.kind === 'failpoint.fired')).toBe(false);
    // A kill fault: restarted armed (start 3), which fires: SIGKILL by itself, then started unarmed and stays up.
    sup.kill('watcher-a');
    await until(() => starts() === 'uaaau');
    await until(() => sup.running('watcher-a'));
    const started = events.filter((e) => e.kind === 'process.start').map((e) => e.detail.failpoints);
    expect(started).toEqual([[], ['watcher:before_commit'], ['watcher:before_commit'], ['watcher:before_commit'], []]);
    const fired = events.filter((e) => e.kind === 'failpoint.fired');
    expect(fired.map((e) => e.detail.failpoints)).toEqual([['watcher:before_commit']]);
    const exits = events.filter((e) => e.kind === 'process.exit').map((e) => [e.detail.code, e.detail.signal]);
    expect(exits).toEqual([
      [null, 'SIGKILL'], // the arming's restart
      [1, null], // the failed start-up
      [null, 'SIGKILL'], // the kill fault
      [null, 'SIGKILL'], // the failpoint
    ]);
  });

  it('starts the roles in list order, and stops and continues a role by signal (the stalled signer)', async () => {
    state.dir = mkdtempSync(join(tmpdir(), 'sim-supervisor-'));
    const ticks = join(state.dir, 'ticks');
    writeFileSync(ticks, '');
    const events: Array<{ kind: string; detail: Record<string, unknown> }> = [];
    // The signer stand-in appends a tick every 20 ms while it runs.
    const sup = startSupervisor(
      [
        { name: 'signer', env: { TICKS: ticks } },
        { name: 'worker', env: { TICKS: join(state.dir, 'worker-ticks') } },
      ],
      {
        logFile: join(state.dir, 'service.log'),
        restartDelayMs: 50,
        onEvent: (kind, detail) => events.push({ kind, detail }),
        args: ['-e', "setInterval(() => require('node:fs').appendFileSync(process.env.TICKS, '.'), 20)"],
      },
    );
    state.sup = sup;
    await until(() => readFileSync(ticks, 'utf8').length > 3);
    await until(() => sup.running('worker'));
    expect(events.filter((e) => e.kind === 'process.start').map((e) => e.detail.role)).toEqual(['signer', 'worker']);

    const pid = sup.signal('signer', 'SIGSTOP');
    expect(pid).toBe(events[0]!.detail.pid);
    await new Promise((r) => setTimeout(r, 200)); // a tick already under way lands
    const stopped = readFileSync(ticks, 'utf8').length;
    await new Promise((r) => setTimeout(r, 400));
    expect(readFileSync(ticks, 'utf8').length).toBe(stopped);
    expect(sup.running('signer')).toBe(true); // stopped is not exited: nothing restarted it
    expect(sup.signal('signer', 'SIGCONT')).toBe(pid);
    await until(() => readFileSync(ticks, 'utf8').length > stopped + 3);
    expect(events.filter((e) => e.kind === 'process.exit')).toEqual([]);
    expect(sup.signal('api', 'SIGSTOP')).toBeUndefined();
  });
});
