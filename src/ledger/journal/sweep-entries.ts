import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { SweepStepsTable, SweepsTable } from '../../db/treasury-tables.js';
import type { Selectable } from 'kysely';
import { EXTERNAL_ACCOUNT, addressAccount, feesAccount, journalAsset, transferLegs, treasuryAccount, type JournalLeg } from './accounts.js';
import { recordMovement, registerWallets } from './entries.js';

// The journal entry of one settled sweep step (docs/journal.md "Sweeps"), written by settleSweepStep in its own
// transaction, once the step's transaction is final. One entry per step transaction (leg key `sweep`), kind `sweep`,
// object the sweep:
//   tokens   each source's swept amount: deposit address → destination; `elsewhere` (a token fee): first source → external
//   native   the fee burnt by the sender (gas station, deposit address, Solana fee payer) → fees:<network>;
//            fund / activate / reclaim: the value moved sender → step recipient;
//            Solana close (and batches planned before closes had their own step): rent of the closed deposit token
//            accounts, fees:<network> → fee payer (`nativeMoved`); Solana batch: rent locked in an account the step
//            created, fee payer → fees:<network> (`rentPaid`).
// TRON energy is a resource, not an asset: delegate/undelegate steps journal only the TRX they burnt.
// The treasury is a cold wallet whose keys we never hold: it is the account `treasury:<network>:<mode>:<address>`,
// kept in the journal (what was sent there) but not an `address:` account, so reconcile does not read it.

export { treasuryAccount };

/** Native movements of a step purpose: value from the sender to the step's recipient. */
const VALUE_PURPOSES = new Set(['fund', 'activate', 'reclaim']);

export interface SettledStep {
  txHash: string;
  block: { height: bigint; hash: string };
  swept: ReadonlyArray<{ source: string; amount: bigint }>;
  elsewhere: bigint;
  fee: bigint;
  nativeMoved: bigint;
  rentPaid?: bigint;
}

/** Legs of a settled step (exported for tests and the exports' fee view). */
export function sweepStepLegs(
  sweep: Pick<Selectable<SweepsTable>, 'network' | 'mode' | 'token' | 'destination_kind' | 'destination'>,
  step: Pick<Selectable<SweepStepsTable>, 'purpose' | 'from_address' | 'step'>,
  r: SettledStep,
): JournalLeg[] {
  const at = (a: string) => addressAccount(sweep.network, sweep.mode, a);
  const token = journalAsset(sweep.network, sweep.mode, sweep.token);
  const native = journalAsset(sweep.network, sweep.mode, 'native');
  const fees = feesAccount(sweep.network);
  const destination =
    sweep.destination_kind === 'treasury' ? treasuryAccount(sweep.network, sweep.mode, sweep.destination) : at(sweep.destination);
  const stepJson = step.step as { to?: string; sources?: string[] };
  const legs: JournalLeg[] = [];
  for (const s of r.swept) legs.push(...transferLegs(token, at(s.source), destination, s.amount));
  const firstSource = r.swept[0]?.source ?? stepJson.sources?.[0];
  if (r.elsewhere > 0n && firstSource) legs.push(...transferLegs(token, at(firstSource), EXTERNAL_ACCOUNT, r.elsewhere));
  legs.push(...transferLegs(native, at(step.from_address), fees, r.fee));
  if (VALUE_PURPOSES.has(step.purpose) && stepJson.to)
    legs.push(...transferLegs(native, at(step.from_address), at(stepJson.to), r.nativeMoved));
  else if ((step.purpose === 'batch' || step.purpose === 'close') && r.nativeMoved > 0n)
    legs.push(...transferLegs(native, fees, at(step.from_address), r.nativeMoved));
  if (r.rentPaid && r.rentPaid > 0n) legs.push(...transferLegs(native, at(step.from_address), fees, r.rentPaid));
  return legs;
}

/** Records the step's entry in `trx` (idempotent on the transaction hash). */
export async function journalSweepStep(
  trx: Transaction<Database>,
  sweep: Selectable<SweepsTable>,
  step: Selectable<SweepStepsTable>,
  r: SettledStep,
): Promise<void> {
  await recordMovement(trx, {
    network: sweep.network,
    mode: sweep.mode,
    txHash: r.txHash,
    legKey: 'sweep',
    kind: 'sweep',
    blockHeight: r.block.height,
    blockHash: r.block.hash,
    merchantId: sweep.merchant_id,
    object: { type: 'sweep', id: sweep.id },
    legs: sweepStepLegs(sweep, step, r),
  });
}

/**
 * The operator wallets a sweep sends from (the gas station; TRON's resources account) become watched wallets like hot
 * wallets: a token sent to them is never a deposit, and a movement the service did not make is flagged.
 */
export async function registerSweepWallets(
  trx: Transaction<Database>,
  sweep: Pick<Selectable<SweepsTable>, 'network' | 'mode' | 'request' | 'merchant_id' | 'destination_kind' | 'destination'>,
): Promise<void> {
  const req = sweep.request as { gasStation?: { address?: string }; resources?: { address?: string } };
  const wallets = [
    ...(req.gasStation?.address ? [{ address: req.gasStation.address, role: 'gas_station', merchantId: null }] : []),
    ...(req.resources?.address ? [{ address: req.resources.address, role: 'resources', merchantId: null }] : []),
    // The refunds hot wallet a sweep tops up is watched like any hot wallet (the payout engine registers it too).
    ...(sweep.destination_kind === 'hot_wallet' ? [{ address: sweep.destination, role: 'refunds', merchantId: sweep.merchant_id }] : []),
  ];
  await registerWallets(
    trx,
    wallets.map((w) => ({ network: sweep.network, mode: sweep.mode, address: w.address, merchantId: w.merchantId, role: w.role })),
  );
}
