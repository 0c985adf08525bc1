import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

// First-run helper: writes .env from .env.example with a fresh random MASTER_KEY. Never overwrites an existing .env,
// because the master key decrypts every stored API and webhook secret: losing it makes them unrecoverable.
if (existsSync('.env')) {
  process.stdout.write('.env exists; left as it is\n');
} else {
  const example = readFileSync('.env.example', 'utf8');
  const env = example.replace(/^MASTER_KEY=.*$/m, `MASTER_KEY=${randomBytes(32).toString('hex')}`);
  writeFileSync('.env', env, { mode: 0o600 });
  process.stdout.write('wrote .env with a new random MASTER_KEY (keep it safe: it decrypts every stored secret)\n');
}
