import { HOT_WALLET_SLOT } from '../../chains/types.js';
import type { Db } from '../../src/db/database.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import type { KeyDeriver, TxSigner } from '../../chains/types.js';
import { SOLANA_CHARGER_LAMPORTS } from './env/solana.js';
import { SOLANA_GAS_STATION_TOPUP, type SweepNetwork, TRON_GAS_STATION_TOPUP, TRON_RESOURCES_LIQUID } from './scenario-sweeps.js';
import { createChainAdapter } from '../../src/watcher/adapter-factory.js';
import { loadChainSettings } from '../../src/watcher/config.js';
import type { ScheduledFault } from './contract.js';
import { healedRates, type SimProxy } from './env/chain.js';
import type { SimEnvironment } from './environment.js';
import type { RunnerTopUps } from './top-ups.js';
import type { ReorgDrop } from './faults/chain-evm.js';
import {
  dropNextSolanaTransactions,
  dropSolanaTransactionsFor,
  expireSolanaBlockhashes,
  stallSolanaLeader,
} from './faults/chain-solana.js';

const SYSTEM_PROGRAM = '11111111111111111111111111111111';

// What a seed (seed.ts) does with the networks beyond the EVM ones (env/solana.ts, env/tron.ts): their service env,
// their hot wallets registered and funded, the payer of a session, the proxies an `rpc` fault hits, the Solana chain
// faults, and the healing of all of it at the drain. docs/simulation.md.

type Ev = (kind: string, detail: Record<string, unknown>) => void;

/** CHAIN_SOLANA_TEST_* / CHAIN_TRON_TEST_* for the service, START_BLOCK at each chain's current height. */
export async function otherChainsEnv(env: SimEnvironment): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const c of env.others) Object.assign(out, c.env, await c.startBlockEnv());
  return out;
}

/**
 * A merchant's refund hot wallet on each non-EVM network, registered in the journal and then funded, as an operator
 * does: the token top-ups' ids go to `topUps` (acknowledged by the drain once journaled as unexplained: top-ups.ts),
 * the native coin given to `nativeFunded` (lowercase canonical address → base units; acknowledged before the
 * invariants).
 */
export async function fundOtherHotWallets(
  env: SimEnvironment,
  o: {
    db: Db;
    serviceEnv: Record<string, string>;
    keys: KeyDeriver;
    accountIndex: number;
    merchantId: string;
    topUps: RunnerTopUps;
    nativeFunded: Map<string, bigint>;
  },
): Promise<void> {
  for (const c of env.others) {
    const adapter = createChainAdapter(loadChainSettings(o.serviceEnv, c.network, 'test')!, o.serviceEnv);
    const hot = await adapter.deriveHotWallet(o.keys, o.accountIndex, HOT_WALLET_SLOT.refunds);
    const address = adapter.normalizeAddress(hot.address) ?? hot.address;
    await registerWallets(o.db, [{ network: c.network, mode: 'test', address, merchantId: o.merchantId, role: 'refunds' }]);
    const funded = await c.fundHotWallet(address, 1000n);
    o.topUps.add(c.network, funded.txIds);
    o.nativeFunded.set(address.toLowerCase(), funded.native);
    if (c === env.tron || c === env.solana) {
      // The charger of the merchant's TRON and Solana subscriptions (scenario-subscriptions.ts, -solana.ts):
      // registered, then the native coin for its fees, acknowledged like the hot wallet's (EVM: scenario-extras.ts
      // setupMerchant). TRON: TRX for the energy of its transferFrom calls; Solana: SOL by airdrop, for each charge's
      // fee (the charger is the fee payer) and the settlement ATA's rent when its first charge creates that account.
      const charger = await adapter.deriveHotWallet(o.keys, o.accountIndex, HOT_WALLET_SLOT.charges);
      const chargerAddress = adapter.normalizeAddress(charger.address) ?? charger.address;
      await registerWallets(o.db, [
        { network: c.network, mode: 'test', address: chargerAddress, merchantId: o.merchantId, role: 'charges' },
      ]);
      let native: bigint;
      if (c === env.tron) native = await env.tron.fundFees(chargerAddress);
      else {
        env.solana!.rpc.validator.airdrop(chargerAddress, SOLANA_CHARGER_LAMPORTS);
        native = SOLANA_CHARGER_LAMPORTS;
      }
      o.nativeFunded.set(chargerAddress.toLowerCase(), native);
    }
  }
}

/**
 * The sweep side of each non-EVM network (scenario-sweeps.ts): Solana's gas station (the fee payer of every batch, and
 * where the rent of closed deposit accounts goes) given SOL by airdrop; TRON's given TRX in the fake's ledger, and its
 * resources account staked for energy through the wallet API, signed with the service's own key material.
 */
