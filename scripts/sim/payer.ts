import { type BaseWallet, Interface, type JsonRpcProvider } from 'ethers';

// The simulated payer's wallet on an EVM chain (docs/simulation.md): it signs each token transfer itself at the next
// nonce it keeps, broadcasts the signed bytes, and keeps them until the transfer is mined. A transfer that vanished from
// the node (a reorg dropped it: it is neither mined nor in the pool) is broadcast again with the same signed bytes, so
// the same nonce and the same hash: a wallet re-sending a payment, never a second payment. Sends are serialized, so
// concurrent scenario steps never race for a nonce.

const ERC20 = new Interface(['function transfer(address to, uint256 value)']);
/** How long after being mined a transfer is still watched (a reorg deeper than the confirmations is not simulated). */
const KEEP_MINED_MS = 60_000;

export interface SentTransfer {
  hash: string;
  nonce: number;
}

export interface EvmPayer {
  address: string;
  /** Signs and broadcasts a `transfer(to, amount)` of the token contract; resolves once the node accepted it. */
  transfer(token: string, to: string, amount: bigint): Promise<SentTransfer>;
  /** Signs and broadcasts a call of `to` with `data` (an `approve`, say), kept and re-sent like a transfer. */
  send(to: string, data: string): Promise<SentTransfer>;
  /** Resolves once `hash` is mined, re-broadcasting it whenever it vanished; rejects after `timeoutMs`. */
  mined(hash: string, timeoutMs: number, onRebroadcast?: (hash: string) => void): Promise<void>;
  /** Re-broadcasts every watched transfer that is neither mined nor pending (after a reorg); returns their hashes. */
  rebroadcastVanished(): Promise<string[]>;
}

interface Watched {
  raw: string;
  nonce: number;
  minedAt?: number;
}

export function evmPayer(wallet: BaseWallet, provider: JsonRpcProvider): EvmPayer {
  const watched = new Map<string, Watched>();
  const state: { next?: number } = {};
  const queue = { tail: Promise.resolve() as Promise<unknown> };
  const serial = <T>(f: () => Promise<T>): Promise<T> => {
    const next = queue.tail.then(f, f);
    queue.tail = next.catch(() => {});
    return next;
  };
  const broadcast = async (raw: string) => {
    try {
      await provider.send('eth_sendRawTransaction', [raw]);
    } catch (err) {
      // The node already has it (pending, or mined meanwhile): nothing to re-send.
      if (!/already known|already imported|nonce too low|known transaction/i.test((err as Error).message)) throw err;
    }
  };
  /** 'mined', 'pending' or 'gone', as the node (the canonical chain and its pool) sees it now. */
  const status = async (hash: string): Promise<'mined' | 'pending' | 'gone'> => {
    const r = await provider.send('eth_getTransactionReceipt', [hash]);
    if (r) return 'mined';
    return (await provider.send('eth_getTransactionByHash', [hash])) ? 'pending' : 'gone';
  };
  const rebroadcastIfGone = async (hash: string, w: Watched): Promise<boolean> => {
    const s = await status(hash);
    if (s === 'mined') {
      w.minedAt ??= Date.now();
      return false;
    }
    w.minedAt = undefined;
    if (s === 'pending') return false;
    await broadcast(w.raw);
    return true;
  };
  const send = (to: string, data: string): Promise<SentTransfer> =>
    serial(async () => {
      state.next ??= await provider.getTransactionCount(wallet.address, 'pending');
      const nonce = state.next;
      const tx = await wallet.populateTransaction({ to, data, nonce });
      const raw = await wallet.signTransaction(tx);
      const hash = (await provider.send('eth_sendRawTransaction', [raw])) as string;
      state.next = nonce + 1;
      const now = Date.now();
      for (const [h, w] of watched) if (w.minedAt !== undefined && now - w.minedAt > KEEP_MINED_MS) watched.delete(h);
      watched.set(hash.toLowerCase(), { raw, nonce });
      return { hash, nonce };
    });
  return {
    address: wallet.address,
    transfer: (token, to, amount) => send(token, ERC20.encodeFunctionData('transfer', [to, amount])),
    send,
    async mined(hash, timeoutMs, onRebroadcast) {
      const end = Date.now() + timeoutMs;
      const w = watched.get(hash.toLowerCase());
      for (;;) {
        if ((await status(hash)) === 'mined') {
          if (w) w.minedAt ??= Date.now();
          return;
        }
        if (w && (await serial(() => rebroadcastIfGone(hash, w)))) onRebroadcast?.(hash);
        if (Date.now() > end) throw new Error(`payment ${hash} never mined`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    rebroadcastVanished: () =>
      serial(async () => {
        const out: string[] = [];
        // In nonce order, so each re-sent transfer can follow the one before it.
        for (const [hash, w] of [...watched].sort((a, b) => a[1].nonce - b[1].nonce)) if (await rebroadcastIfGone(hash, w)) out.push(hash);
        return out;
      }),
  };
}
