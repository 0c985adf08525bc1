import { chmod, lstat, unlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { connect } from 'node:net';
import type { Kysely } from 'kysely';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Database } from '../db/schema.js';
import { readSignerState } from '../ledger/signer/signer-state.js';
import type { Logger } from '../logger.js';
import { setSignerPaused } from '../metrics/signer.js';
import type { SignerEndpoint } from '../signer/endpoint.js';
import type { MnemonicSigner } from '../signer/mnemonic-signer.js';
import { publicKeyRequestSchema } from '../signer/protocol.js';
import type { SignerLimits } from './limits.js';
import { answerMalformed, answerSign } from './sign-pipeline.js';

// The signer role's server (docs/signer.md): the only process holding the seed answers public keys and justified
// signatures over HTTP on a Unix socket (mode 0600: only the service's own user may ask), or over mutually
// authenticated TLS (a client must present a certificate the shared CA signed, or the handshake fails). Bad input is a 403
// `malformed_request`, never a 5xx and never a stack; a body over MAX_BODY_BYTES is one too.

export interface SignerServerOptions {
  db: Kysely<Database>;
  signer: MnemonicSigner;
  adapters: ChainRegistry;
  /** The Unix socket to listen on; or `tls`. */
  socketPath?: string;
  tls?: SignerTlsEndpoint;
  limits: SignerLimits;
  log: Logger;
}

type SignerTlsEndpoint = Extract<SignerEndpoint, { kind: 'tls' }>;

/** Larger than any transaction we sign (a TRON raw_data or an EVM transfer is well under 2 KB). */
export const MAX_BODY_BYTES = 256 * 1024;

type Answer = { status: number; body: unknown };
const malformed = (message: string): Answer => ({ status: 403, body: { error: { code: 'malformed_request', message } } });

export function startSignerServer(o: SignerServerOptions & { socketPath: string }): Promise<{ socketPath: string; close(): Promise<void> }>;
export function startSignerServer(o: SignerServerOptions & { tls: SignerTlsEndpoint }): Promise<{ port: number; close(): Promise<void> }>;
export function startSignerServer(o: SignerServerOptions): Promise<{ socketPath?: string; port?: number; close(): Promise<void> }>;
export async function startSignerServer(o: SignerServerOptions): Promise<{ socketPath?: string; port?: number; close(): Promise<void> }> {
  const deps = { db: o.db, signer: o.signer, adapters: o.adapters, limits: o.limits, log: o.log };
  const handler: RequestListener = (req, res) => {
    route(deps, req)
      .catch((err: unknown) => {
        // Not the caller's fault (the database or a node did not answer): the caller waits and asks again.
        o.log.error({ err: err instanceof Error ? err.message : String(err), path: req.url }, 'signer could not answer');
        return { status: 503, body: { error: { code: 'unavailable', message: 'the signer could not decide now; ask again' } } };
      })
      .then((a) => send(res, a));
  };
  const close = (server: Server) => () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  if (o.tls) {
    const tls = o.tls;
    const server = createTlsServer(
      { ca: tls.ca, cert: tls.cert, key: tls.key, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' },
      handler,
    );
    limitTimes(server);
    // The CA signs both ends' certificates; OpenSSL checks each one's purpose (extended key usage), so the signer's
    // own server certificate, were it copied to a pod, opens no connection (test/integration/signer-tls.test.ts).
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(tls.port, tls.listenHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : tls.port;
    setSignerPaused((await readSignerState(o.db)).paused);
    o.log.info({ listen: `${tls.listenHost}:${port}`, url: tls.url.origin }, 'signer listening (mutual TLS)');
    return { port, close: close(server) };
  }
  if (!o.socketPath) throw new Error('the signer needs a socket path or a TLS endpoint to listen on');
  const socketPath = o.socketPath;
  await clearStaleSocket(socketPath);
  const server = createServer(handler);
  limitTimes(server);
  const previousUmask = process.umask(0o177); // the socket is created 0600, never briefly wider
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(previousUmask);
  }
  await chmod(socketPath, 0o600);
  setSignerPaused((await readSignerState(o.db)).paused);
  o.log.info({ socket: socketPath }, 'signer listening');
  return { socketPath, close: close(server) };
}

function limitTimes(server: Server): void {
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
}

async function route(deps: Parameters<typeof answerSign>[0], req: IncomingMessage): Promise<Answer> {
  const path = (req.url ?? '').split('?')[0];
  if (req.method === 'GET' && path === '/healthz') {
    const state = await readSignerState(deps.db);
    setSignerPaused(state.paused);
    return { status: 200, body: { status: 'ok', paused: state.paused } };
  }
  if (req.method !== 'POST' || (path !== '/v1/sign' && path !== '/v1/public-key')) {
    req.resume();
    return malformed(`no route ${req.method} ${path}`);
  }
  const body = await readJson(req);
  if (body.kind === 'bad') {
    return path === '/v1/sign' ? answerMalformed(deps, body.message) : malformed(body.message);
  }
  if (path === '/v1/sign') return answerSign(deps, body.value);
  const parsed = publicKeyRequestSchema.safeParse(body.value);
  if (!parsed.success) return malformed('not a public key request');
  const pk = await deps.signer.publicKey(parsed.data.key);
  return { status: 200, body: { public_key: `0x${Buffer.from(pk).toString('hex')}` } };
}

async function readJson(req: IncomingMessage): Promise<{ kind: 'ok'; value: unknown } | { kind: 'bad'; message: string }> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) {
    req.resume();
    return { kind: 'bad', message: `body over ${MAX_BODY_BYTES} bytes` };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) over = true;
    else chunks.push(chunk);
  }
  if (over) return { kind: 'bad', message: `body over ${MAX_BODY_BYTES} bytes` };
  try {
    return { kind: 'ok', value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { kind: 'bad', message: 'the body is not JSON' };
  }
}

function send(res: ServerResponse, a: Answer): void {
  const text = JSON.stringify(a.body);
  res.writeHead(a.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Refuses to start beside a live signer on the same path; removes a socket file a dead one left behind. */
async function clearStaleSocket(path: string): Promise<void> {
  const st = await lstat(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw e;
  });
  if (!st) return;
  if (!st.isSocket()) throw new Error(`${path} exists and is not a socket: refusing to replace it`);
  const live = await new Promise<boolean>((resolve) => {
    const c = connect(path);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
  if (live) throw new Error(`a signer is already listening on ${path}`);
  await unlink(path);
}
