import { RpcError } from '../evm/rpc-errors.js';
import { tronBase58 } from './address.js';
import { int64, type AccountJson, type AccountResourceJson, type TronWalletApi } from './wallet-api.js';

// The hot wallet's means to pay for a TRC-20 transfer: TRX balance, energy (from staking or rental/delegation) and
// bandwidth (600 free bytes a day per account, more from staking). A transfer uses ~345 bytes of bandwidth and
// ~65k energy (recipient already holds the token) or ~130k (first receipt: a new storage slot). What the account
// lacks is paid by burning TRX: energy at getEnergyFee sun per unit, bandwidth at getTransactionFee sun per byte for
// the WHOLE transaction when the available bandwidth cannot cover it (bandwidth is never split).

export interface ChainPrices {
  /** sun per energy unit (chain parameter getEnergyFee; 100 on mainnet at the time of writing). */
  energySun: bigint;
  /** sun per bandwidth byte (getTransactionFee; 1000). */
  bandwidthSun: bigint;
}

export interface HotWalletResources {
  address: string;
  activated: boolean;
  trxBalanceSun: bigint;
  energy: { limit: bigint; used: bigint; available: bigint };
  bandwidth: { freeLimit: bigint; freeUsed: bigint; stakedLimit: bigint; stakedUsed: bigint; available: bigint };
  prices: ChainPrices;
}

/** getEnergyFee and getTransactionFee (sun per energy / per bandwidth byte) from the chain parameters. */
export async function readChainPrices(api: TronWalletApi): Promise<ChainPrices> {
  const r = await api.full<{ chainParameter?: Array<{ key: string; value?: number }> }>('wallet/getchainparameters', {});
  const get = (k: string) => int64(r.chainParameter?.find((p) => p.key === k)?.value);
  const value = { energySun: get('getEnergyFee'), bandwidthSun: get('getTransactionFee') };
  if (value.energySun <= 0n || value.bandwidthSun <= 0n)
    throw new RpcError('bad_response', 'getchainparameters lacks getEnergyFee / getTransactionFee');
  return value;
}

const pos = (v: bigint) => (v > 0n ? v : 0n);

export async function readHotWalletResources(api: TronWalletApi, address: string, prices: ChainPrices): Promise<HotWalletResources> {
  const [account, res] = await Promise.all([
    api.full<AccountJson>('wallet/getaccount', { address }),
    api.full<AccountResourceJson>('wallet/getaccountresource', { address }),
  ]);
  const energy = { limit: int64(res.EnergyLimit), used: int64(res.EnergyUsed), available: 0n };
  energy.available = pos(energy.limit - energy.used);
  const bw = {
    freeLimit: int64(res.freeNetLimit),
    freeUsed: int64(res.freeNetUsed),
    stakedLimit: int64(res.NetLimit),
    stakedUsed: int64(res.NetUsed),
    available: 0n,
  };
  bw.available = pos(bw.freeLimit - bw.freeUsed) + pos(bw.stakedLimit - bw.stakedUsed);
  return {
    address,
    activated: account.address !== undefined || account.balance !== undefined || account.create_time !== undefined,
    trxBalanceSun: int64(account.balance),
    energy,
    bandwidth: bw,
    prices,
  };
}

/** TRX (sun) burned for a transaction needing `energy` and `bandwidthBytes`, given what the account holds. */
export function trxNeededFor(
  need: { energy: bigint; bandwidthBytes: bigint },
  r: Pick<HotWalletResources, 'energy' | 'bandwidth'>,
  prices: ChainPrices,
): bigint {
  const energyBurn = pos(need.energy - r.energy.available) * prices.energySun;
  const stakedLeft = pos(r.bandwidth.stakedLimit - r.bandwidth.stakedUsed);
  const freeLeft = pos(r.bandwidth.freeLimit - r.bandwidth.freeUsed);
  const bandwidthBurn =
    stakedLeft >= need.bandwidthBytes || freeLeft >= need.bandwidthBytes ? 0n : need.bandwidthBytes * prices.bandwidthSun;
  return energyBurn + bandwidthBurn;
}

/** Operator view (CLI): one line per figure, TRX with 6 decimals, no secrets. */
export function formatHotWalletResources(r: HotWalletResources): string {
  const trx = (sun: bigint) => `${sun / 1_000_000n}.${(sun % 1_000_000n).toString().padStart(6, '0')} TRX`;
  const usdtHot = trxNeededFor({ energy: 65_000n, bandwidthBytes: 345n }, r, r.prices);
  const usdtCold = trxNeededFor({ energy: 130_000n, bandwidthBytes: 345n }, r, r.prices);
  return [
    `hot wallet      ${tronBase58(r.address)}${r.activated ? '' : ' (not activated: send it TRX first)'}`,
    `TRX balance     ${trx(r.trxBalanceSun)}`,
    `energy          ${r.energy.available} available (${r.energy.used} used of ${r.energy.limit} staked/delegated)`,
    `bandwidth       ${r.bandwidth.available} bytes available (free ${r.bandwidth.freeLimit - r.bandwidth.freeUsed}/${r.bandwidth.freeLimit}, staked ${r.bandwidth.stakedLimit - r.bandwidth.stakedUsed}/${r.bandwidth.stakedLimit})`,
    `prices          ${r.prices.energySun} sun/energy, ${r.prices.bandwidthSun} sun/byte`,
    `next USDT send  burns ~${trx(usdtHot)} (recipient holds USDT) / ~${trx(usdtCold)} (first receipt)`,
  ].join('\n');
}
