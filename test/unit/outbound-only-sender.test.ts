import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every transaction the service sends goes through the one outbound engine (docs/outbound.md): persisted before
// broadcast, replaced when stuck, re-signed only when proven dead, journaled. In the application (src/), only the
// engine signs and broadcasts with our keys. Issue 34 item 3b asked whether the Solana deposit setup still bypassed it:
// it does not (src/payments/deposit-setup.ts is an outbound kind, proven end to end by
// test/integration/journal-deposit-setup.test.ts), and this keeps any new path from doing so unnoticed.

const ROOT = resolve(import.meta.dirname, '../..');

/** Calls that sign or send a transaction: the adapters' own (signTransfer, broadcast) and raw node sends. */
const SENDS = /\.(broadcast|signTransfer)\(|sendRawTransaction|sendTransaction|\.signTransaction\(/;

/** Files of src/ allowed to send, and why. */
const ALLOWED: Record<string, string> = {
  'src/outbound/engine.ts': 'the outbound engine itself',
  'src/cli/devnet.ts': "the local devnet's payer simulator: pays a session from a devnet payer key, as a customer's wallet",
  'src/subscriptions/page/authorize-script.ts': "the authorization page's browser script, run by the customer's wallet",
};

async function tsFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await tsFiles(p)));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Lines of `text` that sign or send, without comment lines. */
function sendingLines(text: string): string[] {
  return text.split('\n').filter((l) => SENDS.test(l) && !/^\s*(\/\/|\*|\/\*)/.test(l));
}

describe('only the outbound engine sends (src/)', () => {
  it('flags a direct send (the check can fail)', () => {
    expect(sendingLines('  const r = await adapter.broadcast(await adapter.signTransfer(u, signer));')).toHaveLength(1);
    expect(sendingLines('  await connection.sendRawTransaction(tx.serialize());')).toHaveLength(1);
    expect(sendingLines('  // adapter.broadcast(x) in a comment')).toEqual([]);
  });

  it('no file of src/ signs or broadcasts but the engine and the customer-side helpers', async () => {
    const senders: string[] = [];
    for (const f of await tsFiles(join(ROOT, 'src'))) {
      if (sendingLines(await readFile(f, 'utf8')).length > 0) senders.push(relative(ROOT, f));
    }
    expect(senders.sort()).toEqual(Object.keys(ALLOWED).sort());
  });
});
