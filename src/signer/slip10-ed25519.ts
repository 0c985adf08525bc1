import { createHmac, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';

// SLIP-0010 ed25519 derivation: hardened-only, so no xpub exists for it (watch-only Solana needs pre-derived keys).

const HARDENED = 0x8000_0000;
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Parses m/a'/b'/... (every level must be hardened) into raw child numbers. */
function parseHardenedPath(path: string): number[] {
  const parts = path.split('/');
  if (parts[0] !== 'm') throw new Error(`bad SLIP-0010 path ${path}`);
  return parts.slice(1).map((p) => {
    const m = /^(\d+)'$/.exec(p);
    if (!m) throw new Error(`SLIP-0010 ed25519 supports hardened levels only: ${path}`);
    const n = Number(m[1]);
    if (n >= HARDENED) throw new Error(`index out of range in ${path}`);
    return n + HARDENED;
  });
}

/** 32-byte ed25519 private seed at `path` from a BIP39 seed. */
export function deriveEd25519Seed(bip39Seed: Uint8Array, path: string): Buffer {
  let digest = createHmac('sha512', 'ed25519 seed').update(bip39Seed).digest();
  for (const child of parseHardenedPath(path)) {
    const data = Buffer.alloc(37);
    digest.copy(data, 1, 0, 32);
    data.writeUInt32BE(child, 33);
    digest = createHmac('sha512', digest.subarray(32)).update(data).digest();
  }
  return digest.subarray(0, 32);
}

export function ed25519PrivateKey(seed32: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed32]), format: 'der', type: 'pkcs8' });
}

export function ed25519PublicKey(privateKey: KeyObject): Uint8Array {
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return new Uint8Array(spki.subarray(spki.length - 32));
}

export function ed25519Sign(privateKey: KeyObject, message: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, privateKey));
}
