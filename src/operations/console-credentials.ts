import { createHash, randomBytes } from 'node:crypto';
import { type Algorithm, hash, verify } from '@node-rs/argon2';
import { randomBase62 } from '../domain/ids.js';

// Console credentials (docs/console.md, "Accounts and security"): argon2id password hashes, generated temporary
// passwords, and one-time recovery codes. Used by the users' operations (CLI and console) and by the sign-in.

/**
 * argon2id with OWASP's recommended minimum: 19 MiB of memory, 2 passes, 1 lane (about 25 ms on one core). The
 * parameters are stored in each hash (PHC string), so raising them later leaves old hashes verifiable.
 */
/** Algorithm.Argon2id (a const enum, not importable under isolatedModules). */
const ARGON2ID = 2 as Algorithm;

export const ARGON2_PARAMS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;

export async function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_PARAMS);
}

/** The dummy hash verified for unknown emails, made once per process. */
const dummy: { hash?: Promise<string> } = {};

/**
 * Whether `password` matches `passwordHash`. Without a hash (an unknown email) a dummy hash is verified all the same,
 * so the answer takes as long whether or not the account exists.
 */
export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (passwordHash === null) {
    dummy.hash ??= hashPassword(randomBytes(16).toString('hex'));
    await verify(await dummy.hash, password).catch(() => false);
    return false;
  }
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** A temporary password: 20 base62 characters (~119 bits), shown once; the user must change it at first sign-in. */
export function generateTemporaryPassword(): string {
  return randomBase62(20);
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Ten recovery codes like `k3mfa-x7q2b-9wz4d` (75 bits each); shown once, stored as their sha256. */
export function generateRecoveryCodes(count = 10): string[] {
  return Array.from({ length: count }, () => {
    const bytes = randomBytes(15);
    const chars = [...bytes].map((b) => BASE32[b & 31]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5, 10)}-${chars.slice(10, 15)}`;
  });
}

/** The stored form of a recovery code: sha256 of the code without dashes or spaces, lowercased. */
export function hashRecoveryCode(code: string): string {
  const normal = code.replace(/[\s-]/g, '').toLowerCase();
  return createHash('sha256').update(`console-recovery:${normal}`).digest('hex');
}
