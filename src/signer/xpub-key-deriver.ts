import type { KeyDeriver, KeyPath } from '../../chains/types.js';
import { parseBip44Path, publicKeyFromAccountXpub } from '../../chains/hd/bip44.js';

// Watch-only key derivation: account-level xpubs only, no private key in the process. Covers secp256k1 families
// (EVM, TRON). ed25519 (Solana) is hardened-only and cannot be derived from public data: it throws here.
export class XpubKeyDeriver implements KeyDeriver {
  readonly #xpubs: ReadonlyMap<string, string>;

  /** `xpubs` maps "coinType/account" (e.g. "60/3") to that account's xpub. */
  constructor(xpubs: ReadonlyMap<string, string>) {
    this.#xpubs = xpubs;
  }

  async publicKey(key: KeyPath): Promise<Uint8Array> {
    if (key.curve !== 'secp256k1') throw new Error('watch-only derivation supports secp256k1 paths only');
    const p = parseBip44Path(key.path);
    if (!p) throw new Error(`not a BIP44 path: ${key.path}`);
    const xpub = this.#xpubs.get(`${p.coinType}/${p.account}`);
    if (!xpub) throw new Error(`no xpub configured for coin ${p.coinType} account ${p.account}`);
    return publicKeyFromAccountXpub(xpub, p.change, p.index);
  }
}

/** Parses HD_ACCOUNT_XPUBS: "60/0=xpub...,60/1=xpub...,195/0=xpub..." (whitespace and newlines allowed). */
export function parseAccountXpubs(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of text.split(/[,\s]+/).filter(Boolean)) {
    const m = /^(\d+)\/(\d+)=(xpub[1-9A-HJ-NP-Za-km-z]+)$/.exec(entry);
    if (!m) throw new Error('HD_ACCOUNT_XPUBS entries must look like 60/0=xpub...');
    out.set(`${m[1]}/${m[2]}`, m[3]!);
  }
  return out;
}
