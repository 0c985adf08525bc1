import { isSweeper, type ChainAdapter, type Sweeper, type UnsignedTransfer } from '../../chains/types.js';
import { gasStationDrainStore } from '../ledger/treasury/gas-station-drain-store.js';
import { closeDrain, gasStationSlot, listDrains, settleDrain, type GasStationDrainRow } from '../ledger/treasury/gas-station.js';
import { advanceOutbound } from '../outbound/engine.js';
import { describeOutboundFailure, nothingSigned, type OutboundKind, type StepResult } from '../outbound/kind.js';
import type { SweepEngineDeps } from './step-kind.js';

// The drain of a retired gas station (docs/treasury.md, "Rotating the gas station") as a kind of the outbound engine:
// the gas_station_drains row and its signed bytes are stored before the first broadcast, a stuck transaction is
// replaced at the same nonce, a crash re-offers the same bytes. The builder is the chain's `buildNativeDrain` (the
// whole native balance minus the transaction's own fee, to the current gas station; null: nothing worth moving, the
// drain is settled as skipped); the receipt is what reached the new gas station, journaled with the fee when it settles.
// The retired gas station's key is derived at its generation's slot: the drain row names the generation, never a key.

type DrainAdapter = ChainAdapter & Sweeper & Required<Pick<Sweeper, 'buildNativeDrain' | 'readNativeDrain'>>;

function isDrainAdapter(a: ChainAdapter): a is DrainAdapter {
  return isSweeper(a) && typeof a.buildNativeDrain === 'function' && typeof a.readNativeDrain === 'function';
}

const kinds = new WeakMap<SweepEngineDeps, OutboundKind<GasStationDrainRow, DrainAdapter>>();

export function gasStationDrainKind(deps: SweepEngineDeps): OutboundKind<GasStationDrainRow, DrainAdapter> {
  const cached = kinds.get(deps);
  if (cached) return cached;
  const kind: OutboundKind<GasStationDrainRow, DrainAdapter> = {
    store: gasStationDrainStore(deps.db),
    intent: (d) => ({ purpose: 'gas_station_drain', drain_id: String(d.id) }),
    describe: (d) => ({
      gas_station_drain_id: String(d.id),
      network: d.network,
      mode: d.mode,
      from_generation: String(d.from_generation),
      to_generation: String(d.to_generation),
    }),
    adapter(d) {
      const adapter = deps.adapters.get(d.network, d.mode);
      return adapter && isDrainAdapter(adapter) ? { adapter } : { missing: 'network' };
    },
    network: (d) => ({ network: d.network, mode: d.mode }),
    outcome: (adapter, _d, a) => adapter.getTransactionOutcome(a.txHash),
    async receipt(adapter, d, a, landed) {
      const amount = await adapter.readNativeDrain(a.txHash, d.to_address);
      if (amount === null) return { kind: 'unread' };
      if (amount === 0n) return { kind: 'undelivered', elsewhere: 0n };
      return {
        kind: 'delivered',
        async settle() {
          const done = await settleDrain(deps.db, d.id, {
            attemptId: a.id,
            txHash: a.txHash,
            block: { height: landed.block.height, hash: landed.block.hash },
            amount,
            fee: landed.fee,
          });
          if (done)
            deps.log?.info(
              { ...kind.describe(d), tx_hash: a.txHash, amount: String(amount), fee: String(landed.fee) },
              'gas station drained',
            );
          return { kind: 'done', status: 'succeeded' };
        },
      };
    },
    async prepare(adapter, d, replacing) {
      if (!deps.signer) return { kind: 'wait', ms: deps.pollMs };
      const from = await adapter.deriveOperatorWallet(deps.signer, gasStationSlot(d.from_generation));
      if ((adapter.normalizeAddress(from.address) ?? from.address) !== d.from_address)
        throw new Error(`generation ${d.from_generation} derives ${from.address}, not the drain's ${d.from_address}`);
      let first: { nonce: bigint | null; unsigned: UnsignedTransfer } | null = null;
      if (!replacing) {
        const nonce = await adapter.getAccountNonce(d.from_address);
        const unsigned = await adapter.buildNativeDrain(from, d.to_address, nonce, 0);
        if (!unsigned) {
          if (
            !(await closeDrain(deps.db, d.id, 'skipped', 'nothing worth draining (the balance does not cover the fee)', { unsent: true }))
          )
            return { kind: 'wait', ms: deps.pollMs };
          deps.log?.info(kind.describe(d), 'gas station drain not needed; skipped');
          return { kind: 'done', status: 'skipped' };
        }
        first = { nonce, unsigned };
      }
      return {
        kind: 'ready',
        from,
        async build(nonce, feeBumpPercent) {
          if (first && first.nonce === nonce && feeBumpPercent === 0) return first.unsigned;
          const unsigned = await adapter.buildNativeDrain(from, d.to_address, nonce, feeBumpPercent);
          if (!unsigned) throw new Error(`gas station ${d.from_address} no longer holds enough to drain`);
          return unsigned;
        },
      };
    },
    async fail(d, f) {
      const reason = describeOutboundFailure(f);
      const unsent = nothingSigned(f);
      if (!(await closeDrain(deps.db, d.id, 'failed', reason, { unsent })) && unsent) return { kind: 'wait', ms: deps.pollMs };
      deps.log?.warn({ ...kind.describe(d), reason }, 'gas station drain failed; run the rotation again to retry it');
      return { kind: 'done', status: 'failed' };
    },
  };
  kinds.set(deps, kind);
  return kind;
}

export function advanceDrain(deps: SweepEngineDeps, drainId: bigint): Promise<StepResult> {
  return advanceOutbound(gasStationDrainKind(deps), deps, String(drainId));
}

/** Advances every open drain once; answers how many are still open. */
export async function advanceOpenDrains(deps: SweepEngineDeps): Promise<number> {
  let open = 0;
  for (const d of await listDrains(deps.db, { status: 'processing' })) {
    try {
      const r = await advanceDrain(deps, d.id);
      if (r.kind === 'wait') open++;
    } catch (err) {
      open++;
      deps.log?.warn({ err, gas_station_drain_id: String(d.id) }, 'gas station drain failed to advance; retried next pass');
    }
  }
  return open;
}

/** Drives the open drains until none is left or `timeoutMs` passes; answers how many are still open. */
export async function driveDrains(deps: SweepEngineDeps, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await advanceOpenDrains(deps);
    if (open === 0 || Date.now() > deadline) return open;
    await new Promise((r) => setTimeout(r, deps.pollMs));
  }
}
