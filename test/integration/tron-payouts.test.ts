import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Contract, parseUnits, sha256, zeroPadValue } from 'ethers';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { deployTokens, fund, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { startFakeJavaTron, type FakeJavaTron } from '../../scripts/devnet/fake-java-tron/server.js';
import { TronChainAdapter } from '../../chains/tron/adapter.js';
import { evmHexToTron, tronBase58, tronToEvmHex } from '../../chains/tron/address.js';
import { tronAddressAt, tronHotWalletKeyPath } from '../../chains/tron/keys.js';
import { decodeSignedTransaction, decodeTriggerRawData, encodeSignedTransaction } from '../../chains/tron/protobuf.js';
import { sendTokenTransfer } from '../support/send-token-transfer.js';
import { TRANSFER_TOPIC } from '../../chains/evm/transfer-log.js';
import { TransferRejectedError, type SignedTransfer, type TokenTransferRequest } from '../../chains/types.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';

// Refund payouts on TRON against the fake java-tron wallet API (scripts/devnet/fake-java-tron), which verifies the
// signature over sha256(raw_data), enforces expiration, and executes the transfer on Anvil: balances are real.
// TRON-only behaviour; success, a reverted receipt, a short balance and re-signing after expiry are the shared
// scenarios (adapter-conformance-tron.test.ts).
const MNEMONIC = 'test test test test test test test test test test test junk';
const signer = new MnemonicSigner(MNEMONIC);
const u6 = (s: string) => parseUnits(s, 6);
const TRX = 1_000_000n;
const ACCOUNT = 7;

let node: AnvilNode;
let fake: FakeJavaTron;
let usdt: DeployedToken; // Tether-style
let usdc: DeployedToken; // FiatToken-style (blacklist on destination)
let adapter: TronChainAdapter;
let hot: string;
let destSeq = 0;

const hotKey = () => tronHotWalletKeyPath(ACCOUNT, 0);
/** A fresh destination (base58) per test: balances never mix. */
const newDestination = () => evmHexToTron(`0x${(0xd00000 + ++destSeq).toString(16).padStart(40, '0')}`);

function makeAdapter(o: { feeLimitCeilingSun?: bigint } = {}) {
  return new TronChainAdapter({
    mode: 'test',
    jsonRpcUrl: node.url,
    fullHost: fake.url,
    tokens: [
      { symbol: 'USDT', address: tronBase58(evmHexToTron(usdt.address)), decimals: 6 },
      { symbol: 'USDC', address: evmHexToTron(usdc.address), decimals: 6 },
    ],
    confirmation: { kind: 'depth', confirmations: 3 },
    ...o,
  });
}

async function tokenBalance(token: DeployedToken, tronAddress: string): Promise<bigint> {
  const c = new Contract(token.address, ['function balanceOf(address) view returns (uint256)'], node.provider);
  return (c.getFunction('balanceOf') as (a: string) => Promise<bigint>)(tronToEvmHex(tronAddress));
}

async function transferLogsTo(token: DeployedToken, tronAddress: string): Promise<number> {
  const logs = await node.rpc<unknown[]>('eth_getLogs', [
    {
      fromBlock: '0x0',
      toBlock: 'latest',
      address: token.address,
      topics: [TRANSFER_TOPIC, null, zeroPadValue(tronToEvmHex(tronAddress), 32)],
    },
  ]);
  return logs.length;
}

const request = (to: string, amount: bigint, token: 'USDT' | 'USDC' = 'USDT'): TokenTransferRequest => ({
  from: { key: hotKey(), address: tronBase58(hot) },
  to: tronBase58(to),
  token,
  amount,
});

beforeAll(async () => {
  node = await startAnvil({ chainId: 0x2b6653dc });
  [usdt, usdc] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
  ])) as [DeployedToken, DeployedToken];
  fake = await startFakeJavaTron(node, { solidifyDepth: 3 });
  adapter = makeAdapter();
  hot = await tronAddressAt(signer, hotKey());
  await fund(usdt, tronToEvmHex(hot), u6('1000'));
  await fund(usdc, tronToEvmHex(hot), u6('1000'));
});

beforeEach(() => {
  fake.chain.setTrx(hot, 100n * TRX);
  fake.chain.setStaked(hot, { energy: 0n, bandwidth: 0n });
  fake.chain.forced.length = 0;
});

afterAll(async () => {
  await fake?.close();
  await node?.stop();
});

