import { recordSignerWait } from '../metrics/signer.js';
import { SignerRefusedError, SignerUnavailableError } from '../domain/signer-errors.js';
import { withIntent } from '../signer/intent.js';
import { TransferRejectedError, type ChainAdapter, type SendFailureReason, type SignedTransfer } from '../../chains/types.js';
import type { OutboundAttempt } from '../ledger/outbound/outbound-store.js';
import { killAtFailpoint, type Failpoint } from './failpoints.js';
import { heldWallet } from './wallet-history-guard.js';
import type { OutboundDeps, OutboundKind, StepResult } from './kind.js';

// The crash-safe send of one outbound transfer (a refund payout, a subscription charge, ...), one step at a time.
// Invariants, for every kind:
// - the signed bytes and their hash are committed (a live attempt) BEFORE the first broadcast;
// - a job with a live attempt is never signed again: its bytes are re-broadcast and its outcome is looked up by hash;
//   a new signature happens only when every earlier attempt is proven unable to land (expired, or its nonce taken by
//   another transaction), or as a fee-bumped replacement at the SAME nonce, of which at most one can ever be mined;
// - nonces are assigned under the wallet's nonce row lock in the transaction that stores the signed bytes, as
//   the stored one (gapless); the chain's pending nonce only for a wallet's first transaction. A chain AHEAD of the
//   stored nonce means the wallet sent transactions the ledger does not know (a restored older backup, the key used
//   by hand): nothing is signed from it until an operator accepts the chain's nonce (docs/outbound.md). Families without
//   nonces (TRON, Solana): the wallet's recent outgoing transactions are matched against every kind's attempts instead
//   (wallet-history-guard.ts); one the ledger does not know holds the wallet the same way.

export async function advanceOutbound<J, A extends ChainAdapter>(
  kind: OutboundKind<J, A>,
  deps: OutboundDeps,
  id: string,
): Promise<StepResult> {
  const claimed = await kind.store.claim(id);
  if (claimed.kind === 'done') return claimed;
  const job = claimed.job;
  const found = kind.adapter(job);
  const live = await kind.store.liveAttempts(job);
  if ('missing' in found || !deps.signer) {
    if (live.length === 0) return kind.fail(job, { cause: 'unavailable', missing: 'missing' in found ? found.missing : 'signer' });
    deps.log?.error({ ...kind.describe(job), ...kind.network(job) }, 'signed transfer cannot be reconciled: network or signer missing');
    return { kind: 'wait', ms: 30_000 };
  }
  const adapter = found.adapter;
  // Nothing in flight: sign a first attempt (or a fresh one, when a step died between dropping the last and reopening).
  if (live.length === 0)
    return (await kind.store.reopen(job)) ? signAndSend(kind, deps, adapter, job, null) : { kind: 'wait', ms: deps.pollMs };

  // Outcomes first: one of the attempts may already have landed (a crash after broadcast, or a replacement race).
  const stillLive: OutboundAttempt[] = [];
  let anyPending = false;
  let refused = false;
  for (const a of live) {
    const outcome = await kind.outcome(adapter, job, a);
    switch (outcome.status) {
      case 'succeeded': {
        if (!outcome.final) return { kind: 'wait', ms: deps.pollMs };
        // What reached the destination, from the landed transaction's own logs: never the amount asked for.
        const r = await kind.receipt(adapter, job, a, { block: outcome.block, fee: outcome.fee });
        if (r.kind === 'unread') return { kind: 'wait', ms: deps.pollMs };
        if (r.kind === 'undelivered') {
          await recordBurnt(kind, adapter, job, a, outcome.block, outcome.fee);
          hit(deps, 'outbound:after_burnt_fee');
          return kind.fail(job, { cause: 'undelivered', elsewhere: r.elsewhere, txHash: a.txHash });
        }
        hit(deps, 'outbound:after_receipt');
        return r.settle();
      }
      case 'failed':
        if (!outcome.final) return { kind: 'wait', ms: deps.pollMs };
        // Reverted: nothing moved but the fee, and its nonce was consumed on chain, so no other attempt can land. The
        // burnt fee is journaled first (idempotent), so a crash before the job is failed journals it once.
        await recordBurnt(kind, adapter, job, a, outcome.block, outcome.fee ?? 0n);
        hit(deps, 'outbound:after_burnt_fee');
        return kind.fail(job, {
          cause: 'reverted',
          reason: outcome.reason,
          detail: outcome.detail,
          txHash: a.txHash,
          ...(outcome.refusal ? { refusal: outcome.refusal } : {}),
        });
      case 'pending':
        anyPending = true;
        stillLive.push(a);
        if (!a.broadcast) await kind.store.markBroadcast(job, a);
        break;
      case 'unknown': {
        const r = await rebroadcastOrDrop(kind, deps, adapter, job, a);
        if (r !== 'dropped') stillLive.push(a);
        if (r === 'refused') refused = true;
        break;
      }
      default: {
        const never: never = outcome;
        return never;
      }
    }
  }

  if (stillLive.length === 0) {
    // Every attempt proven dead: nothing moved; sign afresh, after the pre-flight checks.
    if (!(await kind.store.reopen(job))) return { kind: 'wait', ms: deps.pollMs };
    deps.log?.info(kind.describe(job), 'every attempt proven dead; signing afresh');
    return signAndSend(kind, deps, adapter, job, null);
  }

  // Stuck: replace the newest attempt at the same nonce with a higher fee, whether it waits in the mempool or the node
  // forgot it and refuses it again (a fee below a risen base fee): at most one transaction at a nonce can be mined.
  const newest = stillLive[stillLive.length - 1]!;
  if (
    (anyPending || refused) &&
    newest.nonce !== null &&
    bytes(newest).raw &&
    Date.now() - newest.createdAt.getTime() > deps.stuckAfterMs
  ) {
    return signAndSend(kind, deps, adapter, job, newest);
  }
  return { kind: 'wait', ms: refused ? Math.max(deps.pollMs, 5000) : deps.pollMs };
}

