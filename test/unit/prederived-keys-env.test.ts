import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportPrederivedBatch, solanaAddressAt, solanaDepositKeyPath } from '../../chains/solana/keys.js';
import { keyDeriverOf, keyMaterialFromEnv } from '../../src/signer/from-env.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';

// HD_ED25519_PREDERIVED_FILE: a watch-only process derives Solana deposit addresses from the signer's exported batch
// (docs/solana.md), beside HD_ACCOUNT_XPUBS for the secp256k1 chains; outside the batch it fails loudly.

const MNEMONIC = 'test test test test test test test test test test test junk';
const signer = new MnemonicSigner(MNEMONIC);
const dir = mkdtempSync(join(tmpdir(), 'sp-prederived-'));

describe('HD_ED25519_PREDERIVED_FILE', () => {
  it("gives the signer's Solana addresses to a watch-only process, and refuses paths outside the batch", async () => {
    const file = join(dir, 'batch.txt');
    writeFileSync(file, await exportPrederivedBatch(signer, 3, 10n, 5));
    const material = keyMaterialFromEnv({ HD_ED25519_PREDERIVED_FILE: file, HD_ACCOUNT_XPUBS: `60/3=${signer.accountXpub(60, 3)}` });
    expect(material.kind).toBe('watch-only');
    const deriver = keyDeriverOf(material)!;
    for (const i of [10n, 14n]) {
      expect(await solanaAddressAt(deriver, solanaDepositKeyPath(3, i))).toBe(await solanaAddressAt(signer, solanaDepositKeyPath(3, i)));
    }
    const evm = { curve: 'secp256k1' as const, path: "m/44'/60'/3'/0/7" };
    expect(await deriver.publicKey(evm)).toEqual(await signer.publicKey(evm));
    await expect(deriver.publicKey(solanaDepositKeyPath(3, 15n))).rejects.toThrow(/no pre-derived key/);
  });

  it('alone serves Solana only, and names the variable a missing curve needs', async () => {
    const file = join(dir, 'alone.txt');
    writeFileSync(file, await exportPrederivedBatch(signer, 0, 0n, 1));
    const deriver = keyDeriverOf(keyMaterialFromEnv({ HD_ED25519_PREDERIVED_FILE: file }))!;
    expect(await solanaAddressAt(deriver, solanaDepositKeyPath(0, 0n))).toBe(await solanaAddressAt(signer, solanaDepositKeyPath(0, 0n)));
    await expect(deriver.publicKey({ curve: 'secp256k1', path: "m/44'/60'/0'/0/0" })).rejects.toThrow(/HD_ACCOUNT_XPUBS/);
  });

  it('refuses an unreadable or malformed file naming the variable, never echoing its content', () => {
    expect(() => keyMaterialFromEnv({ HD_ED25519_PREDERIVED_FILE: join(dir, 'missing.txt') })).toThrow(
      /^HD_ED25519_PREDERIVED_FILE: cannot read .*ENOENT/,
    );
    const bad = join(dir, 'bad.txt');
    writeFileSync(bad, 'secret-looking garbage\n');
    expect(() => keyMaterialFromEnv({ HD_ED25519_PREDERIVED_FILE: bad })).toThrow(/^HD_ED25519_PREDERIVED_FILE: pre-derived key lines/);
    expect(() => keyMaterialFromEnv({ HD_ED25519_PREDERIVED_FILE: bad })).not.toThrow(/garbage/);
  });

  it('is ignored by a signing process, which derives every key itself', () => {
    expect(keyMaterialFromEnv({ HD_MNEMONIC: MNEMONIC, HD_ED25519_PREDERIVED_FILE: join(dir, 'missing.txt') }).kind).toBe('signer');
  });
});
