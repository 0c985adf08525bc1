import type { ChainRegistry } from '../../chains/chain-registry.js';
import { isAllowanceCharger, type KeyDeriver } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { NETWORK_IDS, isNetworkId, type Mode, type NetworkId } from '../../chains/vocabulary.js';
import { recordChainCharge } from '../ledger/subscriptions/charge-chain-record.js';
import { findMerchantRefund, settleRefundFromChain } from '../operations/refunds-actions.js';
import { usageOfRefusal } from './refusal-usage.js';
import { loadCharge } from '../ledger/subscriptions/charges.js';
import { acceptWalletNonce, walletNonceStates } from '../ledger/outbound/wallet-nonce-guard.js';
import { acceptUnknownTransactions, unknownTransactions, type UnknownTransactionView } from '../ledger/outbound/wallet-history.js';
import { UsageError, options, print, required } from './args.js';

// Operator commands of the outbound engine's guard against transactions the ledger does not know (docs/outbound.md,
// "Transactions the ledger does not know"): list the wallets' nonces (EVM) and the noted outgoing transactions (TRON,
// Solana), record a refund or charge the chain shows as paid, and accept a wallet's chain nonce or its noted
// transactions once every transaction it sent is accounted for. The nonce commands check the chain first.

export const WALLET_GUARD_USAGE = `payouts wallet-nonces [--network <n>] [--mode test|live]
                                               every sending wallet's next nonce, and the chain's when it is ahead
payouts wallet-unknown [--network <n>] [--mode test|live] [--all]
                                               TRON/Solana: the wallets' outgoing transactions the ledger does not know
                                               (held ones; --all: recorded and accepted ones too)
payouts wallet-accept-transactions --network <n> --mode test|live --address <a> --tx <hash> [--tx <hash> ...] --actor <name> [--note <text>]
                                               TRON/Solana: accept those noted transactions as known (audited); the wallet
                                               resumes once none is held
payouts settle-from-chain <refund_id> --merchant <id> --tx <hash> --actor <name>
                                               record a landed transfer of the refunds wallet as that refund's payout
payouts settle-charge-from-chain <charge_id> --tx <hash> --actor <name>
                                               record a landed transfer from the customer as that pending charge's payment
payouts wallet-accept-nonce --network <n> --mode test|live --address <a> --nonce N --actor <name> [--note <text>]
                                               resume signing from a wallet at the chain's pending nonce N (audited)`;

/** What `payouts` passes (src/cli/payouts.ts PayoutCliContext). */
interface WalletGuardCliContext {
  db: Db;
  adapters: () => Promise<ChainRegistry>;
  keys: KeyDeriver | null;
  enqueue: (refundId: string) => Promise<void>;
  out?: (value: unknown) => void;
}

const network = (v: string | undefined): NetworkId => {
  const n = required(v, 'network');
  if (!isNetworkId(n)) throw new UsageError(`--network must be one of ${NETWORK_IDS.join(', ')}`);
  return n;
};
const mode = (v: string | undefined): Mode => {
  const m = required(v, 'mode');
  if (m !== 'test' && m !== 'live') throw new UsageError('--mode must be test or live');
  return m;
};
const nonceArg = (v: string | undefined): bigint => {
  const n = required(v, 'nonce');
  if (!/^\d{1,30}$/.test(n)) throw new UsageError('--nonce must be a non-negative integer');
  return BigInt(n);
};
const adapterOf = (adapters: ChainRegistry, n: NetworkId, m: Mode) => {
  const a = adapters.get(n, m);
  if (!a) throw new UsageError(`${n} (${m}) is not configured in this environment`);
  return a;
};

