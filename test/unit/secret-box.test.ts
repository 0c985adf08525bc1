import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/security/secret-box.js';
import { generateKeyMaterial, hashApiKey, keyPrefix, modeOfKey } from '../../src/security/api-key-material.js';

describe('SecretBox', () => {
  const box = new SecretBox('11'.repeat(32));

  it('round-trips and never stores the plaintext', () => {
    const sealed = box.seal('s3cret-value', 'api_keys:key_1');
    expect(sealed).not.toContain('s3cret');
    expect(box.open(sealed, 'api_keys:key_1')).toBe('s3cret-value');
    expect(box.seal('s3cret-value', 'x')).not.toBe(box.seal('s3cret-value', 'x')); // fresh IV each time
  });

  it('refuses another row, another key and tampering', () => {
    const sealed = box.seal('v', 'row:a');
    expect(() => box.open(sealed, 'row:b')).toThrow();
    expect(() => new SecretBox('22'.repeat(32)).open(sealed, 'row:a')).toThrow();
    // Tampering: flip one bit of the ciphertext (a fixed replacement byte equals the real one in 1 of 256 runs).
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0] = ct[0]! ^ 0x01;
    parts[3] = ct.toString('base64url');
    expect(() => box.open(parts.join('.'), 'row:a')).toThrow();
  });
});

describe('API key material', () => {
  it('has the spec prefixes, a display prefix and a SHA-256 hash', () => {
    const k = generateKeyMaterial('test');
    expect(k.key).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(k.prefix).toBe(k.key.slice(0, 16));
    expect(k.hash).toBe(hashApiKey(k.key));
    expect(k.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(k.secret).toMatch(/^[0-9A-Za-z]{48}$/);
    expect(generateKeyMaterial('live').key).toMatch(/^sk_live_/);
    expect(keyPrefix('sk_live_abcdefghXYZ')).toBe('sk_live_abcdefgh');
    expect(modeOfKey('sk_live_x')).toBe('live');
    expect(modeOfKey('pk_test_x')).toBeUndefined();
  });
});
