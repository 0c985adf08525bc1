import { createDb } from '../../../src/db/database.js';
import { loadWatcherSettings } from '../../../src/watcher/config.js';
import { startChainWatchers } from '../../../src/watcher/start.js';

// A watcher process as main.ts would run it, for kill/restart and standby tests. Prints one line per state change.
const db = createDb(process.env.DATABASE_URL!, 5);
const settings = loadWatcherSettings(process.env);
const line = (msg: string) => process.stdout.write(`${msg}\n`);
const log = {
  info: (_o: Record<string, unknown>, msg: string) => line(msg),
  warn: () => {},
  error: (o: Record<string, unknown>, msg: string) => line(`${msg} ${JSON.stringify(o)}`),
};
const running = await startChainWatchers({ db, settings, log, env: process.env });
process.on('SIGTERM', () => {
  void running
    .stop()
    .then(() => db.destroy())
    .then(() => process.exit(0));
});