/** Re-broadcasts an attempt the chain does not know; drops it when it provably can never land. */
async function rebroadcastOrDrop<J, A extends ChainAdapter>(
  kind: OutboundKind<J, A>,
  deps: OutboundDeps,
  adapter: A,
  job: J,
  a: OutboundAttempt,
): Promise<'offered' | 'dropped' | 'refused'> {
  const signed = bytes(a);
  if (!signed.raw) {
    // Recorded from the chain by an operator (`payouts settle-from-chain`), no bytes of ours: it landed once and is
    // looked up again until the chain shows it (a reorg); nothing can be re-offered.
    deps.log?.error({ ...kind.describe(job), tx_hash: a.txHash }, 'recorded transaction no longer found on chain; waiting for it');
    return 'refused';
  }
  if (await adapter.isExpired(signed)) {
    await kind.store.dropAttempt(job, a, 'expired before landing');
    return 'dropped';
  }
  const result = await adapter.broadcast(signed);
  if (result.status !== 'rejected') {
    await kind.store.markBroadcast(job, a);
    return 'offered';
  }
  if (provesDead(result.reason)) {
    // The chain does not have these bytes and can no longer take them: the nonce went to another transaction (a
    // replacement of this job, looked up in the same pass, or something else).
    await kind.store.dropAttempt(job, a, result.detail);
    return 'dropped';
  }
  // Refused for lack of funds, a fee below the base fee or similar. These bytes may have been offered before (this
  // node or another may have taken them then, and forgotten them since): a node refusing them now does not prove
  // that they cannot land, so the nonce is never given back here (docs/outbound.md, "A refusal is not a death").
  // They are offered again until they land or a transaction at their nonce does; a stuck replacement at the same
  // nonce may take their place. Families without nonces (Solana, TRON): until proven expired (isExpired, above).
  deps.log?.error(
    { ...kind.describe(job), tx_hash: a.txHash, reason: result.reason, detail: result.detail },
    a.nonce === null
      ? 'broadcast refused; the same bytes are offered again until they land or are proven expired'
      : 'broadcast refused; the same bytes are offered again (or replaced at their nonce) until a transaction at their nonce lands',
  );
  return 'refused';
}

/** A refusal that proves the bytes can never land: their nonce is taken, or their validity ran out. */
function provesDead(reason: SendFailureReason): boolean {
  return reason === 'nonce_too_low' || reason === 'expired';
}

/**
 * The first offer of freshly signed bytes was refused (not a replacement: the nonce is its own). No node ever took
 * these bytes, so if the kind gives the nonce back and no later nonce was handed out, the attempt is dropped and the
 * next step signs afresh, whose pre-flight names the reason (or signs the identical bytes again). Answers whether it
 * did; otherwise the next step offers the same bytes again by the rules of rebroadcastOrDrop.
 */
async function releaseUnoffered<J, A extends ChainAdapter>(
  kind: OutboundKind<J, A>,
  adapter: A,
  job: J,
  a: OutboundAttempt,
  reason: SendFailureReason,
): Promise<boolean> {
  if (a.nonce === null || provesDead(reason)) return false;
  const sender = bytes(a).sender;
  const ref = { ...kind.network(job), address: adapter.normalizeAddress(sender) ?? sender };
  return kind.store.releaseNonceIfLast(job, ref, a);
}

