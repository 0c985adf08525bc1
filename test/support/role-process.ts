import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { start } from '../../src/main.js';

// One service process of its own (scripts/bench/processes.ts's API and worker processes; the harness's signer role with
// `separateProcess`, test/support/signer-role.ts): src/main.ts's start() with the roles of its environment, as
// `npm run start:dev` starts it, plus an IPC channel to its parent: it says when it is up (and its API port), and
// stops cleanly when told ('stop').
const config = loadConfig(process.env);
const service = await start(config, process.env, createLogger(config.LOG_LEVEL));
process.send?.({ ready: true, port: service.port ?? null });
process.on('message', (m) => {
  if (m === 'stop')
    void service.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
});
