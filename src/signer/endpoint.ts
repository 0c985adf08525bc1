import { readFileSync } from 'node:fs';

// Where the signer role is reached (docs/signer.md, "Transport"): a Unix socket on one host (SIGNER_SOCKET), or
// mutually authenticated TLS between pods (SIGNER_TLS_URL with SIGNER_TLS_CA_FILE, SIGNER_TLS_CERT_FILE and
// SIGNER_TLS_KEY_FILE). The same variables serve both ends: the signer listens where its clients connect. With TLS
// each end presents its own certificate and accepts only a peer whose certificate the CA signed, so a pod without a
// client certificate cannot even open a connection. Errors name the variable, never a file's content.

export type SignerEndpoint =
  | { kind: 'socket'; path: string }
  | {
      kind: 'tls';
      /** What clients connect to: https://host:port (host: the signer's DNS name, the certificate's subject). */
      url: URL;
      /** Where the signer itself listens: SIGNER_TLS_LISTEN_HOST (default 0.0.0.0) and the URL's port. */
      listenHost: string;
      port: number;
      /** PEM: the CA both ends trust, this end's certificate and its private key. */
      ca: Buffer;
      cert: Buffer;
      key: Buffer;
    };

/** The signer's endpoint from the environment; undefined when no signer is configured. Throws on a half setting. */
export function signerEndpointFromEnv(env: Record<string, string | undefined>): SignerEndpoint | undefined {
  const socket = env.SIGNER_SOCKET?.trim();
  const url = env.SIGNER_TLS_URL?.trim();
  if (socket && url) throw new Error('SIGNER_SOCKET and SIGNER_TLS_URL are both set: the signer is reached by one of them');
  if (socket) return { kind: 'socket', path: socket };
  if (!url) {
    const stray = TLS_FILES.find((v) => env[v]?.trim());
    if (stray) throw new Error(`${stray} is set without SIGNER_TLS_URL`);
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('SIGNER_TLS_URL: not a URL (https://host:port)');
  }
  if (parsed.protocol !== 'https:' || !parsed.port || parsed.pathname !== '/' || parsed.search || parsed.username)
    throw new Error('SIGNER_TLS_URL: must be https://host:port, with an explicit port and nothing after it');
  const [ca, cert, key] = TLS_FILES.map((v) => readPem(env, v));
  return {
    kind: 'tls',
    url: parsed,
    listenHost: env.SIGNER_TLS_LISTEN_HOST?.trim() || '0.0.0.0',
    port: Number(parsed.port),
    ca: ca as Buffer,
    cert: cert as Buffer,
    key: key as Buffer,
  };
}

/** How an endpoint is named in logs (never a certificate or key). */
export function describeEndpoint(e: SignerEndpoint): string {
  return e.kind === 'socket' ? `unix:${e.path}` : e.url.origin;
}

const TLS_FILES = ['SIGNER_TLS_CA_FILE', 'SIGNER_TLS_CERT_FILE', 'SIGNER_TLS_KEY_FILE'] as const;

function readPem(env: Record<string, string | undefined>, name: (typeof TLS_FILES)[number]): Buffer {
  const file = env[name]?.trim();
  if (!file) throw new Error(`SIGNER_TLS_URL needs ${name} (a PEM file)`);
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (e) {
    throw new Error(`${name}: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!pem.toString('latin1').includes('-----BEGIN ')) throw new Error(`${name}: ${file} is not a PEM file`);
  return pem;
}