/**
 * Builds, signs and stores a new attempt, then broadcasts it. `replacing` set: same nonce, higher fee. Sign-and-store
 * runs in one transaction holding the job's row (a cancel cannot slip in) and the nonce row.
 */
async function signAndSend<J, A extends ChainAdapter>(
  kind: OutboundKind<J, A>,
  deps: OutboundDeps,
  adapter: A,
  job: J,
  replacing: OutboundAttempt | null,
): Promise<StepResult> {
  const prepared = await kind.prepare(adapter, job, replacing);
  if (prepared.kind !== 'ready') return prepared;
  if (!replacing) {
    // The sending wallet, and every other the kind names (a sweep's other senders): each is looked at (so every
    // unknown transaction is noted at once for the operator), and any held one holds this send.
    let held: StepResult | null = null;
    for (const address of new Set([prepared.from.address, ...(prepared.alsoHeldBy ?? [])]))
      held = (await walletHistoryHold(kind, deps, adapter, job, address)) ?? held;
    if (held) return held;
  }
  const chainNonce = replacing ? null : await adapter.getAccountNonce(prepared.from.address);
  const feeBump = replacing ? replacing.feeBumpPercent + deps.feeBumpPercent : 0;
  let attempt: OutboundAttempt | UnknownTransactions | 'raced' | 'closed';
  try {
    // Built (gas estimate, fees, simulation) before the locks, at a provisional nonce; the real nonce is assigned
    // under the nonce row's lock with withNonce, so the lock is held only for sign-and-store.
    const draft = await prepared.build(replacing?.nonce ?? chainNonce, feeBump);
    attempt = await kind.store.sign(job, replacing, async (trx): Promise<OutboundAttempt | UnknownTransactions> => {
      const ref = { ...kind.network(job), address: prepared.from.address };
      let nonce: bigint | null = replacing?.nonce ?? null;
      if (!replacing && chainNonce !== null) {
        // Taken and advanced under the nonce row's lock, held until this transaction commits (rolled back with it).
        const taken = await trx.takeNonce(ref, chainNonce);
        // The chain counted transactions of this wallet that the ledger never signed (or no longer knows, after a
        // restore): one of them may be this very payment. Sign nothing until an operator has checked the chain.
        if (taken.kind === 'chain_ahead') return { unknownTransactions: { ...ref, storedNonce: taken.stored, chainNonce } };
        nonce = taken.nonce;
      }
      const signer = withIntent(deps.signer!, kind.intent(job));
      const signed = await adapter.signTransfer(nonce === null ? draft : adapter.withNonce(draft, nonce), signer);
      const stored = await trx.record({
        signed: { ...signed },
        txHash: signed.hash,
        sender: signed.sender,
        nonce,
        feeBumpPercent: feeBump,
      });
      return stored;
    });
  } catch (err) {
    if (err instanceof SignerUnavailableError || err instanceof SignerRefusedError) {
      // Nothing was stored (the attempt's transaction rolled back with its nonce): the send waits for the signer and
      // is asked again, never failed for it. A refusal names its code; an operator resolves it (docs/signer.md).
      const cause = err instanceof SignerRefusedError ? 'refused' : 'unavailable';
      const intent = kind.intent(job);
      recordSignerWait(intent.purpose, cause);
      deps.log?.error(
        { ...kind.describe(job), cause, ...(err instanceof SignerRefusedError ? { code: err.code } : {}), err: err.message },
        'the signer did not sign; waiting',
      );
      return { kind: 'wait', ms: Math.max(deps.pollMs, SIGNER_RETRY_MS) };
    }
    if (!(err instanceof TransferRejectedError)) throw err;
    // Refused before anything was signed or stored (no gas, no tokens, the token refuses a party).
    if (replacing) {
      deps.log?.warn({ ...kind.describe(job), reason: err.reason }, 'replacement refused; keeping the original in flight');
      return { kind: 'wait', ms: deps.pollMs };
    }
    return kind.fail(job, { cause: 'rejected', reason: err.reason, detail: err.message, ...(err.refusal ? { refusal: err.refusal } : {}) });
  }
  if (attempt === 'raced') return { kind: 'wait', ms: deps.pollMs };
  if (attempt === 'closed') return { kind: 'done', status: 'canceled' };
  if ('unknownTransactions' in attempt) {
    const u = attempt.unknownTransactions;
    deps.log?.error(
      {
        ...kind.describe(job),
        network: u.network,
        mode: u.mode,
        wallet: u.address,
        stored_nonce: u.storedNonce.toString(),
        chain_nonce: u.chainNonce.toString(),
      },
      'hot wallet sent transactions the ledger does not know; nothing is signed from it until an operator checks the chain and runs payouts wallet-accept-nonce',
    );
    return { kind: 'wait', ms: Math.max(deps.pollMs, UNKNOWN_TRANSACTIONS_RETRY_MS) };
  }
  prepared.signed?.(attempt);
  hit(deps, 'outbound:after_sign');
  const result = await adapter.broadcast(bytes(attempt));
  hit(deps, 'outbound:after_broadcast');
  if (result.status === 'rejected') {
    // Not on chain. A first offer refused gives its nonce back when it can; otherwise the next step looks the hash up
    // again and re-broadcasts or drops it by the rules above.
    const released = !replacing && (await releaseUnoffered(kind, adapter, job, attempt, result.reason));
    deps.log?.warn(
      { ...kind.describe(job), tx_hash: attempt.txHash, reason: result.reason, detail: result.detail },
      released ? 'broadcast refused; nonce given back, the next step signs afresh' : 'broadcast refused',
    );
    return { kind: 'wait', ms: deps.pollMs };
  }
  await kind.store.markBroadcast(job, attempt);
  if (replacing)
    deps.log?.info({ ...kind.describe(job), tx_hash: attempt.txHash, replaces: replacing.txHash, feeBump }, 'stuck transfer replaced');
  return { kind: 'wait', ms: deps.pollMs };
}

