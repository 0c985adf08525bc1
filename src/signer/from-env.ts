import type { KeyDeriver, TxSigner } from '../../chains/types.js';
import { MnemonicSigner } from './mnemonic-signer.js';
import { XpubKeyDeriver, parseAccountXpubs } from './xpub-key-deriver.js';

// Key material comes only from the environment: HD_MNEMONIC (+ optional HD_PASSPHRASE) for a signing process, or
// HD_ACCOUNT_XPUBS for watch-only processes. Error messages never echo the values.
export type KeyMaterial =
  | { kind: 'signer'; signer: TxSigner & { accountXpub(coinType: number, account: number): string } }
  | { kind: 'watch-only'; deriver: KeyDeriver }
  | { kind: 'none' };

export function keyMaterialFromEnv(env: Record<string, string | undefined>): KeyMaterial {
  const mnemonic = env.HD_MNEMONIC?.trim();
  if (mnemonic) {
    try {
      return { kind: 'signer', signer: new MnemonicSigner(mnemonic, env.HD_PASSPHRASE ?? '') };
    } catch {
      throw new Error('HD_MNEMONIC is not a valid BIP39 English mnemonic');
    }
  }
  const xpubs = env.HD_ACCOUNT_XPUBS?.trim();
  if (xpubs) return { kind: 'watch-only', deriver: new XpubKeyDeriver(parseAccountXpubs(xpubs)) };
  return { kind: 'none' };
}

export function keyDeriverOf(material: KeyMaterial): KeyDeriver | null {
  switch (material.kind) {
    case 'signer':
      return material.signer;
    case 'watch-only':
      return material.deriver;
    case 'none':
      return null;
    default: {
      const never: never = material;
      return never;
    }
  }
}
