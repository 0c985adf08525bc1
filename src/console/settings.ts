// The console's settings, from the environment (README, docs/console.md).
export interface ConsoleSettings {
  /** Secure cookies; false only in development over plain http on localhost (`npm run dev`). */
  secureCookies: boolean;
  /** A session ends after this long without a request. */
  idleTimeoutMs: number;
  /** ... and after this long whatever happens. */
  absoluteTimeoutMs: number;
  /** Failed sign-ins per account, and per IP, per 15 minutes before the lockout. */
  loginFailuresPerAccount: number;
  loginFailuresPerIp: number;
  /** The demo's users may sign in (npm run dev only; refused elsewhere). */
  demo: boolean;
  /** How often the live stream's reader looks for changes (one set of reads per tick for all open pages). */
  liveIntervalMs: number;
  /** Where the built single-page app is (dist/console-ui); null: not built, the page says how to build it. */
  uiDir: string | null;
}