export function otherSweepNetworks(env: SimEnvironment, serviceEnv: Record<string, string>, signer: TxSigner): SweepNetwork[] {
  return env.others.map((c): SweepNetwork => {
    const settings = loadChainSettings(serviceEnv, c.network, 'test')!;
    const adapter = createChainAdapter(settings, serviceEnv);
    const decimalsOf = (symbol: 'USDT' | 'USDC') => settings.tokens.find((t) => t.symbol === symbol)!.decimals;
    const base = { network: settings.network, adapter, decimals: { USDT: decimalsOf('USDT'), USDC: decimalsOf('USDC') } };
    if (c === env.tron) {
      const tron = env.tron;
      return {
        ...base,
        fundGasStation: (address) => tron.fundFees(address, TRON_GAS_STATION_TOPUP),
        stakeResources: (resources, sun) => tron.stakeForEnergy(resources, signer, sun, TRON_RESOURCES_LIQUID),
      };
    }
    const solana = env.solana;
    if (c !== solana) throw new Error(`simulator: no sweep setup for ${c.network}`);
    return {
      ...base,
      async fundGasStation(address) {
        // The same wallet in every seed of a run: an airdrop of the same amount to it again is the same transaction
        // (LiteSVM refuses it as already processed), so the lamports are set, what earlier seeds left plus the top-up,
        // as anvil_setBalance does on EVM.
        const v = solana.rpc.validator;
        const before = v.account(address);
        if (before && (before.data.length > 0 || before.owner !== SYSTEM_PROGRAM))
          throw new Error(`simulator: the Solana gas station ${address} is not a plain wallet`);
        v.setAccount({
          address,
          lamports: (before?.lamports ?? 0n) + SOLANA_GAS_STATION_TOPUP,
          data: new Uint8Array(),
          owner: SYSTEM_PROGRAM,
        });
        return SOLANA_GAS_STATION_TOPUP;
      },
    };
  });
}

/** The payer of a session on `network`. */
export function payerOf(
  env: SimEnvironment,
  network: string,
): { pay(token: 'USDT' | 'USDC', to: string, amount: bigint, onRebroadcast?: (hash: string) => void): Promise<string> } | undefined {
  return env.evm.find((e) => e.contract.network === network) ?? env.others.find((c) => c.network === network);
}

/** The fault proxies of `network` (EVM: the node's; TRON: JSON-RPC and wallet API; Solana: JSON-RPC). */
export function proxiesOf(env: SimEnvironment, network: string): SimProxy[] {
  const evm = env.evm.find((e) => e.contract.network === network);
  if (evm) return [{ proxy: evm.proxy, protocol: 'jsonrpc' }];
  return env.others.find((c) => c.network === network)?.proxies ?? [];
}

/** An `rpc` fault's rates on one proxy: an HTTP JSON API takes the transport faults only. */
export function ratesFor(p: SimProxy, rates: Record<string, number>): Record<string, number | undefined> {
  return p.protocol === 'http' ? { ...rates, errorRate: 0, maxLogsRange: undefined } : rates;
}

/** Every proxy fault and Solana landing fault off, on every network (the drain). */
export async function healChains(env: SimEnvironment): Promise<void> {
  for (const c of env.others) await c.heal();
  for (const e of env.evm) e.proxy.setFaults(healedRates);
}

/**
 * The Solana chain faults (faults/chain-solana.ts) on the endpoint itself:
 * - `solana.blockhash-expiry`: every blockhash handed out so far expires (a transaction signed before can never land);
 * - `solana.drop`: the next `count` transactions sent, or every one sent during `forMs`, are accepted and never land;
 * - `solana.stall`: every transaction sent during `forMs` is held, then landed late (or, with `expire`, never).
 */
export async function injectSolanaFault(env: SimEnvironment, f: ScheduledFault, ev: Ev): Promise<void> {
  const rpcUrl = env.chains.solana?.rpcUrl;
  if (!rpcUrl) return;
  if (f.kind === 'solana.blockhash-expiry') {
    const r = await expireSolanaBlockhashes(rpcUrl);
    ev('fault.solana.expired', { slot: r.slot });
  } else if (f.kind === 'solana.drop') {
    if (f.params.forMs !== undefined) {
      await dropSolanaTransactionsFor(rpcUrl, { forMs: Number(f.params.forMs) });
      ev('fault.solana.landing', {});
    } else {
      const r = await dropNextSolanaTransactions(rpcUrl, { count: Number(f.params.count) });
      ev('fault.solana.dropping', { pending: r.pending });
    }
  } else if (f.kind === 'solana.stall') {
    const r = await stallSolanaLeader(rpcUrl, { forMs: Number(f.params.forMs), expire: f.params.expire === true });
    ev('fault.solana.stall.resumed', { landed: r.landed });
  }
}

/**
 * A `reorg` fault on a non-EVM network (TRON: the Anvil node under the fake java-tron, env/tron.ts): skipped when the
 * chain has no node to reorg, or when a block it would replace holds a transaction the fake executed; otherwise the
 * payer broadcasts its dropped transfers again, as on EVM.
 */
export async function injectOtherReorg(env: SimEnvironment, f: ScheduledFault, ev: Ev): Promise<void> {
  const p = f.params;
  const c = env.others.find((x) => x.network === p.network);
  if (!c?.reorg) return ev('fault.reorg.skipped', { network: p.network, reason: 'no node to reorg on this network' });
  const r = await c.reorg({ depth: Number(p.depth), drop: p.drop as ReorgDrop, extend: Number(p.extend ?? 0) });
  if (!r) return ev('fault.reorg.skipped', { network: p.network, reason: 'a replaced block holds a transaction the fake executed' });
  const resent = (await c.resync?.()) ?? [];
  ev('fault.reorg.done', { network: p.network, removed: r.removed.length, reincluded: r.reincluded.length, dropped: r.dropped, resent });
}
