import { request } from 'node:http';

// The simulator's look at the signer process (docs/signer.md, "Protocol"): `GET /healthz` on its Unix socket, as a
// client of the service would reach it. The runner starts the other roles once the signer answers there.

/** `{paused}` from the signer's /healthz, or undefined when nothing answers on the socket (yet). */
export function signerHealth(socketPath: string, timeoutMs = 2000): Promise<{ paused: boolean } | undefined> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/healthz', method: 'GET', timeout: timeoutMs }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += String(d);
      });
      res.on('end', () => {
        try {
          const j = JSON.parse(body) as { status?: string; paused?: boolean };
          resolve(res.statusCode === 200 && j.status === 'ok' ? { paused: j.paused === true } : undefined);
        } catch {
          resolve(undefined);
        }
      });
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** Waits until the signer answers on its socket; the milliseconds it took. Throws after `ms`. */
export async function waitForSigner(socketPath: string, ms: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await signerHealth(socketPath)) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`the signer never answered on ${socketPath} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
