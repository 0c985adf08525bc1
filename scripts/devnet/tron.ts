import { createServer, type Server } from 'node:http';
import { HDNodeWallet, Wallet } from 'ethers';
import { evmHexToTron, normalizeTronAddress, tronBase58 } from '../../chains/tron/address.js';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH, type DevnetTokenState } from '../../src/cli/devnet.js';
import { startAnvil, type AnvilNode } from '../../test/support/anvil.js';
import { deployToken, mintTo, type TokenShape } from '../../test/support/evm-tokens/deploy.js';
import { startFakeJavaTron, type FakeJavaTron } from './fake-java-tron/server.js';
import { chainEnvPrefix } from '../../chains/env-names.js';
import { soleNetworkOfFamily } from '../../chains/registry.js';

// The demo's TRON, Nile-like and in test mode: THE FAKE java-tron wallet API of the tests (scripts/devnet/fake-java-tron,
// a documented fake: no TRON node installs from a package registry) over its own Anvil node, which answers as java-tron's
// Ethereum-compatible JSON-RPC with Nile's chain id and mines a block a second. Test USDT (Tether-style) and USDC
// (FiatToken-style), 6 decimals, are deployed there; the devnet payer (the same key as on the EVM chains) holds both and
// TRX. The fake has no TRX transfer (TransferContract), so TRX moves between accounts through the demo's small TRX
// faucet below (local only): the payer's balance goes to the recipient in the fake's ledger.

/** Nile's chain id as java-tron's eth_chainId answers it (the last 4 bytes of its genesis block id). */
export const DEV_TRON_CHAIN_ID = 0xcd8690dc;
/** Blocks behind the head the fake treats as solidified; the service waits as many confirmations. */
const SOLIDIFY_DEPTH = 3;
const SUN_PER_TRX = 1_000_000n;
/** The payer's TRX: fees of its own transfers, and what the faucet hands out (refund wallets, testnet runs). */
const PAYER_TRX = 1_000_000n * SUN_PER_TRX;

export interface DevTronChain {
  node: AnvilNode;
  fake: FakeJavaTron;
  faucetUrl: string;
  chainId: number;
  /** Token contracts in base58 (T...), as the service and the payer's wallet name them. */
  tokens: Record<'USDT' | 'USDC', DevnetTokenState>;
  /** The 0x form of each token contract on the Anvil node. */
  evmTokens: Record<'USDT' | 'USDC', string>;
  /** The devnet payer's TRON address (base58). */
  payer: string;
  stop(): Promise<void>;
}

const SHAPES: Array<{ symbol: 'USDT' | 'USDC'; shape: TokenShape }> = [
  { symbol: 'USDT', shape: 'tether' },
  { symbol: 'USDC', shape: 'fiat' },
];

export async function startDevTronChain(): Promise<DevTronChain> {
  const node = await startAnvil({ chainId: DEV_TRON_CHAIN_ID, blockTime: 1 });
  let fake: FakeJavaTron | undefined;
  let faucet: Server | undefined;
  try {
    const deployer = new Wallet(HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, "m/44'/60'/0'/0/0").privateKey, node.provider);
    const payerEvm = HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).address;
    const payer = evmHexToTron(payerEvm);
    const tokens = {} as DevTronChain['tokens'];
    const evmTokens = {} as DevTronChain['evmTokens'];
    for (const { symbol, shape } of SHAPES) {
      const contract = await deployToken(deployer, shape, symbol, 6);
      await mintTo(contract, shape, payerEvm, 1_000_000n * 10n ** 6n);
      evmTokens[symbol] = await contract.getAddress();
      tokens[symbol] = { address: tronBase58(evmHexToTron(evmTokens[symbol])), decimals: 6 };
    }
    fake = await startFakeJavaTron(node, { solidifyDepth: SOLIDIFY_DEPTH });
    fake.chain.setTrx(payer, PAYER_TRX);
    const f = fake;
    faucet = await startTrxFaucet(f, payer);
    const addr = faucet.address();
    const faucetUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const server = faucet;
    return {
      node,
      fake: f,
      faucetUrl,
      chainId: DEV_TRON_CHAIN_ID,
      tokens,
      evmTokens,
      payer: tronBase58(payer),
      async stop() {
        await new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        });
        await f.close();
        await node.stop();
      },
    };
  } catch (err) {
    faucet?.close();
    await fake?.close();
    await node.stop();
    throw err;
  }
}

/** CHAIN_<TRON network>_TEST_* of docs/chains.md: detection on the node's JSON-RPC, payouts through the fake wallet API. */
export function tronChainEnv(c: DevTronChain): Record<string, string> {
  const p = chainEnvPrefix(soleNetworkOfFamily('tron'), 'test');
  return {
    [`${p}RPC_URL`]: `${c.fake.url}/jsonrpc`,
    [`${p}FULL_HOST`]: c.fake.url,
    [`${p}CHAIN_ID`]: String(c.chainId),
    [`${p}CONFIRMATIONS`]: String(SOLIDIFY_DEPTH),
    [`${p}POLL_INTERVAL_MS`]: '500',
    [`${p}USDT_CONTRACT`]: c.tokens.USDT.address,
    [`${p}USDT_DECIMALS`]: String(c.tokens.USDT.decimals),
    [`${p}USDC_CONTRACT`]: c.tokens.USDC.address,
    [`${p}USDC_DECIMALS`]: String(c.tokens.USDC.decimals),
  };
}

/** Gives `to` (any TRON spelling) `sun` out of the payer's TRX; activates it as a TRX transfer would. */
export function moveTrx(fake: FakeJavaTron, from: string, to: string, sun: bigint): void {
  const target = normalizeTronAddress(to);
  if (!target) throw new Error(`not a TRON address: ${to}`);
  const have = fake.chain.account(from)?.balanceSun ?? 0n;
  if (have < sun) throw new Error(`the devnet payer holds ${have} sun, ${sun} asked`);
  fake.chain.setTrx(from, have - sun);
  fake.chain.setTrx(target, (fake.chain.account(target)?.balanceSun ?? 0n) + sun);
}

/**
 * POST / {"to": "<TRON address>", "sun": "<integer>"} → {"transfer_id", "to", "sun", "balance_sun"}: the demo's TRX faucet, on
 * 127.0.0.1 only. It stands in for the TRX transfer the fake java-tron cannot execute; the amount leaves the payer.
 */
async function startTrxFaucet(fake: FakeJavaTron, payer: string): Promise<Server> {
  let served = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method !== 'POST') return send(405, { error: 'POST {"to","sun"}' });
      try {
        const b = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { to?: unknown; sun?: unknown };
        if (typeof b.sun !== 'string' || !/^[1-9]\d{0,17}$/.test(b.sun))
          return send(400, { error: 'sun must be a positive integer string' });
        const to = normalizeTronAddress(String(b.to ?? ''));
        if (!to) return send(400, { error: 'to must be a TRON address' });
        moveTrx(fake, payer, to, BigInt(b.sun));
        // Not a transaction id: the move is in the fake's ledger only, and named as such wherever it is printed.
        const transferId = `devnet-trx-faucet-${++served}`;
        return send(200, {
          transfer_id: transferId,
          to: tronBase58(to),
          sun: b.sun,
          balance_sun: String(fake.chain.account(to)!.balanceSun),
        });
      } catch (e) {
        return send(400, { error: (e as Error).message });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
