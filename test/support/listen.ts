import type { Server } from 'node:net';

/**
 * Binds a test server to a port the kernel picks on 127.0.0.1 and returns it. Never freePort() then listen(port): another
 * process (a simulator shard, another file's Anvil) can take the port in between, and a listen that fails emits 'error'
 * instead of calling back, so a bare `listen(port, cb)` promise hangs until the test's timeout.
 */
export function listenOnLoopback(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      const addr = server.address();
      if (typeof addr === 'object' && addr) resolve(addr.port);
      else reject(new Error('the server has no TCP address'));
    });
  });
}
