import { readFileSync } from 'node:fs';
import { PrederivedEd25519Keys } from '../../chains/solana/keys.js';
import type { KeyDeriver, KeyPath } from '../../chains/types.js';
import { signerEndpointFromEnv } from './endpoint.js';
import { MnemonicSigner } from './mnemonic-signer.js';
import { RemoteSigner } from './remote-signer.js';
import { XpubKeyDeriver, parseAccountXpubs } from './xpub-key-deriver.js';

// Key material comes only from the environment: HD_MNEMONIC, or HD_MNEMONIC_FILE (a file holding it: a mounted
// secret), + optional HD_PASSPHRASE, for a signing process (the signer role, or any process when no signer is
// configured); SIGNER_SOCKET or SIGNER_TLS_URL (docs/signer.md, "Transport") for a process that asks the signer; or
// HD_ACCOUNT_XPUBS (secp256k1 chains) and HD_ED25519_PREDERIVED_FILE (Solana, docs/solana.md) for watch-only
// processes; a signing process derives everything itself and ignores both. Error messages never echo the values.
export type KeyMaterial =
  | { kind: 'signer'; signer: MnemonicSigner }
  /** SIGNER_SOCKET / SIGNER_TLS_URL: the signer role holds the seed; this process asks it for keys and signatures. */
  | { kind: 'remote'; signer: RemoteSigner }
  | { kind: 'watch-only'; deriver: KeyDeriver }
  | { kind: 'none' };

/**
 * `signerRole`: this process is the signer (ROLES=signer), which alone reads the seed. Any other process given the
 * signer's endpoint uses the signer and must hold no key material: HD_MNEMONIC (or its file) there is refused, loudly.
 */
export function keyMaterialFromEnv(env: Record<string, string | undefined>, o: { signerRole?: boolean } = {}): KeyMaterial {
  const endpoint = signerEndpointFromEnv(env);
  const seedFile = env.HD_MNEMONIC_FILE?.trim();
  if (seedFile && env.HD_MNEMONIC?.trim()) throw new Error('HD_MNEMONIC and HD_MNEMONIC_FILE are both set: give the seed once');
  if (!o.signerRole && endpoint) {
    if (env.HD_MNEMONIC?.trim() || seedFile || env.HD_PASSPHRASE?.trim())
      throw new Error(
        'HD_MNEMONIC is set in a process that uses the signer (SIGNER_SOCKET or SIGNER_TLS_URL): only ROLES=signer may hold the seed',
      );
    return { kind: 'remote', signer: new RemoteSigner(endpoint) };
  }
  const mnemonic = seedFile ? readSeedFile(seedFile) : env.HD_MNEMONIC?.trim();
  if (o.signerRole && !mnemonic)
    throw new Error('ROLES=signer needs HD_MNEMONIC or HD_MNEMONIC_FILE: the signer is the process that holds the seed');
  if (mnemonic) {
    try {
      return { kind: 'signer', signer: new MnemonicSigner(mnemonic, env.HD_PASSPHRASE ?? '') };
    } catch {
      throw new Error(`${seedFile ? 'HD_MNEMONIC_FILE' : 'HD_MNEMONIC'} is not a valid BIP39 English mnemonic`);
    }
  }
  const xpubs = env.HD_ACCOUNT_XPUBS?.trim();
  const prederivedFile = env.HD_ED25519_PREDERIVED_FILE?.trim();
  if (!xpubs && !prederivedFile) return { kind: 'none' };
  const secp256k1 = xpubs ? new XpubKeyDeriver(parseAccountXpubs(xpubs)) : undefined;
  const ed25519 = prederivedFile ? loadPrederivedKeys(prederivedFile) : undefined;
  const deriver: KeyDeriver = {
    publicKey(key: KeyPath) {
      const d = key.curve === 'ed25519' ? ed25519 : secp256k1;
      if (!d) {
        const missing = key.curve === 'ed25519' ? 'HD_ED25519_PREDERIVED_FILE' : 'HD_ACCOUNT_XPUBS';
        return Promise.reject(new Error(`watch-only: no ${key.curve} keys (set ${missing}) for ${key.path}`));
      }
      return d.publicKey(key);
    },
  };
  return { kind: 'watch-only', deriver };
}

/** The seed from a file (a mounted Kubernetes secret, a Docker secret): errors name the variable, never the content. */
function readSeedFile(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new Error(`HD_MNEMONIC_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** A signer's exported batch of Solana public keys (exportPrederivedBatch); errors name the variable, not the content. */
function loadPrederivedKeys(file: string): PrederivedEd25519Keys {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`HD_ED25519_PREDERIVED_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return PrederivedEd25519Keys.parse(text);
  } catch (e) {
    throw new Error(`HD_ED25519_PREDERIVED_FILE: ${(e as Error).message}`);
  }
}

export function keyDeriverOf(material: KeyMaterial): KeyDeriver | null {
  switch (material.kind) {
    case 'signer':
    case 'remote':
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
