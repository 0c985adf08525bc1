import { isSweeper, type ChainAdapter, type KeyDeriver, type Sweeper } from '../../chains/types.js';
import type { Mode, NetworkId } from '../../chains/vocabulary.js';
import { ApiError } from '../domain/errors.js';
import {
  currentGasStationSlot,
  gasStationRotations,
  gasStationSlot,
  insertDrain,
  listDrains,
  recordRotation,
  type GasStationDrainRow,
  type GasStationGenerationRow,
} from '../ledger/treasury/gas-station.js';
import { runningSweepIdsOn } from '../ledger/treasury/sweeps.js';
import { driveDrains } from '../treasury/gas-station-drain.js';
import { treasuryNotConfigured, type SweepOpsDeps } from './treasury-deps.js';

// Rotating the gas station (docs/treasury.md, "Rotating the gas station"; `treasury rotate-gas-station`): the next
// generation's HD slot becomes the gas station of one network and mode (an audited ledger row the planner and the
// signer both read), and the retired gas station's native coin is drained to it through the outbound engine. Deposit
// addresses delegated to the old EIP-7702 delegate (bound to the old gas station) re-delegate to the new one at their
// next sweep: the 7702 planner authorizes any address whose code is another delegation. Refused while a sweep of that
// network and mode runs (its steps name the old gas station). Run again: an open drain is resumed, never doubled, and
// no new generation is written; `drainOnly` retries the drains of retired generations that still hold coin.

export interface RotateGasStationInput {
  network: NetworkId;
  mode: Mode;
  actor: string;
  note?: string | null;
  /** Only retry the drains of retired generations still holding coin; no new generation. */
  drainOnly?: boolean;
  /** How long to drive the drains here (0: leave them to the worker's sweep schedule). */
  waitMs?: number;
}

export interface RotateGasStationResult {
  network: NetworkId;
  mode: Mode;
  /** 'rotated': a new generation; 'resumed': a drain was still open, driven again; 'drained': drainOnly. */
  outcome: 'rotated' | 'resumed' | 'drained';
  old: { generation: number; address: string };
  current: { generation: number; address: string };
  audit: GasStationGenerationRow | null;
  drains: GasStationDrainRow[];
  /** False where the chain cannot drain a gas station yet: the retired one keeps its coin (still watched). */
  drainSupported: boolean;
}

type DrainCapable = ChainAdapter & Sweeper;

export async function rotateGasStation(d: SweepOpsDeps, i: RotateGasStationInput): Promise<RotateGasStationResult> {
  const keys = d.treasury?.keys;
  if (!keys) throw treasuryNotConfigured('rotating the gas station needs HD_MNEMONIC or HD_ACCOUNT_XPUBS to derive its addresses');
  const adapter = d.adapters.get(i.network, i.mode);
  if (!adapter || !isSweeper(adapter))
    throw new ApiError(
      409,
      'invalid_request_error',
      'network_not_configured',
      `${i.network} (${i.mode}) is not configured here`,
      'network',
    );
  // EVM, TRON and Solana have a drain builder. A family without one would rotate all the same; its retired station not
  // drained (reported: `drainSupported` false) and still a watched wallet, so reconcile still accounts for what it holds.
  const drainSupported = typeof adapter.buildNativeDrain === 'function';
  if (i.drainOnly && !drainSupported)
    throw new ApiError(409, 'invalid_request_error', 'not_supported', `${i.network} cannot drain a gas station yet`, 'network');
  const canon = (a: string) => adapter.normalizeAddress(a) ?? a;
  const derive = async (generation: number) => canon((await adapter.deriveOperatorWallet(keys, gasStationSlot(generation))).address);
  const running = await runningSweepIdsOn(d.db, i.network, i.mode);
  if (running.length > 0)
    throw new ApiError(
      409,
      'invalid_request_error',
      'sweep_running',
      `${running.length} sweep(s) of ${i.network} (${i.mode}) are running (${running.join(', ')}); their steps name the current gas station: rotate once they end (sweep run, or the worker)`,
      'network',
    );
  const current = await currentGasStationSlot(d.db, i.network, i.mode);
  const currentAddress = await derive(current.generation);
  const open = await listDrains(d.db, { network: i.network, mode: i.mode, status: 'processing' });
  let outcome: RotateGasStationResult['outcome'];
  let audit: GasStationGenerationRow | null = null;
  let old = { generation: current.generation, address: currentAddress };
  let now = old;
  let ids: bigint[];
  if (open.length > 0 && !i.drainOnly) {
    // A rotation whose drain is still in flight (a crash, a timeout): resumed, never a second rotation or drain.
    outcome = 'resumed';
    const last = (await gasStationRotations(d.db, i.network, i.mode)).at(-1);
    if (last) old = { generation: last.generation - 1, address: last.previous_address };
    ids = open.map((x) => x.id);
  } else if (i.drainOnly) {
    outcome = 'drained';
    const created: bigint[] = [];
    for (const g of await retiredHoldingCoin(adapter, keys, current.generation, now.address)) {
      const row = await insertDrain(d.db, { network: i.network, mode: i.mode, from: g, to: now, actor: i.actor });
      if (row) created.push(row.id);
    }
    ids = [...open.map((x) => x.id), ...created];
  } else {
    outcome = 'rotated';
    const next = { generation: current.generation + 1, address: await derive(current.generation + 1) };
    const alsoDrain = drainSupported ? await retiredHoldingCoin(adapter, keys, current.generation, next.address) : [];
    const r = await recordRotation(d.db, {
      network: i.network,
      mode: i.mode,
      from: old,
      drainFrom: drainSupported,
      to: next,
      actor: i.actor,
      note: i.note ?? null,
      // Generations retired earlier whose coin came back (or whose drain failed) are drained to the new one too.
      alsoDrain,
    });
    if (!r)
      throw new ApiError(
        409,
        'invalid_request_error',
        'rotation_conflict',
        `another rotation of ${i.network} (${i.mode}) ran meanwhile; look again`,
      );
    audit = r.generation;
    now = next;
    ids = r.drains.map((x) => x.id);
  }
  if ((i.waitMs ?? 0) > 0 && d.treasury?.signer && ids.length > 0) {
    await driveDrains(
      { db: d.db, adapters: d.adapters, signer: d.treasury.signer, ...d.treasury.engine, ...(d.log ? { log: d.log } : {}) },
      i.waitMs ?? 0,
    );
  }
  const all = await listDrains(d.db, { network: i.network, mode: i.mode });
  const wanted = new Set(ids.map(String));
  return {
    network: i.network,
    mode: i.mode,
    outcome,
    old,
    current: now,
    audit,
    drains: all.filter((x) => wanted.has(String(x.id))),
    drainSupported,
  };
}

/**
 * Generations below `below` (retired before the current one) whose gas station holds coin worth draining to `to`: the
 * chain's drain builder, asked without signing anything, would send something (dust under the fee is left alone).
 */
async function retiredHoldingCoin(
  adapter: DrainCapable,
  keys: KeyDeriver,
  below: number,
  to: string,
): Promise<Array<{ generation: number; address: string }>> {
  const out: Array<{ generation: number; address: string }> = [];
  for (let g = 0; g < below; g++) {
    const wallet = await adapter.deriveOperatorWallet(keys, gasStationSlot(g));
    const address = adapter.normalizeAddress(wallet.address) ?? wallet.address;
    if ((await adapter.getBalances(address)).native === 0n) continue;
    const probe = await adapter.buildNativeDrain!(wallet, to, await adapter.getAccountNonce(address), 0);
    if (probe) out.push({ generation: g, address });
  }
  return out;
}