/**
 * Families without account nonces (TRON, Solana): the wallet's recent outgoing transactions against the ledger's
 * attempts (wallet-history-guard.ts). A wait when the wallet sent transactions the ledger does not know, or when the
 * chain cannot be read to tell: nothing is signed unchecked, and nothing fails the job.
 */
async function walletHistoryHold<J, A extends ChainAdapter>(
  kind: OutboundKind<J, A>,
  deps: OutboundDeps,
  adapter: A,
  job: J,
  address: string,
): Promise<StepResult | null> {
  const ref = { ...kind.network(job), address };
  let held: string[] | null;
  try {
    held = await heldWallet(kind.store.wallets, adapter, ref, deps.log, deps.walletLookbackMs);
  } catch (err) {
    deps.log?.error(
      { ...kind.describe(job), network: ref.network, mode: ref.mode, wallet: address, err: (err as Error).message },
      "the wallet's outgoing transactions cannot be read; nothing is signed from it until they can",
    );
    return { kind: 'wait', ms: Math.max(deps.pollMs, UNKNOWN_TRANSACTIONS_RETRY_MS) };
  }
  if (!held || held.length === 0) return null;
  deps.log?.error(
    { ...kind.describe(job), network: ref.network, mode: ref.mode, wallet: address, unknown_transactions: held },
    'hot wallet sent transactions the ledger does not know; nothing is signed from it until an operator records or accepts them (payouts wallet-unknown)',
  );
  return { kind: 'wait', ms: Math.max(deps.pollMs, UNKNOWN_TRANSACTIONS_RETRY_MS) };
}

/** How often a job waiting on a wallet with unknown transactions looks again (the operator's accept clears it). */
const UNKNOWN_TRANSACTIONS_RETRY_MS = 10_000;
/** How long a send waits after the signer was unavailable or refused before asking again. */
const SIGNER_RETRY_MS = 5_000;

/** The signing transaction's answer when the chain is ahead of the wallet's stored nonce: nothing signed. */
interface UnknownTransactions {
  unknownTransactions: { network: string; mode: string; address: string; storedNonce: bigint; chainNonce: bigint };
}

/** Journals the fee a landed-but-failed attempt burnt, against its sender (docs/journal.md). */
async function recordBurnt<J, A extends ChainAdapter>(
  kind: OutboundKind<J, A>,
  adapter: A,
  job: J,
  a: OutboundAttempt,
  block: { height: bigint; hash: string },
  fee: bigint,
): Promise<void> {
  const sender = bytes(a).sender;
  // An attempt recorded from the chain by an operator has no bytes of ours; its sender is not known here.
  if (fee <= 0n || !sender) return;
  await kind.store.recordBurntFee(job, {
    ...kind.network(job),
    txHash: a.txHash,
    sender: adapter.normalizeAddress(sender) ?? sender,
    block: { height: block.height, hash: block.hash },
    fee,
  });
}

function hit(deps: OutboundDeps, name: Failpoint): void {
  (deps.failpoint ?? killAtFailpoint)(name);
}

/** The stored strings are a SignedTransfer (chains/types.ts), written by signAndSend above. */
function bytes(a: OutboundAttempt): SignedTransfer {
  return a.signed as unknown as SignedTransfer;
}
