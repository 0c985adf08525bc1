import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { keyMaterialFromEnv } from '../../src/signer/from-env.js';
import { loadWatcherSettings } from '../../src/watcher/config.js';

// Issue 17, production guide: the docker compose env template (deploy/.env.example) is a configuration the service
// accepts, names only variables that exist, covers every variable docker-compose.yml interpolates, and the compose
// PostgreSQL password agrees with the service's DATABASE_URL, the template and the README.

const TEMPLATE = readFileSync('deploy/.env.example', 'utf8');
const COMPOSE = readFileSync('docker-compose.yml', 'utf8');
const README = readFileSync('README.md', 'utf8');

/** NAME=value lines, and `# NAME=value` examples, of the template. */
function entries(commented: boolean): Record<string, string> {
  const re = commented ? /^# ([A-Z][A-Z0-9_]+)=(.*)$/gm : /^([A-Z][A-Z0-9_]+)=(.*)$/gm;
  return Object.fromEntries([...TEMPLATE.matchAll(re)].map((m) => [m[1]!, m[2]!]));
}
const active = entries(false);
const examples = entries(true);

/** How the README's table spells a variable: chain variables with `<NET>`/`<MODE>` placeholders. */
function documented(name: string): boolean {
  if (README.includes(`\`${name}\``)) return true;
  const chain = /^CHAIN_(ETHEREUM|BSC|TRON|SOLANA)_(LIVE|TEST)_(.+)$/.exec(name);
  if (!chain) return false;
  const [, net, , suffix] = chain;
  const token = /^(USDT|USDC)_(CONTRACT|DECIMALS)$/.exec(suffix!);
  if (token) return README.includes(`\`CHAIN_<NET>_<MODE>_${token[1]}_CONTRACT\``);
  return [`CHAIN_<NET>_<MODE>_${suffix}`, `CHAIN_${net}_<MODE>_${suffix}`].some(
    (n) => README.includes(`\`${n}\``) || README.includes(`\`_${suffix}\``),
  );
}

describe('deploy/.env.example', () => {
  it('names only variables the README documents (besides the compose PostgreSQL password)', () => {
    const names = [...Object.keys(active), ...Object.keys(examples)];
    expect(names.length).toBeGreaterThan(15);
    expect(names.filter((n) => n !== 'POSTGRES_PASSWORD' && !documented(n))).toEqual([]);
  });

  it('holds every variable docker-compose.yml interpolates', () => {
    const used = [...COMPOSE.matchAll(/\$\{([A-Z_]+)[:}]/g)].map((m) => m[1]!);
    expect(used).toEqual(expect.arrayContaining(['MASTER_KEY', 'POSTGRES_PASSWORD', 'PUBLIC_BASE_URL']));
    expect([...new Set(used)].filter((n) => !(n in active))).toEqual([]);
    expect(COMPOSE).toMatch(/env_file:\s*\n\s*- path: deploy\/\.env/);
  });

  it('uses one PostgreSQL password: the compose default, its DATABASE_URL, the template and the README', () => {
    const pw = /POSTGRES_PASSWORD: \$\{POSTGRES_PASSWORD:-([^}]+)\}/.exec(COMPOSE)?.[1];
    expect(pw).toBe('postgres');
    expect(COMPOSE).toContain(`DATABASE_URL: postgres://postgres:\${POSTGRES_PASSWORD:-${pw}}@postgres:5432/stablepay`);
    expect(active.POSTGRES_PASSWORD).toBe(pw);
    expect(README).toContain(`DATABASE_URL=postgres://postgres:${pw}@127.0.0.1:5432/stablepay`);
  });

  it('is a configuration that takes payments once its secrets are filled in', () => {
    expect(active.MASTER_KEY).toBe('');
    expect(active.HD_MNEMONIC).toBe('');
    // What docker-compose.yml sets for a container, over the env file (its `${VAR:-default}` resolved from it).
    const services = (parse(COMPOSE) as { services: Record<string, { environment: Record<string, string>; volumes?: string[] }> }).services;
    const filledIn = { ...active, MASTER_KEY: 'ab'.repeat(32), HD_MNEMONIC: 'test test test test test test test test test test test junk' };
    const containerEnv = (name: string): Record<string, string> => ({
      ...filledIn,
      ...Object.fromEntries(
        Object.entries(services[name]!.environment).map(([k, v]) => [
          k,
          String(v).replace(/\$\{(\w+)(?::[-?][^}]*)?\}/g, (_, n: string) => filledIn[n as keyof typeof filledIn] ?? ''),
        ]),
      ),
    });
    const env = containerEnv('service');
    expect(env.DATABASE_URL).toBe(`postgres://postgres:${active.POSTGRES_PASSWORD}@postgres:5432/stablepay`);
    // The signer container alone holds the seed; the service asks it over the socket in the volume both mount.
    const signerEnv = containerEnv('signer');
    expect(loadConfig(signerEnv).ROLES).toEqual(['signer']);
    expect(keyMaterialFromEnv(signerEnv, { signerRole: true }).kind).toBe('signer');
    expect(env.SIGNER_SOCKET).toBe(signerEnv.SIGNER_SOCKET);
    expect(services.service!.volumes).toEqual(services.signer!.volumes);
    expect(env.SIGNER_SOCKET!.startsWith(`${services.signer!.volumes![0]!.split(':')[1]}/`)).toBe(true);
    const config = loadConfig(env);
    // Every role, the console on its own listener, published on the host's loopback only.
    expect(config.ROLES).toEqual(['api', 'worker', 'watcher', 'console']);
    expect(config.CONSOLE_PATH).toBeUndefined();
    expect(COMPOSE).toContain(`"127.0.0.1:${config.CONSOLE_PORT}:${config.CONSOLE_PORT}"`);
    expect(COMPOSE).not.toMatch(new RegExp(`"(0\\.0\\.0\\.0:)?${config.CONSOLE_PORT}:`));
    expect(config.PUBLIC_BASE_URL).toBe(active.PUBLIC_BASE_URL);
    expect(config.docsUrl).toBe(`${active.PUBLIC_BASE_URL}/docs/errors`);
    const chains = loadWatcherSettings(env).chains;
    expect(chains.map((c) => `${c.network}:${c.mode}`)).toEqual(['ethereum:live']);
    expect(chains[0]!.tokens.map((t) => t.symbol).sort()).toEqual(['USDC', 'USDT']);
    expect(keyMaterialFromEnv(env).kind).toBe('remote');
    // The commented examples are valid too, once uncommented.
    const all = { ...env, ...examples, CHAIN_ETHEREUM_TEST_USDT_CONTRACT: `0x${'ab'.repeat(20)}`, CHAIN_TRON_LIVE_API_KEY: 'k' };
    expect(() => loadConfig(all)).not.toThrow();
    expect(loadWatcherSettings(all).chains.length).toBe(5);
  });
});
