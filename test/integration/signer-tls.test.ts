import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { listSignerAudit } from '../../src/ledger/signer/signer-audit.js';
import { createLogger } from '../../src/logger.js';
import { signerEndpointFromEnv } from '../../src/signer/endpoint.js';
import { SignerRefusedError, SignerUnavailableError } from '../../src/domain/signer-errors.js';
import { keyMaterialFromEnv } from '../../src/signer/from-env.js';
import { RemoteSigner } from '../../src/signer/remote-signer.js';
import { startSignerServer } from '../../src/signer-service/server.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { TEST_MNEMONIC } from '../support/evm-tokens/scenario.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';

// The signer over mutual TLS (docs/signer.md, "Transport"), with certificates from scripts/signer/make-certs.sh (the
// script operators use) and real openssl: a worker with the CA's client certificate is answered; a client with no
// certificate, one from another CA, or one made for a server is cut off at the handshake; a worker that trusts
// another CA refuses the signer; nothing of a refused connection reaches the audit.

const script = join(__dirname, '../../scripts/signer/make-certs.sh');
const dir = mkdtempSync(join(tmpdir(), 'sp-signer-tls-'));
const certs = join(dir, 'good');
const rogue = join(dir, 'rogue');
const seed = new MnemonicSigner(TEST_MNEMONIC);
const key = { curve: 'secp256k1' as const, path: "m/44'/60'/1'/0/0" };
let t: TestDatabase;
let server: { port: number; close(): Promise<void> };

const pem = (d: string, f: string) => readFileSync(join(d, f));
const endpoint = (o: { dir?: string; caDir?: string; id?: string; host?: string; port?: number } = {}) => ({
  kind: 'tls' as const,
  url: new URL(`https://${o.host ?? 'localhost'}:${o.port ?? server.port}`),
  listenHost: '127.0.0.1',
  port: o.port ?? server.port,
  ca: pem(o.caDir ?? certs, 'ca.crt'),
  cert: pem(o.dir ?? certs, `${o.id ?? 'worker'}.crt`),
  key: pem(o.dir ?? certs, `${o.id ?? 'worker'}.key`),
});

