import type { ChainRegistry } from '../../chains/registry.js';
import { isSweeper, type KeyDeriver, type KeyPath } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { currentGasStationSlot, drainById, gasStationSlot } from '../ledger/treasury/gas-station.js';
import { unsignedEvmTransaction } from './evm-token-call.js';
import type { AuditContext, JustifiedSend, SignedPreimage } from './justified.js';
import { refuse } from './refusal.js';

// Justification of a gas-station drain (docs/signer.md, "What is justified"; docs/treasury.md, "Rotating the gas
// station"): after a rotation, a retired gas station's native coin goes to the current one. The signer reads the drain
// by id and derives both wallets itself, from the seed and the rotation rows: the key must be the retired generation's
// (older than the current one), the recipient the CURRENT gas station (never the drain row's word for it), and the
// transaction a plain native transfer on the configured chain (no calldata, no contract). Our wallet to our wallet: no
// limit applies. EVM only (the drains that exist); any other family is refused `purpose_not_supported`.

export async function justifyDrain(
  o: { db: Db; adapters: ChainRegistry; keys: KeyDeriver },
  drainId: string,
  key: KeyPath,
  preimage: SignedPreimage,
  seen: AuditContext,
): Promise<JustifiedSend> {
  const drain = /^\d{1,18}$/.test(drainId) ? await drainById(o.db, drainId) : undefined;
  if (!drain) refuse('unknown_object', `no gas-station drain ${drainId}`);
  seen.network = drain.network;
  seen.mode = drain.mode;
  if (drain.status !== 'processing') refuse('not_payable', `gas-station drain ${drainId} is ${drain.status}`);
  const adapter = o.adapters.get(drain.network, drain.mode);
  if (!adapter || adapter.family !== 'evm' || !isSweeper(adapter))
    refuse('purpose_not_supported', `gas-station drains on ${drain.network} (${drain.mode}) are not justified by this signer`);
  const current = await currentGasStationSlot(o.db, drain.network, drain.mode);
  if (drain.from_generation >= current.generation)
    refuse(
      'not_payable',
      `generation ${drain.from_generation} is not retired (the current gas station is generation ${current.generation})`,
    );
  const from = await adapter.deriveOperatorWallet(o.keys, gasStationSlot(drain.from_generation));
  const to = await adapter.deriveOperatorWallet(o.keys, current.slot);
  if (key.curve !== from.key.curve || key.path !== from.key.path)
    refuse('wrong_key', `the key is not the retired gas station of generation ${drain.from_generation}`);
  const tx = unsignedEvmTransaction(o.adapters, drain, preimage);
  const recipient = tx.to === null ? null : adapter.normalizeAddress(tx.to);
  const summary = { to: recipient ?? '', token: 'native', contract: '', amount_base: tx.value.toString() };
  seen.summary = summary;
  seen.amount = tx.value;
  if (tx.data !== '0x') refuse('wrong_method', 'a drain is a plain transfer of the native coin, with no calldata');
  if (recipient === null || recipient !== adapter.normalizeAddress(to.address))
    refuse('wrong_recipient', `a drain pays the current gas station ${to.address} only`);
  return { merchantId: null, network: drain.network, mode: drain.mode, token: 'native', decimals: 18, amount: tx.value, summary };
}