/** Answers whether it handled `sub`. */
export async function walletGuardCli(sub: string | undefined, rest: string[], ctx: WalletGuardCliContext): Promise<boolean> {
  const out = ctx.out ?? print;
  switch (sub) {
    case 'wallet-nonces': {
      const { values } = options(rest, { network: { type: 'string' }, mode: { type: 'string' } });
      const rows = await walletNonceStates(ctx.db, {
        ...(values.network ? { network: network(values.network) } : {}),
        ...(values.mode ? { mode: mode(values.mode) } : {}),
      });
      out(rows.map(nonceView));
      return true;
    }
    case 'wallet-unknown': {
      const { values } = options(rest, { network: { type: 'string' }, mode: { type: 'string' }, all: { type: 'boolean' } });
      const rows = await unknownTransactions(ctx.db, {
        ...(values.network ? { network: network(values.network) } : {}),
        ...(values.mode ? { mode: mode(values.mode) } : {}),
        open: !values.all,
      });
      const adapters = rows.length > 0 ? await ctx.adapters() : null;
      out(rows.map((r) => unknownView(r, adapters)));
      return true;
    }
    case 'wallet-accept-transactions': {
      const { values } = options(rest, {
        network: { type: 'string' },
        mode: { type: 'string' },
        address: { type: 'string' },
        tx: { type: 'string', multiple: true },
        actor: { type: 'string' },
        note: { type: 'string' },
      });
      const n = network(values.network);
      const m = mode(values.mode);
      const actor = required(values.actor, 'actor');
      const txs = ([] as string[]).concat(values.tx ?? []);
      if (txs.length === 0) throw new UsageError('--tx is required: each noted transaction you checked (repeat --tx)');
      const adapter = adapterOf(await ctx.adapters(), n, m);
      const address = adapter.normalizeAddress(required(values.address, 'address'));
      if (!address) throw new UsageError(`--address is not a ${n} address`);
      const r = await acceptUnknownTransactions(ctx.db, { network: n, mode: m, address }, txs, { actor, note: values.note ?? null });
      if (r.kind === 'not_held')
        throw new UsageError(
          `not held transactions of ${adapter.displayAddress(address)} on ${n} (${m}): ${r.txHashes.join(', ')} (see payouts wallet-unknown)`,
        );
      out({ network: n, mode: m, address: adapter.displayAddress(address), accepted: r.txHashes, actor, note: values.note ?? null });
      return true;
    }
    case 'wallet-accept-nonce': {
      const { values } = options(rest, {
        network: { type: 'string' },
        mode: { type: 'string' },
        address: { type: 'string' },
        nonce: { type: 'string' },
        actor: { type: 'string' },
        note: { type: 'string' },
      });
      const n = network(values.network);
      const m = mode(values.mode);
      const nonce = nonceArg(values.nonce);
      const actor = required(values.actor, 'actor');
      const adapter = adapterOf(await ctx.adapters(), n, m);
      const address = adapter.normalizeAddress(required(values.address, 'address'));
      if (!address) throw new UsageError(`--address is not a ${n} address`);
      // The nonce the operator checked must still be the chain's: a lower one would be refused again at once, a
      // higher one would leave a gap no transaction can fill (every later payout stuck).
      const chain = await adapter.getAccountNonce(address);
      if (chain === null) throw new UsageError(`${n} has no account nonces: nothing to accept`);
      if (chain !== nonce)
        throw new UsageError(`the chain's pending nonce of ${address} is ${chain}, not ${nonce}: check its transactions again`);
      const r = await acceptWalletNonce(ctx.db, { network: n, mode: m, address }, nonce, { actor, note: values.note ?? null });
      if (r.kind === 'no_wallet') throw new UsageError(`no nonce row for ${address} on ${n} (${m}): the gateway never sent from it`);
      if (r.kind === 'behind_stored') throw new UsageError(`the ledger's next nonce is already ${r.stored}; nothing to accept`);
      out({
        network: n,
        mode: m,
        address: adapter.displayAddress(address),
        previous_next_nonce: r.previous,
        next_nonce: r.accepted,
        actor,
        acceptance_id: r.acceptanceId,
      });
      return true;
    }
    case 'settle-from-chain': {
      const { values, positionals } = options(rest, { merchant: { type: 'string' }, tx: { type: 'string' }, actor: { type: 'string' } });
      const refundId = positionals[0];
      if (!refundId) throw new UsageError('payouts settle-from-chain <refund_id> --merchant <id> --tx <hash> --actor <name>');
      const merchantId = required(values.merchant, 'merchant');
      const tx = required(values.tx, 'tx');
      const actor = required(values.actor, 'actor');
      if (!ctx.keys) throw new UsageError('settle-from-chain needs HD_MNEMONIC or HD_ACCOUNT_XPUBS to derive the refunds wallet');
      const refund = await findMerchantRefund(ctx.db, merchantId, refundId);
      if (!refund) throw new UsageError(`no refund ${refundId} of merchant ${merchantId}`);
      const d = await settleRefundFromChain(
        { db: ctx.db, chains: ctx.adapters, enqueuePayout: ctx.enqueue, keys: ctx.keys },
        refund,
        tx,
        actor,
        refundId,
      ).catch(usageOfRefusal);
      out({ refund_id: refund.refund_id, id: refund.id, tx_hash: tx, delivered_base: d.deliveredBase, recorded_by: actor });
      return true;
    }
    case 'settle-charge-from-chain': {
      const { values, positionals } = options(rest, { tx: { type: 'string' }, actor: { type: 'string' } });
      const id = positionals[0];
      if (!id || !/^\d{1,18}$/.test(id)) throw new UsageError('payouts settle-charge-from-chain <charge_id> --tx <hash> --actor <name>');
      const tx = required(values.tx, 'tx');
      const actor = required(values.actor, 'actor');
      const charge = await loadCharge(ctx.db, BigInt(id));
      if (!charge) throw new UsageError(`no charge ${id}`);
      if (charge.state !== 'pending')
        throw new UsageError(`charge ${id} is ${charge.state}; only a pending charge can be settled from the chain`);
      const adapter = adapterOf(await ctx.adapters(), charge.network, charge.mode);
      if (!isAllowanceCharger(adapter)) throw new UsageError(`${charge.network} does not charge subscriptions`);
      const outcome = await adapter.getTransferFromOutcome(tx, charge.owner_address);
      if (outcome.status !== 'succeeded' || !outcome.final)
        throw new UsageError(`${tx} is ${outcome.status === 'succeeded' ? 'not final yet' : outcome.status} on ${charge.network}`);
      // The customer's tokens to the charge's settlement address: what the engine reads to settle it.
      const t = await adapter.findChargeTransfer(tx, charge.owner_address, charge.destination_address);
      if (!t) throw new UsageError(`${tx} moved nothing from the customer to the charge's settlement address`);
      const r = await recordChainCharge(ctx.db, charge.id, { txHash: tx, detail: `recorded from the chain by ${actor}` });
      if (r.kind === 'not_pending') throw new UsageError(`charge ${id} was signed meanwhile: the engine follows it`);
      if (r.kind === 'already_recorded')
        throw new UsageError(`${tx} is already recorded for charge ${r.chargeId}: one transaction pays one charge`);
      out({ charge_id: String(charge.id), invoice_id: charge.invoice_id, tx_hash: tx, recorded_by: actor });
      return true;
    }
    default:
      return false;
  }
}

function nonceView(w: Awaited<ReturnType<typeof walletNonceStates>>[number]) {
  return {
    network: w.network,
    mode: w.mode,
    address: w.address,
    next_nonce: w.nextNonce,
    unknown_transactions: w.unknown ? { chain_nonce: w.unknown.chainNonce, since: w.unknown.since.toISOString() } : null,
  };
}

function unknownView(r: UnknownTransactionView, adapters: ChainRegistry | null) {
  const a = adapters?.get(r.network, r.mode);
  return {
    network: r.network,
    mode: r.mode,
    address: a ? a.displayAddress(r.address) : r.address,
    tx_hash: r.txHash,
    chain_time: r.chainTime?.toISOString() ?? null,
    failed: r.failed,
    seen_at: r.seenAt.toISOString(),
    status: r.status,
    accepted: r.accepted ? { at: r.accepted.at.toISOString(), by: r.accepted.by, note: r.accepted.note } : null,
  };
}
