import {
  ACCOUNT_SIZE,
  AccountLayout,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import {
  ComputeBudgetProgram,
  PublicKey,
  TransactionMessage,
  VersionedMessage,
  VersionedTransaction,
  type Connection,
  type Finality,
  type TransactionInstruction,
  type VersionedTransactionResponse,
} from '@solana/web3.js';
import {
  TransferRejectedError,
  type BroadcastResult,
  type KeyPath,
  type SendFailureReason,
  type SignedTransfer,
  type TokenContract,
  type TokenTransferRequest,
  type TxOutcome,
  type TxFailureReason,
  type TxSigner,
  type UnsignedTransfer,
  type NetworkId,
} from '../types.js';
import { soleNetworkOfFamily } from '../registry.js';
import { base58Encode } from './base58.js';
import { solanaRpcCall, SolanaRpcError } from './json-rpc.js';

// Token payouts on Solana (refunds, charges, deposit-account setup). The pipeline is build -> sign -> persist ->
// broadcast, then broadcast the SAME bytes again until the outcome is known. A Solana transaction is bound to a
// recent blockhash and can only land while the block height is <= its lastValidBlockHeight (persisted as
// validUntilHeight), so a new transaction may be signed only once `isExpired` is true: the signature is unknown
// AND the finalized block height is past lastValidBlockHeight. Before that, re-signing could pay twice.

export interface SolanaSenderOptions {
  /** The network it sends on (the adapter's); default the Solana family's only network. */
  network?: NetworkId;
  connection: Connection;
  rpcUrl: string;
  /** Transport of the raw sendTransaction calls (the endpoints' failover, chains/solana/failover-connection.ts). */
  rpcFetch?: typeof fetch;
  tokens: readonly TokenContract[];
  tokenProgramId: PublicKey;
  finality: Finality;
  computeUnitLimit: number;
  /** Bounds on the compute-unit price (micro-lamports per CU) taken from getRecentPrioritizationFees. */
  minComputeUnitPrice: bigint;
  maxComputeUnitPrice: bigint;
}

/** What `UnsignedTransfer.body` holds for Solana (strings only: it is persisted as JSON). */
export interface SolanaUnsignedBody {
  /** Serialised v0 message, base64. */
  message: string;
  lastValidBlockHeight: string;
  /** Signer address -> key path, for every required signature. */
  signers: Record<string, KeyPath>;
}

export class SolanaTokenSender {
  readonly #o: SolanaSenderOptions;

  /** The network it sends on: named in every transfer it builds or signs. */
  readonly network: NetworkId;

  constructor(o: SolanaSenderOptions) {
    this.#o = o;
    this.network = o.network ?? soleNetworkOfFamily('solana');
  }

  #token(symbol: string): TokenContract {
    const t = this.#o.tokens.find((x) => x.symbol === symbol);
    if (!t) throw new TransferRejectedError('invalid', `solana: no ${symbol} mint configured`);
    return t;
  }

  /** Transfer from the hot wallet's ATA to `to` (a wallet: its ATA is created idempotently; or a token account of
   * the mint itself). The hot wallet pays the fee and, when needed, the destination ATA's rent. */
  build(request: TokenTransferRequest): Promise<UnsignedTransfer<SolanaUnsignedBody>> {
    return this.#buildTransferChecked(request, null);
  }

  /** A charge: `TransferChecked` from `owner`'s ATA, signed by `request.from` as the account's delegate (SPL Token
   * `Approve`), to `request.to` as in `build`. The delegate pays the fee and, when needed, the destination ATA's rent. */
  buildTransferFrom(request: TokenTransferRequest, owner: string): Promise<UnsignedTransfer<SolanaUnsignedBody>> {
    let ownerKey: PublicKey;
    try {
      ownerKey = new PublicKey(owner);
    } catch {
      throw new TransferRejectedError('invalid', 'owner is not a Solana address');
    }
    return this.#buildTransferChecked(request, ownerKey);
  }

  /** The one transfer builder: from the ATA of `owner` (the signer's own when null) with `request.from` as authority
   * (owner or delegate) and fee payer. Refuses, before anything is signed, what would fail on chain. */
  async #buildTransferChecked(request: TokenTransferRequest, owner: PublicKey | null): Promise<UnsignedTransfer<SolanaUnsignedBody>> {
    if (request.amount <= 0n) throw new TransferRejectedError('invalid', 'amount must be positive');
    const conn = this.#o.connection;
    const token = this.#token(request.token);
    const mint = new PublicKey(token.address);
    const from = new PublicKey(request.from.address);
    let to: PublicKey;
    try {
      to = new PublicKey(request.to);
    } catch {
      throw new TransferRejectedError('invalid', 'destination is not a Solana address');
    }
    const delegated = owner !== null;
    const source = getAssociatedTokenAddressSync(mint, owner ?? from, true, this.#o.tokenProgramId);
    const [sourceInfo, toInfo, lamports] = await Promise.all([
      conn.getAccountInfo(source, 'confirmed'),
      conn.getAccountInfo(to, 'confirmed'),
      conn.getBalance(from, 'confirmed'),
    ]);
    const acc =
      sourceInfo && sourceInfo.owner.equals(this.#o.tokenProgramId) && sourceInfo.data.length >= ACCOUNT_SIZE
        ? AccountLayout.decode(sourceInfo.data)
        : null;
    const balance = acc?.amount ?? 0n;
    if (balance < request.amount) {
      const holder = delegated ? "the owner's token account" : 'hot wallet';
      throw new TransferRejectedError('insufficient_token_balance', `${holder} holds ${balance} base units, needs ${request.amount}`);
    }
    if (delegated) {
      const allowed = acc && acc.delegateOption === 1 && acc.delegate.equals(from) ? acc.delegatedAmount : 0n;
      if (allowed < request.amount) {
        throw new TransferRejectedError(
          'simulation_reverted',
          `insufficient_allowance: ${from.toBase58()} is delegated ${allowed} base units, needs ${request.amount}`,
        );
      }
    }
    const ixs: TransactionInstruction[] = [];
    let destination: PublicKey;
    let rent = 0;
    const toIsTokenAccount = toInfo !== null && toInfo.owner.equals(this.#o.tokenProgramId) && toInfo.data.length >= ACCOUNT_SIZE;
    if (toIsTokenAccount) {
      const dest = AccountLayout.decode(toInfo.data);
      if (!dest.mint.equals(mint)) throw new TransferRejectedError('invalid', 'destination token account holds another mint');
      destination = to;
    } else {
      destination = getAssociatedTokenAddressSync(mint, to, true, this.#o.tokenProgramId);
      ixs.push(createAssociatedTokenAccountIdempotentInstruction(from, destination, to, mint, this.#o.tokenProgramId));
      if (!(await conn.getAccountInfo(destination, 'confirmed'))) rent = await conn.getMinimumBalanceForRentExemption(ACCOUNT_SIZE);
    }
    ixs.push(createTransferCheckedInstruction(source, mint, destination, from, request.amount, token.decimals, [], this.#o.tokenProgramId));
    const price = await this.computeUnitPrice([from, source, destination], request.feeBumpPercent ?? 0);
    const maxFee = 5_000 + Number((price * BigInt(this.#o.computeUnitLimit) + 999_999n) / 1_000_000n);
    if (lamports < maxFee + rent) {
      const payer = delegated ? 'charger' : 'hot wallet';
      throw new TransferRejectedError(
        'insufficient_gas',
        `${payer} ${from.toBase58()} has ${lamports} lamports, needs ${maxFee + rent} for fee and rent`,
        undefined,
        { address: from.toBase58(), balance: BigInt(lamports), needed: BigInt(maxFee + rent) },
      );
    }
    return this.#compile(request, from, ixs, price, { [from.toBase58()]: request.from.key });
  }

  /** Creates the deposit owner's ATA for `token`, paid by `feePayer`: done when the payer picks Solana on the
   * hosted page, so the payer's wallet pays no rent (the rent is reclaimed when the swept account is closed). */
  async buildDepositAccountSetup(
    feePayer: { key: KeyPath; address: string },
    depositOwner: string,
    token: TokenContract['symbol'],
  ): Promise<UnsignedTransfer<SolanaUnsignedBody>> {
    const t = this.#token(token);
    const payer = new PublicKey(feePayer.address);
    const owner = new PublicKey(depositOwner);
    const mint = new PublicKey(t.address);
    const ata = getAssociatedTokenAddressSync(mint, owner, true, this.#o.tokenProgramId);
    const ix = createAssociatedTokenAccountIdempotentInstruction(payer, ata, owner, mint, this.#o.tokenProgramId);
    const price = await this.computeUnitPrice([payer, ata], 0);
    // Refused before signing when the fee payer cannot cover fee and rent: nothing is stored or sent.
    const conn = this.#o.connection;
    const [lamports, exists] = await Promise.all([conn.getBalance(payer, 'confirmed'), conn.getAccountInfo(ata, 'confirmed')]);
    const rent = exists ? 0 : await conn.getMinimumBalanceForRentExemption(ACCOUNT_SIZE);
    const maxFee = 5_000 + Number((price * BigInt(this.#o.computeUnitLimit) + 999_999n) / 1_000_000n);
    if (lamports < maxFee + rent)
      throw new TransferRejectedError(
        'insufficient_gas',
        `fee payer ${payer.toBase58()} has ${lamports} lamports, needs ${maxFee + rent} for fee and rent`,
        undefined,
        { address: payer.toBase58(), balance: BigInt(lamports), needed: BigInt(maxFee + rent) },
      );
    const request: TokenTransferRequest = { from: feePayer, to: depositOwner, token, amount: 0n };
    return this.#compile(request, payer, [ix], price, { [payer.toBase58()]: feePayer.key });
  }

  /** Median of the recent per-slot minimum prices paid by transactions writing these accounts, bumped and clamped. */
  async computeUnitPrice(writable: PublicKey[], bumpPercent: number): Promise<bigint> {
    const fees = await this.#o.connection.getRecentPrioritizationFees({ lockedWritableAccounts: writable });
    const sorted = fees.map((f) => BigInt(f.prioritizationFee)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    let price = sorted.length ? sorted[Math.floor(sorted.length / 2)]! : 0n;
    price = (price * BigInt(100 + Math.max(0, Math.floor(bumpPercent)))) / 100n;
    if (price < this.#o.minComputeUnitPrice) price = this.#o.minComputeUnitPrice;
    if (price > this.#o.maxComputeUnitPrice) price = this.#o.maxComputeUnitPrice;
    return price;
  }

  async #compile(
    request: TokenTransferRequest,
    payer: PublicKey,
    ixs: TransactionInstruction[],
    price: bigint,
    signers: Record<string, KeyPath>,
  ): Promise<UnsignedTransfer<SolanaUnsignedBody>> {
    const { blockhash, lastValidBlockHeight } = await this.#o.connection.getLatestBlockhash('confirmed');
    const message = new TransactionMessage({
      payerKey: payer,
      recentBlockhash: blockhash,
      instructions: [
        ComputeBudgetProgram.setComputeUnitLimit({ units: this.#o.computeUnitLimit }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: price }),
        ...ixs,
      ],
    }).compileToV0Message();
    const body: SolanaUnsignedBody = {
      message: Buffer.from(message.serialize()).toString('base64'),
      lastValidBlockHeight: String(lastValidBlockHeight),
      signers,
    };
    return { network: this.network, request, body };
  }

  async sign(unsigned: UnsignedTransfer<SolanaUnsignedBody>, signer: TxSigner): Promise<SignedTransfer> {
    const body = unsigned.body;
    const bytes = Buffer.from(body.message, 'base64');
    const message = VersionedMessage.deserialize(bytes);
    const tx = new VersionedTransaction(message);
    const required = message.staticAccountKeys.slice(0, message.header.numRequiredSignatures);
    for (const [i, key] of required.entries()) {
      const path = body.signers[key.toBase58()];
      if (!path) throw new Error(`solana: no key path for required signer ${key.toBase58()}`);
      const pub = await signer.publicKey(path);
      if (!new PublicKey(pub).equals(key)) throw new Error(`solana: key ${path.path} is not ${key.toBase58()}`);
      tx.signatures[i] = await signer.signEd25519(path, bytes);
    }
    return {
      network: this.network,
      hash: signatureOf(tx),
      raw: Buffer.from(tx.serialize()).toString('base64'),
      sender: required[0]!.toBase58(),
      nonce: null,
      validUntilHeight: body.lastValidBlockHeight,
      validUntilTimeMs: null,
    };
  }

  /** Sends the persisted bytes. Idempotent: a signature the cluster already has answers `already_known`; bytes
   * whose blockhash has expired (and that never landed) answer `rejected`/`expired`, the only case to re-sign. */
  async broadcast(signed: SignedTransfer): Promise<BroadcastResult> {
    if (await this.#known(signed.hash)) return { status: 'already_known' };
    try {
      await solanaRpcCall(
        this.#o.rpcUrl,
        'sendTransaction',
        [signed.raw, { encoding: 'base64', preflightCommitment: 'confirmed', maxRetries: 0 }],
        undefined,
        this.#o.rpcFetch,
      );
      return { status: 'accepted' };
    } catch (e) {
      if (!(e instanceof SolanaRpcError)) throw e;
      const err = (e.data as { err?: unknown } | undefined)?.err;
      if (err === 'AlreadyProcessed') return { status: 'already_known' };
      if (err === 'BlockhashNotFound') {
        if (await this.isExpired(signed))
          return { status: 'rejected', reason: 'expired', detail: 'blockhash expired before the transaction landed' };
        // A lagging RPC node may not know a fresh blockhash yet: forward without preflight, the bytes stay valid.
        await solanaRpcCall(
          this.#o.rpcUrl,
          'sendTransaction',
          [signed.raw, { encoding: 'base64', skipPreflight: true, maxRetries: 0 }],
          undefined,
          this.#o.rpcFetch,
        );
        return { status: 'accepted' };
      }
      if (e.code === -32002) {
        const last = VersionedTransaction.deserialize(Buffer.from(signed.raw, 'base64')).message.compiledInstructions.length - 1;
        return { status: 'rejected', reason: failureReason(err, last), detail: e.message };
      }
      throw e;
    }
  }

  /** True only when these bytes can never land: unknown to the cluster and the finalized block height is past their
   * lastValidBlockHeight. Compare heights here, never against slots (a slot is always ahead of the block height). */
  async isExpired(signed: SignedTransfer): Promise<boolean> {
    if (signed.validUntilHeight === null) return false;
    const height = await this.#o.connection.getBlockHeight('finalized');
    if (BigInt(height) <= BigInt(signed.validUntilHeight)) return false;
    return !(await this.#known(signed.hash));
  }

  async #known(signature: string): Promise<boolean> {
    const st = await this.#o.connection.getSignatureStatuses([signature], { searchTransactionHistory: true });
    return st.value[0] !== null && st.value[0] !== undefined;
  }

  /** Outcome of a sent transaction. `check`, given the landed transaction, may turn a success into a failure (a
   * charge that moved nothing from the customer). */
  async outcome(
    hash: string,
    check?: (tx: VersionedTransactionResponse) => { reason: TxFailureReason; detail: string } | null,
  ): Promise<TxOutcome> {
    const conn = this.#o.connection;
    const st = (await conn.getSignatureStatuses([hash], { searchTransactionHistory: true })).value[0];
    if (!st) return { status: 'unknown' };
    if (st.confirmationStatus === 'processed' || st.confirmationStatus === undefined) return { status: 'pending' };
    const tx = await conn.getTransaction(hash, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    if (!tx) return { status: 'pending' };
    const final = st.confirmationStatus === 'finalized' || this.#o.finality === 'confirmed';
    const confirmations = st.confirmations ?? (await conn.getSlot('processed')) - st.slot;
    const block = { height: BigInt(st.slot), hash: String(st.slot), time: new Date((tx.blockTime ?? 0) * 1000) };
    const fee = BigInt(tx.meta?.fee ?? 0);
    if (st.err !== null) {
      return {
        status: 'failed',
        block,
        confirmations: BigInt(confirmations),
        final,
        reason: 'reverted',
        detail: JSON.stringify(st.err),
        fee,
      };
    }
    const failure = check?.(tx) ?? null;
    if (failure) return { status: 'failed', block, confirmations: BigInt(confirmations), final, ...failure, fee };
    return { status: 'succeeded', block, confirmations: BigInt(confirmations), final, fee: BigInt(tx.meta?.fee ?? 0) };
  }
}

function signatureOf(tx: VersionedTransaction): string {
  return base58Encode(tx.signatures[0]!);
}

/** Preflight failure -> the interface's reason, in one exhaustive place. */
function failureReason(err: unknown, transferIndex: number): SendFailureReason {
  if (err === 'InsufficientFundsForFee' || err === 'InsufficientFundsForRent') return 'insufficient_gas';
  if (err && typeof err === 'object') {
    if ('InsufficientFundsForRent' in err) return 'insufficient_gas';
    const ie = (err as { InstructionError?: [number, unknown] }).InstructionError;
    if (ie) {
      const inner = ie[1] as { Custom?: number } | string;
      // SPL Token error 1 is InsufficientFunds; the system program's 1 (in ATA creation) is lamports.
      if (typeof inner === 'object' && inner.Custom === 1)
        return ie[0] === transferIndex ? 'insufficient_token_balance' : 'insufficient_gas';
      return 'simulation_reverted';
    }
  }
  if (err === 'BlockhashNotFound') return 'expired';
  if (err === 'SignatureFailure' || err === 'SanitizeFailure') return 'invalid';
  return 'other';
}
