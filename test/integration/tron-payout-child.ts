import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { parseUnits } from 'ethers';
import { TronChainAdapter } from '../../chains/tron/adapter.js';
import { evmHexToTron, tronBase58 } from '../../chains/tron/address.js';
import { tronAddressAt, tronHotWalletKeyPath } from '../../chains/tron/keys.js';
import { sendTokenTransfer } from '../support/send-token-transfer.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';

// Child process of tron-payouts.test.ts: builds and signs a TRON payout, persists the signed transfer durably, then
// dies by SIGKILL either right after persisting (before broadcast) or right after broadcasting.
const env = process.env as Record<string, string>;
const signer = new MnemonicSigner('test test test test test test test test test test test junk');
const adapter = new TronChainAdapter({
  mode: 'test',
  jsonRpcUrl: env.RPC!,
  fullHost: env.FULL_HOST!,
  tokens: [
    { symbol: 'USDT', address: evmHexToTron(env.USDT!), decimals: 6 },
    { symbol: 'USDC', address: evmHexToTron(env.USDC!), decimals: 6 },
  ],
  confirmation: { kind: 'depth', confirmations: 3 },
});
const key = tronHotWalletKeyPath(Number(env.ACCOUNT), 0);
const hot = await tronAddressAt(signer, key);

const persist = async (signed: object) => {
  const fd = openSync(env.OUT!, 'w');
  writeSync(fd, JSON.stringify(signed));
  fsyncSync(fd);
  closeSync(fd);
  if (env.CRASH_AT === 'after-sign') process.kill(process.pid, 'SIGKILL');
};
await sendTokenTransfer(
  adapter,
  signer,
  { from: { key, address: tronBase58(hot) }, to: env.TO!, token: 'USDT', amount: parseUnits('4', 6) },
  persist,
);
process.kill(process.pid, 'SIGKILL');
