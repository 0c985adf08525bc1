import { SPL_TOKEN_PROGRAM, associatedTokenAccount, decodeTokenMessage, type TokenMessage } from '../../chains/solana/token-message.js';
import type { TokenContract } from '../../chains/types.js';
import type { SignedPreimage } from './justified.js';
import { refuse } from './refusal.js';

// The one Solana token transfer the signer justifies, as SolanaTokenSender compiles it for a refund payout (the hot
// wallet spends its own account) and for a subscription charge (the charger spends the customer's account as its SPL
// delegate): `payer` pays the fee and is the only signer; compute-budget instructions; at most one idempotent
// creation of the destination's associated token account (paid by `payer`, for the registry's mint); exactly one SPL
// TransferChecked of the registry's mint and decimals from `sourceOwner`'s associated account, authorised by `payer`,
// to the destination's associated account (or to the destination itself, when it is a token account). Static keys
// only, no address lookup table. Anything else is refused.

export interface SolanaTransferParties {
  /** Fee payer, only signer and the transfer's authority (owner or delegate of the source). */
  payer: string;
  /** Whose associated token account is spent. */
  sourceOwner: string;
  /** Who is paid (a wallet, through its associated token account). */
  destination: string;
  token: TokenContract;
  /** What is being justified, for the reasons ("refund payout", "subscription charge"). */
  what: string;
}

/** The transfer's recipient (the destination as named when it pays its account; else the account paid) and amount. */
export function readSolanaTokenTransfer(preimage: SignedPreimage, p: SolanaTransferParties): { to: string; amount: bigint } {
  if (preimage.kind !== 'solana-message') refuse('wrong_method', `a Solana ${p.what} signs a Solana message, not an ${preimage.kind}`);
  let m: TokenMessage;
  try {
    m = decodeTokenMessage(preimage.message);
  } catch {
    refuse('undecodable_transaction', 'the message is not a Solana transaction message');
  }
  if (m.usesLookupTables) refuse('wrong_method', `a ${p.what} uses no address lookup table`);
  if (m.feePayer !== p.payer || m.requiredSigners.length !== 1)
    refuse('wrong_key', `the ${p.what}'s wallet must be the fee payer and the only signer`);
  const destinationAta = associatedTokenAccount(p.destination, p.token.address);
  const transfers = m.instructions.filter((i) => i.kind === 'transfer-checked');
  const creates = m.instructions.filter((i) => i.kind === 'create-ata');
  const other = m.instructions.find((i) => i.kind !== 'compute-budget' && i.kind !== 'create-ata' && i.kind !== 'transfer-checked');
  if (other)
    refuse(
      'wrong_method',
      `the message holds ${other.kind === 'other' ? `a call of ${other.program}` : `a ${other.kind}`}, which no ${p.what} does`,
    );
  if (transfers.length !== 1 || creates.length > 1) refuse('wrong_method', `a ${p.what} is exactly one token transfer`);
  for (const c of creates)
    if (
      c.payer !== p.payer ||
      c.mint !== p.token.address ||
      c.owner !== p.destination ||
      c.ata !== destinationAta ||
      c.tokenProgram !== SPL_TOKEN_PROGRAM
    )
      refuse('wrong_recipient', `the account it creates is not the ${p.what}'s destination token account`);
  const t = transfers[0]!;
  if (t.mint !== p.token.address || t.decimals !== p.token.decimals)
    refuse('wrong_contract', `the transfer moves mint ${t.mint}, not ${p.token.symbol}`);
  if (t.authority !== p.payer || t.source !== associatedTokenAccount(p.sourceOwner, p.token.address))
    refuse('wrong_key', `the transfer does not spend ${p.sourceOwner}'s token account with the ${p.what}'s wallet`);
  const to = t.destination === destinationAta || t.destination === p.destination ? p.destination : t.destination;
  return { to, amount: t.amount };
}
