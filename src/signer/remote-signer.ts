import { randomBytes } from 'node:crypto';
import { request, type RequestOptions } from 'node:http';
import { isIP } from 'node:net';
import { request as tlsRequest } from 'node:https';
import type { KeyPath, Secp256k1Signature, SigningPreimage, TxSigner } from '../../chains/types.js';
import type { SignerEndpoint } from './endpoint.js';
import { SignerRefusedError, SignerUnavailableError } from '../domain/signer-errors.js';
import type { IntentSigner, SigningIntent } from './intent.js';
import { errorResponseSchema, signResponseSchema, type SignRequest } from './protocol.js';

// The client of the signer role (docs/signer.md), for processes that hold no key: public keys and signatures are asked
// over the signer's Unix socket, or over mutually authenticated TLS (this process's client certificate; the signer's
// certificate checked against the shared CA and the URL's host name). Every signature carries its intent (the outbound engine's job) and the preimage of
// its digest; a signature asked without one is refused here, before anything is sent.

const TIMEOUT_MS = 10_000;
const hexOf = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;

export class RemoteSigner implements TxSigner, IntentSigner {
  readonly intentAware = true;
  readonly #endpoint: SignerEndpoint;
  readonly #publicKeys = new Map<string, Promise<Uint8Array>>();

  /** A socket path, or an endpoint from signerEndpointFromEnv. */
  constructor(endpoint: string | SignerEndpoint) {
    this.#endpoint = typeof endpoint === 'string' ? { kind: 'socket', path: endpoint } : endpoint;
  }

  publicKey(key: KeyPath): Promise<Uint8Array> {
    const cacheKey = `${key.curve}:${key.path}`;
    let hit = this.#publicKeys.get(cacheKey);
    if (!hit) {
      hit = this.#call('/v1/public-key', { key }).then((r) => {
        const pk = (r as { public_key?: unknown }).public_key;
        if (typeof pk !== 'string' || !/^0x([0-9a-f]{64}|[0-9a-f]{66})$/.test(pk))
          throw new SignerUnavailableError('unreadable public key');
        return Uint8Array.from(Buffer.from(pk.slice(2), 'hex'));
      });
      hit.catch(() => this.#publicKeys.delete(cacheKey));
      this.#publicKeys.set(cacheKey, hit);
    }
    return hit;
  }

  async signSecp256k1Digest(
    key: KeyPath,
    digest: Uint8Array,
    preimage?: SigningPreimage,
    intent?: SigningIntent,
  ): Promise<Secp256k1Signature> {
    if (!intent || !preimage) throw new SignerRefusedError('malformed_request', 'a signature needs its intent and preimage');
    const r = await this.#sign({ request_id: requestId(), intent, key, payload: { curve: 'secp256k1', digest: hexOf(digest), preimage } });
    if (!('signature' in r)) throw new SignerUnavailableError('answered an ed25519 signature for a secp256k1 key');
    return { r: r.signature.r, s: r.signature.s, yParity: r.signature.y_parity };
  }

  async signEd25519(key: KeyPath, message: Uint8Array, intent?: SigningIntent): Promise<Uint8Array> {
    if (!intent) throw new SignerRefusedError('malformed_request', 'a signature needs its intent');
    const r = await this.#sign({
      request_id: requestId(),
      intent,
      key,
      payload: { curve: 'ed25519', message: Buffer.from(message).toString('base64') },
    });
    if (!('signature_ed25519' in r)) throw new SignerUnavailableError('answered a secp256k1 signature for an ed25519 key');
    return Uint8Array.from(Buffer.from(r.signature_ed25519, 'base64'));
  }

  async #sign(body: SignRequest) {
    const answer = await this.#call('/v1/sign', body);
    const ok = signResponseSchema.safeParse(answer);
    if (!ok.success) throw new SignerUnavailableError('unreadable signature');
    return ok.data;
  }

  #call(path: string, body: unknown): Promise<unknown> {
    const payload = JSON.stringify(body);
    const options: RequestOptions = {
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      timeout: TIMEOUT_MS,
    };
    const e = this.#endpoint;
    const send: typeof request = e.kind === 'socket' ? request : tlsRequest;
    if (e.kind === 'socket') options.socketPath = e.path;
    else
      Object.assign(options, {
        host: e.url.hostname,
        port: e.port,
        // SNI carries a name, never an IP address (RFC 6066); the certificate is checked against either.
        ...(isIP(e.url.hostname) ? {} : { servername: e.url.hostname }),
        ca: e.ca,
        cert: e.cert,
        key: e.key,
        rejectUnauthorized: true,
        // One connection per request: nothing of a TLS session outlives the call it served.
        agent: false,
      });
    return new Promise((resolve, reject) => {
      const req = send(options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => reject(new SignerUnavailableError(e.message)));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return reject(new SignerUnavailableError(`unreadable answer (HTTP ${res.statusCode})`));
          }
          if (res.statusCode === 200) return resolve(json);
          const refusal = errorResponseSchema.safeParse(json);
          if (refusal.success) return reject(new SignerRefusedError(refusal.data.error.code, refusal.data.error.message));
          reject(new SignerUnavailableError(`HTTP ${res.statusCode}`));
        });
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      req.on('error', (e) => reject(new SignerUnavailableError(e.message)));
      req.end(payload);
    });
  }

  toString(): string {
    return '[RemoteSigner]';
  }
}

function requestId(): string {
  return `sig_${randomBytes(12).toString('hex')}`;
}
