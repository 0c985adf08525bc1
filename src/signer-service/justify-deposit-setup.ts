import type { ChainRegistry } from '../../chains/chain-registry.js';
import { SPL_TOKEN_PROGRAM, associatedTokenAccount, decodeTokenMessage, type TokenMessage } from '../../chains/solana/token-message.js';
import { HOT_WALLET_SLOT, type KeyDeriver, type KeyPath } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { merchantAccountIndex } from '../ledger/merchants/merchants.js';
import { depositSetupById } from '../ledger/payments/deposit-setups.js';
import type { AuditContext, JustifiedSend, SignedPreimage } from './justified.js';
import { refuse } from './refusal.js';

// Justification of a deposit setup (docs/signer.md, "What is justified"): a Solana session's deposit owner gets its
// associated token account created, paid by the merchant's refunds hot wallet (src/payments/deposit-setup.ts). The
// signer reads the setup by id and signs only that message: the hot wallet pays and is the only signer, compute
// budget instructions, and exactly one idempotent creation of the deposit address's account for the setup's token.
// Nothing moves but the fee and the rent, which the account's close gives back at the sweep.

export async function justifyDepositSetup(
  o: { db: Db; adapters: ChainRegistry; keys: KeyDeriver },
  setupId: string,
  key: KeyPath,
  preimage: SignedPreimage,
  seen: AuditContext,
): Promise<JustifiedSend> {
  const setup = /^\d{1,18}$/.test(setupId) ? await depositSetupById(o.db, setupId) : undefined;
  if (!setup) refuse('unknown_object', `no deposit setup ${setupId}`);
  seen.merchantId = setup.merchant_id;
  seen.network = setup.network;
  seen.mode = setup.mode;
  if (setup.status !== 'processing') refuse('not_payable', `deposit setup ${setupId} is ${setup.status}`);
  const adapter = o.adapters.get(setup.network, setup.mode);
  if (!adapter || adapter.family !== 'solana')
    refuse('purpose_not_supported', `deposit setups on ${setup.network} are not configured here`);
  const token = o.adapters.token(setup.network, setup.mode, setup.token);
  if (!token) refuse('wrong_contract', `${setup.token} is not configured on ${setup.network} (${setup.mode})`);
  const account = await merchantAccountIndex(o.db, setup.merchant_id, setup.mode);
  const hot = await adapter.deriveHotWallet(o.keys, account, HOT_WALLET_SLOT.refunds);
  if (key.curve !== hot.key.curve || key.path !== hot.key.path)
    refuse('wrong_key', `the key is not merchant ${setup.merchant_id}'s fee payer`);
  if (preimage.kind !== 'solana-message') refuse('wrong_method', `a deposit setup signs a Solana message, not an ${preimage.kind}`);
  let m: TokenMessage;
  try {
    m = decodeTokenMessage(preimage.message);
  } catch {
    refuse('undecodable_transaction', 'the message is not a Solana transaction message');
  }
  if (m.usesLookupTables) refuse('wrong_method', 'a deposit setup uses no address lookup table');
  if (m.feePayer !== hot.address || m.requiredSigners.length !== 1) refuse('wrong_key', 'the fee payer must be the only signer');
  const summary = { to: setup.deposit_address, token: setup.token, contract: token.address, amount_base: '0' };
  seen.summary = summary;
  const work = m.instructions.filter((i) => i.kind !== 'compute-budget');
  const create = work[0];
  if (work.length !== 1 || create?.kind !== 'create-ata') refuse('wrong_method', 'a deposit setup is exactly one token account creation');
  if (
    create.payer !== hot.address ||
    create.owner !== setup.deposit_address ||
    create.mint !== token.address ||
    create.tokenProgram !== SPL_TOKEN_PROGRAM ||
    create.ata !== associatedTokenAccount(setup.deposit_address, token.address)
  )
    refuse('wrong_recipient', "the account it creates is not the deposit address's token account for the setup's token");
  return {
    merchantId: setup.merchant_id,
    network: setup.network,
    mode: setup.mode,
    token: setup.token,
    decimals: token.decimals,
    amount: 0n,
    summary,
  };
}
