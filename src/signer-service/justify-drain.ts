import type { ChainRegistry } from '../../chains/chain-registry.js';
import { isSweeper, type KeyDeriver, type KeyPath } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { currentGasStationSlot, drainById, gasStationSlot } from '../ledger/treasury/gas-station.js';
import { readDrainTransfer } from './drain-transfer.js';
import type { AuditContext, JustifiedSend, SignedPreimage } from './justified.js';
import { refuse } from './refusal.js';

// Justification of a gas-station drain (docs/signer.md, "What is justified"): after a rotation, a retired gas station's
// native coin goes to the current one. The signer reads the drain by id and derives both wallets itself, from the seed
// and the rotation rows: the key must be the retired generation's (older than the current one), the recipient the
// CURRENT gas station (never the drain row's word for it), and the transaction one plain native transfer
// (drain-transfer.ts: an EVM value transfer without calldata; one TRON TransferContract; a Solana message of compute
// budget and one SystemProgram transfer, fee payer and only signer the retired station). Our wallet to our wallet: no
// limit applies. EVM, TRON and Solana; any other family is refused `purpose_not_supported`.

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
  if (!adapter || !DRAINED.has(adapter.family) || !isSweeper(adapter))
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
  const t = readDrainTransfer(adapter.family, o.adapters, drain, preimage);
  const canon = (a: string) => adapter.normalizeAddress(a);
  const recipient = t.to === null ? null : canon(t.to);
  const summary = { to: recipient ?? t.to ?? '', token: 'native', contract: '', amount_base: t.amount.toString() };
  seen.summary = summary;
  seen.amount = t.amount;
  const retired = canon(from.address);
  const stranger = t.payers.find((p) => canon(p) !== retired);
  if (stranger !== undefined) refuse('wrong_key', `the drain spends from ${stranger}, not only the retired gas station ${from.address}`);
  if (recipient === null || recipient !== canon(to.address))
    refuse('wrong_recipient', `a drain pays the current gas station ${to.address} only`);
  return {
    merchantId: null,
    network: drain.network,
    mode: drain.mode,
    token: 'native',
    decimals: t.decimals,
    amount: t.amount,
    summary,
  };
}

/** The families whose drains this signer reads (drain-transfer.ts). */
const DRAINED: ReadonlySet<string> = new Set(['evm', 'tron', 'solana']);
