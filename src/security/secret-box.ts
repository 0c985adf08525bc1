import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// AES-256-GCM under the master key from the environment. Stored form: v1.<iv>.<tag>.<ciphertext>, base64url parts.
// The associated data binds a ciphertext to its row, so a secret copied onto another row does not decrypt.
export class SecretBox {
  private readonly key: Buffer;

  constructor(masterKeyHex: string) {
    this.key = Buffer.from(masterKeyHex, 'hex');
    if (this.key.length !== 32) throw new Error('master key must be 32 bytes');
  }

  seal(plaintext: string, associatedData: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(associatedData));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), ct].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  open(sealed: string, associatedData: string): string {
    const [version, iv, tag, ct] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unrecognised sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(associatedData));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}