beforeAll(async () => {
  execFileSync(script, [certs, 'localhost', '127.0.0.1']);
  execFileSync(script, [rogue, 'localhost', '127.0.0.1']);
  t = await createTestDatabase();
  server = await startSignerServer({
    db: t.db,
    signer: seed,
    adapters: new ChainRegistry([]),
    // Port 0 (the URL carries a placeholder): the clients below connect to the port it got.
    tls: endpoint({ port: 0, id: 'signer' }),
    limits: { refundPerHour: '100', refundPerDay: '1000' },
    log: createLogger('silent'),
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await t?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const unavailable = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SignerUnavailableError);
  return err as SignerUnavailableError;
};

describe('the signer over mutual TLS', () => {
  it("answers a worker presenting the CA's client certificate, by name and by IP address", async () => {
    const expected = Buffer.from(await seed.publicKey(key)).toString('hex');
    for (const host of ['localhost', '127.0.0.1']) {
      const pk = await new RemoteSigner(endpoint({ host })).publicKey(key);
      expect(Buffer.from(pk).toString('hex')).toBe(expected);
    }
    // A sign request goes through the whole pipeline: an unknown refund is refused and audited.
    const refusal = await new RemoteSigner(endpoint())
      .signSecp256k1Digest(
        key,
        new Uint8Array(32),
        { kind: 'evm-transaction', unsignedSerialized: '0x02' },
        { purpose: 'refund_payout', refund_id: 'ref_none' },
      )
      .catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(SignerRefusedError);
    expect((await listSignerAudit(t.db, { limit: 10 })).length).toBe(1);
  });

  it('cuts off a client without a certificate, with one from another CA, or with a certificate made for a server', async () => {
    const before = (await listSignerAudit(t.db, { limit: 100 })).length;
    // No client certificate at all (a plain HTTPS client that trusts the CA).
    const noCert = await new Promise<string>((resolve) => {
      const req = httpsRequest(
        { host: 'localhost', port: server.port, method: 'POST', path: '/v1/public-key', ca: pem(certs, 'ca.crt'), agent: false },
        (res) => resolve(`answered HTTP ${res.statusCode}`),
      );
      req.on('error', (e) => resolve(e.message));
      req.end(JSON.stringify({ key }));
    });
    expect(noCert).not.toMatch(/answered/);
    // The rogue CA's client certificate, trusting the real CA for the server.
    await unavailable(new RemoteSigner(endpoint({ dir: rogue })).publicKey(key));
    // The signer's own certificate (serverAuth only), copied to a worker, is no client certificate.
    await unavailable(new RemoteSigner(endpoint({ id: 'signer' })).publicKey(key));
    expect((await listSignerAudit(t.db, { limit: 100 })).length).toBe(before);
  });

  it('refuses a signer whose certificate another CA made, or made for another name', async () => {
    const err = await unavailable(new RemoteSigner(endpoint({ caDir: rogue })).publicKey(key));
    expect(err.message).toMatch(/certificate/i);
    const named = await unavailable(new RemoteSigner(endpoint({ host: 'signer.example' })).publicKey(key).catch((e) => Promise.reject(e)));
    expect(named.message).toMatch(/ENOTFOUND|altnames|certificate/i);
  });
});

describe('SIGNER_TLS_URL and its files from the environment', () => {
  const files = () => ({
    SIGNER_TLS_CA_FILE: join(certs, 'ca.crt'),
    SIGNER_TLS_CERT_FILE: join(certs, 'worker.crt'),
    SIGNER_TLS_KEY_FILE: join(certs, 'worker.key'),
  });

  it('reads the endpoint, and a process given it may hold no seed', () => {
    const env = { SIGNER_TLS_URL: 'https://stablepay-signer:7443', ...files() };
    const e = signerEndpointFromEnv(env);
    expect(e).toMatchObject({ kind: 'tls', port: 7443, listenHost: '0.0.0.0' });
    expect(signerEndpointFromEnv({ ...env, SIGNER_TLS_LISTEN_HOST: '10.1.2.3' })).toMatchObject({ listenHost: '10.1.2.3' });
    expect(keyMaterialFromEnv(env).kind).toBe('remote');
    const words = TEST_MNEMONIC;
    const refused = () => keyMaterialFromEnv({ ...env, HD_MNEMONIC: words });
    expect(refused).toThrow(/only ROLES=signer may hold the seed/);
    expect(() => refused()).not.toThrow(new RegExp(words.split(' ')[0] as string));
    const seedFile = join(dir, 'seed');
    writeFileSync(seedFile, `${words}\n`);
    expect(() => keyMaterialFromEnv({ ...env, HD_MNEMONIC_FILE: seedFile })).toThrow(/only ROLES=signer may hold the seed/);
    // The signer role reads the seed from its file.
    expect(keyMaterialFromEnv({ ...env, HD_MNEMONIC_FILE: seedFile }, { signerRole: true }).kind).toBe('signer');
  });

  it('refuses half settings, naming the variable and never a file content', () => {
    const url = 'https://stablepay-signer:7443';
    expect(() => signerEndpointFromEnv({ SIGNER_TLS_URL: url })).toThrow(/SIGNER_TLS_CA_FILE/);
    expect(() => signerEndpointFromEnv({ SIGNER_TLS_URL: url, ...files(), SIGNER_SOCKET: '/run/s.sock' })).toThrow(/both set/);
    expect(() => signerEndpointFromEnv({ SIGNER_TLS_URL: 'http://stablepay-signer:7443', ...files() })).toThrow(/https:\/\/host:port/);
    expect(() => signerEndpointFromEnv({ SIGNER_TLS_URL: 'https://stablepay-signer', ...files() })).toThrow(/explicit port/);
    expect(() => signerEndpointFromEnv(files())).toThrow(/SIGNER_TLS_CA_FILE is set without SIGNER_TLS_URL/);
    const notPem = join(dir, 'not-pem');
    writeFileSync(notPem, 'secret words that must not be echoed');
    const err = (() => {
      try {
        signerEndpointFromEnv({ SIGNER_TLS_URL: url, ...files(), SIGNER_TLS_KEY_FILE: notPem });
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(err).toMatch(/SIGNER_TLS_KEY_FILE: .* is not a PEM file/);
    expect(err).not.toMatch(/secret words/);
    expect(() => keyMaterialFromEnv({ HD_MNEMONIC_FILE: join(dir, 'absent') }, { signerRole: true })).toThrow(
      /HD_MNEMONIC_FILE: cannot read .* \(ENOENT\)/,
    );
    expect(() => keyMaterialFromEnv({ HD_MNEMONIC: TEST_MNEMONIC, HD_MNEMONIC_FILE: notPem }, { signerRole: true })).toThrow(/both set/);
  });
});
