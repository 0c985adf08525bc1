// Time as the subscription life cycle sees it. Every decision of the scheduler and of the ledger's subscription
// transitions takes `now` from a Clock, so tests move time instead of waiting for it.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to (tests, simulations). */
export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date = new Date()) {
    this.#ms = start.getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  set(d: Date): void {
    this.#ms = d.getTime();
  }
  advance(ms: number): Date {
    this.#ms += ms;
    return this.now();
  }
}
