// A periodic in-process tick (the subscription scheduler, the sweep runner): runs `tick`, then waits `intervalMs` after
// it ends before the next, so ticks never overlap and a slow tick delays the next instead of piling up. A failing tick
// is reported and retried at the next interval. stop() lets a tick in progress finish.

export interface TickLoop {
  stop(): Promise<void>;
}

export function startTickLoop(o: { tick: () => Promise<void>; intervalMs: number; onError: (err: unknown) => void }): TickLoop {
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const loop = async () => {
    try {
      await o.tick();
    } catch (err) {
      o.onError(err);
    }
    if (!stopping) timer = setTimeout(() => (running = loop()), o.intervalMs);
  };
  running = loop();
  return {
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
