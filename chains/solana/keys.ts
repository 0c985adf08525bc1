import { PublicKey } from '@solana/web3.js';
import type { KeyDeriver, KeyPath } from '../types.js';
import { assertChildIndex } from '../hd/bip44.js';

// Solana keys: SLIP-0010 ed25519 (hardened only) under BIP44 coin type 501, one BIP44 account per merchant and mode:
//   m/44'/501'/<account>'/0'/<index>'   deposit owner of session <index>
//   m/44'/501'/<account>'/1'/<index>'   reserved hot-wallet keys of that account (index 0: refund payouts)
// This mirrors the change/index tail of the EVM and TRON paths, with every level hardened because ed25519 has no
// public derivation. Wallets (Phantom, Solana CLI) use m/44'/501'/<i>'/0'; none of our addresses collide with theirs
// at the same depth, so importing the mnemonic into a wallet never shows one merchant another's deposits.

const COIN_TYPE_SOLANA = 501;
const SOLANA_CHANGE_DEPOSIT = 0;
const SOLANA_CHANGE_HOT_WALLET = 1;

function solanaKeyPath(account: number, change: number, index: bigint | number): KeyPath {
  const a = assertChildIndex(account, 'account');
  const c = assertChildIndex(change, 'change');
  const i = assertChildIndex(index, 'index');
  return { curve: 'ed25519', path: `m/44'/${COIN_TYPE_SOLANA}'/${a}'/${c}'/${i}'` };
}

export function solanaDepositKeyPath(account: number, index: bigint | number): KeyPath {
  return solanaKeyPath(account, SOLANA_CHANGE_DEPOSIT, index);
}

export function solanaHotWalletKeyPath(account: number, index: bigint | number = 0): KeyPath {
  return solanaKeyPath(account, SOLANA_CHANGE_HOT_WALLET, index);
}

/** Canonical Solana address: base58 of 32 bytes (on or off the curve: PDAs may own token accounts). */
export function normalizeSolanaAddress(text: string): string | null {
  if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(text)) return null;
  try {
    const key = new PublicKey(text);
    return key.toBase58() === text ? text : null;
  } catch {
    return null;
  }
}

export async function solanaAddressAt(keys: KeyDeriver, path: KeyPath): Promise<string> {
  const pub = await keys.publicKey(path);
  if (pub.length !== 32) throw new Error(`ed25519 public key must be 32 bytes, got ${pub.length}`);
  return new PublicKey(pub).toBase58();
}

/**
 * Watch-only Solana: ed25519 has no xpub, so a signing process pre-derives batches of public keys and the API and
 * watcher processes read them. Batch format, one key per line: `m/44'/501'/3'/0'/17'=<base58 public key>`.
 * A process asking for a path outside the batch fails loudly; it never guesses.
 */
export class PrederivedEd25519Keys implements KeyDeriver {
  readonly #keys: Map<string, Uint8Array>;

  constructor(entries: Iterable<[string, string]>) {
    this.#keys = new Map();
    for (const [path, base58] of entries) this.#keys.set(path, new PublicKey(base58).toBytes());
  }

  static parse(text: string): PrederivedEd25519Keys {
    const entries: [string, string][] = [];
    for (const line of text.split(/\r?\n/).map((l) => l.trim())) {
      if (!line || line.startsWith('#')) continue;
      const m = /^(m(?:\/\d+')+)=([1-9A-HJ-NP-Za-km-z]{32,44})$/.exec(line);
      if (!m) throw new Error("pre-derived key lines must look like m/44'/501'/0'/0'/0'=<base58>");
      entries.push([m[1]!, m[2]!]);
    }
    return new PrederivedEd25519Keys(entries);
  }

  get size(): number {
    return this.#keys.size;
  }

  async publicKey(key: KeyPath): Promise<Uint8Array> {
    if (key.curve !== 'ed25519') throw new Error('pre-derived keys hold ed25519 (Solana) paths only');
    const pub = this.#keys.get(key.path);
    if (!pub) throw new Error(`no pre-derived key for ${key.path}; have the signer export a larger batch`);
    return pub;
  }
}

/** Run where the mnemonic lives (the signer): exports deposit keys [from, from+count) of `account` as a batch. */
export async function exportPrederivedBatch(signer: KeyDeriver, account: number, from: bigint, count: number): Promise<string> {
  const lines: string[] = [];
  for (let i = 0n; i < BigInt(count); i++) {
    const path = solanaDepositKeyPath(account, from + i);
    lines.push(`${path.path}=${await solanaAddressAt(signer, path)}`);
  }
  return lines.join('\n') + '\n';
}
