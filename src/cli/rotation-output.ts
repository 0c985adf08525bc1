import { native } from '../operations/sweeps-json.js';
import type { RotateGasStationResult } from '../operations/gas-station.js';
import type { GasStationDrainRow } from '../ledger/treasury/gas-station.js';
import { NATIVE_COINS } from '../rates/native-prices.js';

// What `treasury rotate-gas-station` prints: the old and new gas stations (as the chain's explorers show them), the
// audit row, and each drain's state with what it moved. JSON for machines (--json), a few lines otherwise.

type Display = (address: string) => string;

function drainJson(d: GasStationDrainRow, display: Display) {
  return {
    id: String(d.id),
    from_generation: d.from_generation,
    from_address: display(d.from_address),
    to_generation: d.to_generation,
    to_address: display(d.to_address),
    status: d.status,
    amount_base: d.amount === null ? null : d.amount.toString(),
    amount: d.amount === null ? null : native(d.network, d.amount),
    fee_base: d.fee === null ? null : d.fee.toString(),
    tx_hash: d.tx_hash,
    failure_reason: d.failure_reason,
  };
}

export function rotationJson(r: RotateGasStationResult, display: Display) {
  return {
    network: r.network,
    mode: r.mode,
    outcome: r.outcome,
    old_gas_station: { generation: r.old.generation, address: display(r.old.address) },
    gas_station: { generation: r.current.generation, address: display(r.current.address) },
    audit: r.audit && {
      generation: r.audit.generation,
      slot: r.audit.slot,
      actor: r.audit.actor,
      note: r.audit.note,
      created_at: r.audit.created_at.toISOString(),
    },
    drain_supported: r.drainSupported,
    drains: r.drains.map((d) => drainJson(d, display)),
  };
}

export function rotationText(r: RotateGasStationResult, display: Display): string {
  const coin = NATIVE_COINS[r.network].symbol;
  const head =
    r.outcome === 'rotated'
      ? `${r.network} ${r.mode}: gas station rotated by ${r.audit?.actor ?? '?'}, generation ${r.old.generation} → ${r.current.generation}`
      : r.outcome === 'resumed'
        ? `${r.network} ${r.mode}: a drain of the rotation to generation ${r.current.generation} was still open; resumed (no new generation)`
        : `${r.network} ${r.mode}: drains of retired gas stations retried (generation ${r.current.generation} stays current)`;
  const lines = [
    head,
    `  old gas station  ${display(r.old.address)} (generation ${r.old.generation})`,
    `  new gas station  ${display(r.current.address)} (generation ${r.current.generation})`,
  ];
  if (!r.drainSupported)
    lines.push(`  drain            not supported on ${r.network} yet: the old gas station keeps its ${coin} (still watched)`);
  else if (r.drains.length === 0) lines.push('  drain            none (nothing worth draining)');
  for (const d of r.drains) {
    const what =
      d.status === 'succeeded'
        ? `succeeded: ${native(d.network, d.amount ?? 0n)} ${coin} moved, fee ${native(d.network, d.fee ?? 0n)} ${coin}, transaction ${d.tx_hash}`
        : d.status === 'processing'
          ? 'in flight (the worker finishes it; run the command again to follow it)'
          : `${d.status}: ${d.failure_reason ?? ''}`;
    lines.push(`  drain ${d.id}          generation ${d.from_generation} ${display(d.from_address)}: ${what}`);
  }
  return `${lines.join('\n')}\n`;
}
