import { SPL_TOKEN_PROGRAM, associatedTokenAccount, decodeTokenMessage, type TokenMessage } from '../../chains/solana/token-message.js';
import type { KeyPath } from '../../chains/types.js';
import type { SweepSourceRow } from '../ledger/treasury/sweeps.js';
import type { JustifiedSend } from './justified.js';
import { refuse } from './refusal.js';
import type { SweepStepContext } from './sweep-step-context.js';

// Justification of a Solana sweep step (docs/signer.md, "Sweep steps"): the messages chains/solana/sweep.ts (`batch`)
// and sweep-close.ts (`close`) compile, read back with chains/solana/token-message.ts and checked against the wallets
// the signer derived itself (sweep-step-context.ts), never against the step JSON a worker wrote:
// - both: the derived gas station pays the fee; every other required signer is a deposit address of this sweep whose
//   key the signer derived again; the key asked for is one of those signers; static keys only;
// - `batch`: compute budget, at most one idempotent creation of the destination's associated token account (paid by
//   the gas station, for the registry's mint), and TransferChecked of the registry's mint and decimals, each from a
//   source's own associated token account, authorised by that source (still to sweep, once), at most its planned
//   amount, all to one allowed destination's token account (its ATA, or the destination itself when it is one);
// - `close`: compute budget and CloseAccount of sources' associated token accounts, each authorised by its source,
//   the rent to the gas station.
// Nothing else: any other program or instruction is refused.

export async function justifySolanaSweepStep(ctx: SweepStepContext): Promise<JustifiedSend> {
  const { sweep, step, token } = ctx;
  const gasStation = ctx.gasStation.address;
  const isKey = (k: KeyPath) => ctx.key.curve === k.curve && ctx.key.path === k.path;
  const send = (to: string, amount: bigint, native: boolean): JustifiedSend => {
    const summary = native
      ? { to, token: 'SOL', contract: '', amount_base: '0' }
      : { to, token: sweep.token, contract: token.address, amount_base: amount.toString() };
    ctx.seen.summary = summary;
    ctx.seen.amount = amount;
    return {
      merchantId: sweep.merchant_id,
      network: sweep.network,
      mode: sweep.mode,
      token: sweep.token,
      decimals: token.decimals,
      amount,
      summary,
    };
  };
  if (sweep.method !== 'solana-fee-payer' || (step.purpose !== 'batch' && step.purpose !== 'close'))
    refuse('wrong_method', `a ${sweep.method} sweep has no ${step.purpose} step this signer signs`);
  if (ctx.preimage.kind !== 'solana-message')
    refuse('wrong_method', `a Solana sweep step signs a Solana message, not an ${ctx.preimage.kind}`);
  let m: TokenMessage;
  try {
    m = decodeTokenMessage(ctx.preimage.message);
  } catch {
    refuse('undecodable_transaction', 'the message is not a Solana transaction message');
  }
  if (m.usesLookupTables) refuse('wrong_method', 'a sweep step uses no address lookup table');
  if (m.feePayer !== gasStation) refuse('wrong_key', 'the gas station must pay the fee of a sweep step');

  // Every signer but the fee payer is a deposit address of this sweep (its key derived again from the seed).
  const signers = new Map<string, SweepSourceRow>();
  for (const address of m.requiredSigners.slice(1)) {
    const source = await ctx.sourceByAddress(address);
    if (!source) refuse('wrong_key', `${address} signs the message and is not a deposit address of sweep ${sweep.id}`);
    signers.set(address, source);
  }
  if (!isKey(ctx.gasStation.key)) {
    const asked = await ctx.sourceByKey(ctx.key);
    if (!asked || !signers.has(asked.address))
      refuse('wrong_key', `the key is neither the gas station nor a signing deposit key of sweep ${sweep.id}`);
  }

  if (step.purpose === 'close') {
    const closes = m.instructions.filter((i) => i.kind === 'close-account');
    const other = m.instructions.find((i) => i.kind !== 'compute-budget' && i.kind !== 'close-account');
    if (other || closes.length === 0) refuse('wrong_method', 'a close step is CloseAccount instructions only');
    const sent = send(gasStation, 0n, true);
    for (const c of closes) {
      if (c.tokenProgram !== SPL_TOKEN_PROGRAM) refuse('wrong_method', `the close calls ${c.tokenProgram}`);
      const source = signers.get(c.authority);
      if (!source || c.account !== associatedTokenAccount(source.address, token.address))
        refuse('wrong_key', `the close of ${c.account} is not a source's own ${sweep.token} account, authorised by it`);
      if (c.destination !== gasStation)
        refuse('wrong_recipient', `the close sends ${c.account}'s rent to ${c.destination}, not the gas station`);
    }
    return sent;
  }

  // batch
  const other = m.instructions.find((i) => i.kind !== 'compute-budget' && i.kind !== 'create-ata' && i.kind !== 'transfer-checked');
  if (other) refuse('wrong_method', `the batch holds ${other.kind === 'other' ? `a call of ${other.program}` : `a ${other.kind}`}`);
  const transfers = m.instructions.filter((i) => i.kind === 'transfer-checked');
  const creates = m.instructions.filter((i) => i.kind === 'create-ata');
  if (transfers.length === 0 || creates.length > 1) refuse('wrong_method', 'a batch is token transfers and at most one account creation');
  const account = transfers[0]!.destination;
  // The allowed destination the transfers pay: a destination that is itself the token account, or whose ATA it is.
  const destination =
    ctx.destinations.find((d) => d === account) ?? ctx.destinations.find((d) => associatedTokenAccount(d, token.address) === account);
  const total = transfers.reduce((sum, x) => sum + x.amount, 0n);
  const sent = send(destination ?? account, total, false);
  if (!destination || transfers.some((x) => x.destination !== account))
    refuse('wrong_recipient', `the batch pays ${account}, not the token account of the merchant's hot wallet or treasury`);
  for (const c of creates)
    if (
      c.payer !== gasStation ||
      c.owner !== destination ||
      c.mint !== token.address ||
      c.ata !== associatedTokenAccount(destination, token.address) ||
      c.tokenProgram !== SPL_TOKEN_PROGRAM
    )
      refuse('wrong_recipient', "the account the batch creates is not the destination's token account");
  const spent = new Set<string>();
  for (const x of transfers) {
    if (x.mint !== token.address || x.decimals !== token.decimals)
      refuse('wrong_contract', `the batch moves mint ${x.mint}, not ${sweep.token}`);
    const source = signers.get(x.authority);
    if (!source || source.state !== 'planned' || x.source !== associatedTokenAccount(source.address, token.address))
      refuse('wrong_key', `the transfer from ${x.source} is not a source's own account, authorised by it, still to sweep`);
    if (spent.has(source.address)) refuse('wrong_method', `the batch spends ${source.address} twice`);
    spent.add(source.address);
    if (x.amount <= 0n || x.amount > source.planned_base)
      refuse('wrong_amount', `the batch moves ${x.amount} from ${source.address}; the ledger planned ${source.planned_base}`);
  }
  if (spent.size !== signers.size) refuse('wrong_key', 'a deposit key signs the batch without a transfer of its own');
  return sent;
}