describe('TRON payouts against the fake java-tron wallet API', () => {
  it('pays a refund: signed bytes persisted before broadcast, txID = sha256(raw_data), the fee is the TRX burned', async () => {
    const to = newDestination();
    const persisted: SignedTransfer[] = [];
    const { signed, broadcast } = await sendTokenTransfer(adapter, signer, request(to, u6('12.5')), async (s) => {
      persisted.push(structuredClone(s));
      expect(await tokenBalance(usdt, to)).toBe(0n); // nothing broadcast before the bytes are stored
    });
    expect(persisted).toEqual([signed]);
    expect(broadcast).toEqual({ status: 'accepted' });
    // txID = sha256(raw_data), the signed bytes carry exactly that raw data, expiration is what we persisted
    const { rawDataHex, signatures } = decodeSignedTransaction(signed.raw);
    expect(sha256(`0x${rawDataHex}`).slice(2)).toBe(signed.hash);
    expect(signatures).toHaveLength(1);
    const raw = decodeTriggerRawData(rawDataHex);
    expect(raw.expiration.toString()).toBe(signed.validUntilTimeMs);
    expect(raw.owner).toBe(hot);
    expect(raw.feeLimit).toBeGreaterThan(0n);
    expect(signed.sender).toBe(hot);

    await node.mine(3);
    const outcome = await adapter.getTransactionOutcome(signed.hash);
    expect(outcome).toMatchObject({ status: 'succeeded', final: true });
    if (outcome.status !== 'succeeded') throw new Error('unreachable');
    expect(outcome.fee).toBeGreaterThan(0n); // no staked energy: TRX burned
    expect(fake.chain.account(hot)!.balanceSun).toBe(100n * TRX - outcome.fee);
    expect(await tokenBalance(usdt, to)).toBe(u6('12.5'));
    expect(fake.unhandled).toEqual([]);
  });

  it('staked energy pays the call: no energy burned, only bandwidth when the free allowance is spent', async () => {
    fake.chain.setStaked(hot, { energy: 1_000_000n, bandwidth: 5_000n });
    fake.chain.setTrx(hot, 1n * TRX); // far too little to burn for energy
    const to = newDestination();
    const { signed } = await sendTokenTransfer(adapter, signer, request(to, u6('1')), async () => {});
    await node.mine(3);
    expect(await adapter.getTransactionOutcome(signed.hash)).toMatchObject({ status: 'succeeded', final: true, fee: 0n });
    expect(fake.chain.account(hot)!.balanceSun).toBe(1n * TRX);
    const r = await adapter.hotWalletResources(tronBase58(hot));
    expect(r.energy.used).toBeGreaterThan(0n);
    expect(r.energy.available).toBe(1_000_000n - r.energy.used);
    const text = await adapter.describeHotWallet(hot);
    expect(text).toContain(tronBase58(hot));
    expect(text).toContain('1.000000 TRX');
  });

  it('hot wallet: reserved key path, TRX and token balances, no account nonce', async () => {
    const hw = await adapter.deriveHotWallet(signer, ACCOUNT, 0);
    expect(hw).toEqual({ key: { curve: 'secp256k1', path: "m/44'/195'/7'/1/0" }, address: hot });
    fake.chain.setTrx(hot, 42n * TRX + 1n);
    expect(await adapter.getBalances(tronBase58(hot))).toEqual({
      native: 42n * TRX + 1n,
      tokens: { USDT: await tokenBalance(usdt, hot), USDC: await tokenBalance(usdc, hot) },
    });
    expect(await adapter.getAccountNonce()).toBeNull();
  });

  it('OUT_OF_ENERGY receipt: failed with a clear reason, nothing moved, TRX burned', async () => {
    const to = newDestination();
    fake.forceNextResult('OUT_OF_ENERGY');
    const { signed, broadcast } = await sendTokenTransfer(adapter, signer, request(to, u6('3')), async () => {});
    expect(broadcast.status).toBe('accepted');
    await node.mine(3);
    const outcome = await adapter.getTransactionOutcome(signed.hash);
    expect(outcome).toMatchObject({ status: 'failed', reason: 'out_of_energy', final: true });
    if (outcome.status !== 'failed') throw new Error('unreachable');
    expect(outcome.detail).toMatch(/OUT_OF_ENERGY/);
    expect(await tokenBalance(usdt, to)).toBe(0n);
    expect(fake.chain.account(hot)!.balanceSun).toBeLessThan(100n * TRX);
  });

  it('insufficient TRX: refused before signing; and when TRX drains after signing, the receipt is OUT_OF_ENERGY', async () => {
    const to = newDestination();
    fake.chain.setTrx(hot, 400_000n); // covers bandwidth (~0.35 TRX) but not the energy burn
    const err = await adapter.buildTokenTransfer(request(to, u6('1'))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransferRejectedError);
    expect((err as TransferRejectedError).reason).toBe('insufficient_gas');
    expect((err as Error).message).toMatch(/holds 400000 sun TRX/);

    fake.chain.setTrx(hot, 100n * TRX);
    const signed = await adapter.signTransfer(await adapter.buildTokenTransfer(request(to, u6('1'))), signer);
    fake.chain.setTrx(hot, 400_000n);
    expect(await adapter.broadcast(signed)).toEqual({ status: 'accepted' });
    await node.mine(3);
    expect(await adapter.getTransactionOutcome(signed.hash)).toMatchObject({ status: 'failed', reason: 'out_of_energy' });
    expect(await tokenBalance(usdt, to)).toBe(0n);

    fake.chain.setTrx(hot, 100n * TRX);
    const again = await adapter.signTransfer(await adapter.buildTokenTransfer(request(to, u6('1'))), signer);
    fake.chain.setTrx(hot, 100_000n); // not even the bandwidth burn: the node refuses the bytes
    expect(await adapter.broadcast(again)).toMatchObject({ status: 'rejected', reason: 'insufficient_gas' });
  });

  it('refuses before signing: destination blacklisted, fee_limit above the ceiling, unknown address', async () => {
    const to = newDestination();
    await (await (usdc.contract.getFunction('blacklist') as (a: string) => Promise<{ wait(): Promise<unknown> }>)(tronToEvmHex(to))).wait();
    await expect(adapter.buildTokenTransfer(request(to, u6('1'), 'USDC'))).rejects.toMatchObject({ reason: 'simulation_reverted' });
    const stingy = makeAdapter({ feeLimitCeilingSun: 1_000n });
    await expect(stingy.buildTokenTransfer(request(newDestination(), u6('1')))).rejects.toThrow(/exceeds the configured ceiling 1000 sun/);
    await expect(
      adapter.buildTokenTransfer({ ...request(to, 1n), to: '0x0000000000000000000000000000000000000001' }),
    ).rejects.toMatchObject({ reason: 'invalid' });
  });

  it('never signs a transaction that differs from the payout request', async () => {
    const unsigned = await adapter.buildTokenTransfer(request(newDestination(), u6('1')));
    const tampered = { ...unsigned, request: { ...unsigned.request, to: tronBase58(newDestination()) } };
    await expect(adapter.signTransfer(tampered, signer)).rejects.toThrow(/does not match the payout request/);
    const wrongKey = {
      ...unsigned,
      request: { ...unsigned.request, from: { ...unsigned.request.from, key: tronHotWalletKeyPath(ACCOUNT, 1) } },
    };
    await expect(adapter.signTransfer(wrongKey, signer)).rejects.toThrow(/signer key does not match/);
    // the node checks the signature over sha256(raw_data): a corrupted signature is refused, nothing moves
    const signed = await adapter.signTransfer(unsigned, signer);
    const { rawDataHex, signatures } = decodeSignedTransaction(signed.raw);
    const bad = signatures[0]!.slice(0, 10) + (signatures[0]![10] === 'a' ? 'b' : 'a') + signatures[0]!.slice(11);
    const forged = { ...signed, raw: `0x${encodeSignedTransaction(rawDataHex, [bad])}` };
    expect(await adapter.broadcast(forged)).toMatchObject({ status: 'rejected', reason: 'invalid' });
    expect(await adapter.getTransactionOutcome(signed.hash)).toEqual({ status: 'unknown' });
  });

  it('expiry is judged against the solidified block: refused by the head before isExpired says so', async () => {
    const to = newDestination();
    const stale = await adapter.signTransfer(await adapter.buildTokenTransfer(request(to, u6('2'))), signer);
    const head = await node.provider.getBlock('latest');
    await node.rpc('evm_setNextBlockTimestamp', [head!.timestamp + 90]);
    await node.mine(1);
    expect(await adapter.isExpired(stale)).toBe(false); // the solidified block is still older than the expiration
    expect(await adapter.broadcast(stale)).toMatchObject({ status: 'rejected', reason: 'expired' });
    await node.mine(3);
    expect(await adapter.isExpired(stale)).toBe(true);
    expect(await tokenBalance(usdt, to)).toBe(0n);
  });

  for (const crashAt of ['after-sign', 'after-broadcast'] as const) {
    it(`a process killed ${crashAt.replace('-', ' ')}: the persisted bytes are re-broadcast, exactly one transfer lands`, async () => {
      const to = newDestination();
      const dir = mkdtempSync(join(tmpdir(), 'tron-crash-'));
      const file = join(dir, 'signed.json');
      const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'tron-payout-child.ts')], {
        env: {
          ...process.env,
          RPC: node.url,
          FULL_HOST: fake.url,
          USDT: usdt.address,
          USDC: usdc.address,
          TO: tronBase58(to),
          ACCOUNT: String(ACCOUNT),
          OUT: file,
          CRASH_AT: crashAt,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += String(d)));
      const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
      expect(signal, stderr).toBe('SIGKILL');
      const persisted = JSON.parse(readFileSync(file, 'utf8')) as SignedTransfer;
      expect(await tokenBalance(usdt, to)).toBe(crashAt === 'after-sign' ? 0n : u6('4'));

      const restarted = makeAdapter(); // a new process: nothing in memory but the persisted transfer
      const first = await restarted.broadcast(persisted);
      expect(first.status).toBe(crashAt === 'after-sign' ? 'accepted' : 'already_known');
      expect(await restarted.broadcast(persisted)).toEqual({ status: 'already_known' });
      await node.mine(3);
      expect(await restarted.getTransactionOutcome(persisted.hash)).toMatchObject({ status: 'succeeded', final: true });
      expect(await tokenBalance(usdt, to)).toBe(u6('4'));
      expect(await transferLogsTo(usdt, to)).toBe(1);
    });
  }
});
