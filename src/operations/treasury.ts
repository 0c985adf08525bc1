import type { Db } from '../db/database.js';
import { ApiError } from '../domain/errors.js';
import { formatBaseUnits, formatMinor } from '../domain/money.js';
import { STABLECOIN_EXPONENT, type Mode, type NetworkId, type TokenSymbol } from '../../chains/vocabulary.js';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import {
  listTreasuryDestinations,
  setSweepPolicy,
  setTreasuryDestination,
  treasuryDestinationChanges,
  type TreasuryDestination,
  type TreasuryDestinationChange,
} from '../ledger/treasury/destinations.js';
import { sweepPolicy } from '../treasury/policy.js';

// Treasury destinations (where a merchant's swept money goes, with their change history) and sweep policies (when a
// sweep is worth it): read and set, for the CLI (`treasury set/show`, `sweep policy`) and the console alike.

export function destinationChangeJson(c: TreasuryDestinationChange) {
  return {
    actor: c.actor,
    changed_at: c.changed_at,
    old_treasury_address: c.old_treasury_address,
    new_treasury_address: c.new_treasury_address,
    old_hot_float: c.old_hot_float_minor === null ? null : formatMinor(c.old_hot_float_minor, STABLECOIN_EXPONENT),
    new_hot_float: formatMinor(c.new_hot_float_minor, STABLECOIN_EXPONENT),
  };
}

function destinationJson(r: TreasuryDestination, changes: TreasuryDestinationChange[]) {
  return {
    merchant_id: r.merchant_id,
    network: r.network,
    mode: r.mode,
    treasury_address: r.treasury_address,
    sweeps_go_to: r.treasury_address ? 'treasury (after the hot-wallet float)' : 'refunds hot wallet',
    hot_float: formatMinor(r.hot_float_minor, STABLECOIN_EXPONENT),
    updated_by: r.updated_by,
    updated_at: r.updated_at,
    changes: changes.filter((c) => c.network === r.network && c.mode === r.mode).map(destinationChangeJson),
  };
}

/** Every destination (of one merchant, or all), each with its change history. */
export async function listDestinations(db: Db, merchantId?: string) {
  const rows = await listTreasuryDestinations(db, merchantId);
  const history = new Map<string, TreasuryDestinationChange[]>();
  for (const id of new Set(rows.map((r) => r.merchant_id))) history.set(id, await treasuryDestinationChanges(db, id));
  return rows.map((r) => destinationJson(r, history.get(r.merchant_id) ?? []));
}

export interface SetDestinationInput {
  merchantId: string;
  network: NetworkId;
  mode: Mode;
  /** As typed; null: sweeps go to the refunds hot wallet. */
  address: string | null;
  hotFloatMinor?: bigint;
  /** Who sets it; a function is called once the input is valid (the CLI's $USER check comes after the address's). */
  actor: string | (() => string);
}

/** Sets where a merchant's sweeps go (the address validated by the network's adapter); the change row is written too. */
export async function setDestination(db: Db, chains: ChainRegistry | (() => Promise<ChainRegistry>), i: SetDestinationInput) {
  const merchant = await db.selectFrom('merchants').select('id').where('id', '=', i.merchantId).executeTakeFirst();
  if (!merchant) throw new ApiError(404, 'invalid_request_error', 'resource_not_found', `no merchant ${i.merchantId}`, 'merchant_id');
  let address: string | null = null;
  if (i.address !== null) {
    const adapter = (typeof chains === 'function' ? await chains() : chains).get(i.network, i.mode);
    if (!adapter)
      throw new ApiError(
        409,
        'invalid_request_error',
        'network_not_configured',
        `${i.network} (${i.mode}) is not configured here: its adapter validates the address`,
        'network',
      );
    address = adapter.normalizeAddress(i.address);
    if (!address)
      throw new ApiError(400, 'invalid_request_error', 'address_invalid', `${i.address} is not a valid ${i.network} address`, 'address');
  }
  const { destination, change } = await setTreasuryDestination(db, {
    merchantId: i.merchantId,
    network: i.network,
    mode: i.mode,
    treasuryAddress: address,
    ...(i.hotFloatMinor !== undefined ? { hotFloatMinor: i.hotFloatMinor } : {}),
    actor: typeof i.actor === 'function' ? i.actor() : i.actor,
  });
  return {
    merchant_id: destination.merchant_id,
    network: destination.network,
    mode: destination.mode,
    treasury_address: destination.treasury_address,
    hot_float: formatMinor(destination.hot_float_minor, STABLECOIN_EXPONENT),
    audit: {
      id: String(change.id),
      actor: change.actor,
      changed_at: change.changed_at,
      old_treasury_address: change.old_treasury_address,
      new_treasury_address: change.new_treasury_address,
    },
  };
}

export function policyTokenDecimals(chains: ChainRegistry, n: NetworkId, m: Mode, t: TokenSymbol): number {
  const decimals = chains.tokenDecimals(n, m, t);
  if (decimals === undefined)
    throw new ApiError(409, 'invalid_request_error', 'network_not_configured', `${t} on ${n} (${m}) is not configured here`, 'token');
  return decimals;
}

/** The sweep policy of a network, mode and token (the configured one, or the defaults). */
export async function getSweepPolicy(db: Db, chains: ChainRegistry, n: NetworkId, m: Mode, t: TokenSymbol) {
  const decimals = policyTokenDecimals(chains, n, m, t);
  const p = await sweepPolicy(db, n, m, t, decimals);
  return {
    network: n,
    mode: m,
    token: t,
    min_amount: formatBaseUnits(p.minAmountBase, decimals),
    max_fee_bps: p.maxFeeBps,
    source: p.source,
  };
}

/** Sets the sweep policy (minimum in stablecoin minor units, maximum fee share) and answers it as read back. */
export async function putSweepPolicy(
  db: Db,
  chains: ChainRegistry,
  i: { network: NetworkId; mode: Mode; token: TokenSymbol; minMinor: bigint; maxFeeBps: number; actor: string },
) {
  const decimals = policyTokenDecimals(chains, i.network, i.mode, i.token);
  const before = await getSweepPolicy(db, chains, i.network, i.mode, i.token);
  await setSweepPolicy(db, {
    network: i.network,
    mode: i.mode,
    token: i.token,
    minAmountBase: i.minMinor * 10n ** BigInt(Math.max(0, decimals - STABLECOIN_EXPONENT)),
    maxFeeBps: i.maxFeeBps,
    actor: i.actor,
  });
  return { before, after: await getSweepPolicy(db, chains, i.network, i.mode, i.token) };
}
