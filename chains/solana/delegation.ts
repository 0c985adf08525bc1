import { ACCOUNT_SIZE, AccountLayout, createApproveCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { PublicKey, Transaction, type Commitment, type Connection, type VersionedTransactionResponse } from '@solana/web3.js';
import type { ChargeTransfer, ObservedApproval, TokenContract, TokenSymbol, TxFailureReason, WalletTransaction } from '../types.js';
import { accountKeysOf } from './deposit-scanner.js';
import { rentLocked } from './rent.js';

// Subscriptions on Solana: SPL Token delegation. The customer's wallet signs `ApproveChecked` on its associated token
// account (ATA) for the mint, naming the merchant's charger as the account's single delegate for an amount; each charge
// is a `TransferChecked` signed by the charger as that delegate (built by SolanaTokenSender.buildTransferFrom). The
// authorization is account state, not a log: a later approve by the owner (to anyone) replaces it, a revoke clears
// it, and every charge lowers the delegated amount. Reads only, here; no database.

/** SPL Token instruction tags (first data byte) used here. */
const IX = { transfer: 3, approve: 4, transferChecked: 12, approveChecked: 13 } as const;

export interface SolanaDelegationOptions {
  connection: Connection;
  tokens: readonly TokenContract[];
  tokenProgramId: PublicKey;
  /** The adapter's final commitment, at which authorizations are read. */
  finality: 'confirmed' | 'finalized';
}

interface TokenAccountView {
  amount: bigint;
  delegate: string | null;
  delegatedAmount: bigint;
}

export class SolanaDelegation {
  readonly #o: SolanaDelegationOptions;

  constructor(o: SolanaDelegationOptions) {
    this.#o = o;
  }

  #token(symbol: TokenSymbol): TokenContract {
    const t = this.#o.tokens.find((x) => x.symbol === symbol);
    if (!t) throw new Error(`solana: no ${symbol} mint configured`);
    return t;
  }

  ataOf(token: TokenContract, owner: string): PublicKey {
    return getAssociatedTokenAddressSync(new PublicKey(token.address), new PublicKey(owner), true, this.#o.tokenProgramId);
  }

  /** The owner's ATA of `token` at `commitment` (null when it does not exist or is not a token account of that mint). */
  async #read(
    token: TokenContract,
    owner: string,
    commitment: Commitment,
  ): Promise<{ ata: PublicKey; slot: number; account: TokenAccountView | null }> {
    const ata = this.ataOf(token, owner);
    const { context, value } = await this.#o.connection.getAccountInfoAndContext(ata, commitment);
    return { ata, slot: context.slot, account: this.#decode(token, owner, value) };
  }

  /** Delegate and delegated amount of each owner's ATA at the final commitment, 100 accounts per RPC call. */
  async readAuthorizations(
    items: ReadonlyArray<{ token: TokenSymbol; owner: string }>,
  ): Promise<Array<{ spender: string | null; value: bigint } | null>> {
    const out: Array<{ spender: string | null; value: bigint } | null> = [];
    for (let i = 0; i < items.length; i += 100) {
      const chunk = items.slice(i, i + 100).map((it) => ({ token: this.#token(it.token), owner: it.owner }));
      const infos = await this.#o.connection.getMultipleAccountsInfo(
        chunk.map((c) => this.ataOf(c.token, c.owner)),
        this.#o.finality,
      );
      chunk.forEach((c, k) => {
        const a = this.#decode(c.token, c.owner, infos[k] ?? null);
        out.push(a ? { spender: a.delegate, value: a.delegate ? a.delegatedAmount : 0n } : null);
      });
    }
    return out;
  }

  #decode(token: TokenContract, owner: string, value: { owner: PublicKey; data: Buffer } | null): TokenAccountView | null {
    if (!value || !value.owner.equals(this.#o.tokenProgramId) || value.data.length < ACCOUNT_SIZE) return null;
    const raw = AccountLayout.decode(value.data.subarray(0, ACCOUNT_SIZE));
    if (raw.mint.toBase58() !== token.address || raw.owner.toBase58() !== owner) return null;
    return {
      amount: raw.amount,
      delegate: raw.delegateOption === 1 ? raw.delegate.toBase58() : null,
      delegatedAmount: raw.delegatedAmount,
    };
  }

  /** What `spender` may still pull from the owner's ATA: its delegated amount while it is the delegate, else 0. */
  async allowance(symbol: TokenSymbol, owner: string, spender: string, at: 'latest' | 'final' = 'latest'): Promise<bigint> {
    const { account } = await this.#read(this.#token(symbol), owner, at === 'final' ? this.#o.finality : 'confirmed');
    return account && account.delegate === spender ? account.delegatedAmount : 0n;
  }

  async balance(symbol: TokenSymbol, owner: string): Promise<bigint> {
    const { account } = await this.#read(this.#token(symbol), owner, 'confirmed');
    return account?.amount ?? 0n;
  }

  /**
   * The owner's delegation to `spender` at the final commitment. txHash: the newest final transaction on the ATA that
   * approved `spender` (the newest final transaction on the ATA when none of the last few did, e.g. when later
   * transfers pushed it out); `delegate:<ata>:<slot>` when the ATA has no final history at all.
   */
  async readApproval(symbol: TokenSymbol, owner: string, spender: string): Promise<ObservedApproval | null> {
    const token = this.#token(symbol);
    const { ata, slot, account } = await this.#read(token, owner, this.#o.finality);
    if (!account || account.delegate !== spender || account.delegatedAmount <= 0n) return null;
    const conn = this.#o.connection;
    const sigs = (await conn.getSignaturesForAddress(ata, { limit: 10 }, this.#o.finality)).filter((s) => s.slot <= slot);
    let found: { signature: string; slot: number } | null = null;
    for (const s of sigs) {
      if (s.err !== null) continue;
      const tx = await conn.getTransaction(s.signature, { commitment: this.#o.finality, maxSupportedTransactionVersion: 0 });
      if (tx && tx.meta?.err === null && this.#approves(tx, ata.toBase58(), spender)) {
        found = s;
        break;
      }
    }
    found ??= sigs.find((s) => s.err === null) ?? null;
    return {
      txHash: found?.signature ?? `delegate:${ata.toBase58()}:${slot}`,
      logIndex: 0,
      blockHeight: BigInt(found?.slot ?? slot),
      token: token.symbol,
      tokenContract: token.address,
      owner,
      spender,
      value: account.delegatedAmount,
    };
  }

  /** True when `tx` has a top-level Approve or ApproveChecked of `ata` to `delegate`. */
  #approves(tx: VersionedTransactionResponse, ata: string, delegate: string): boolean {
    const keys = accountKeysOf(tx);
    const program = this.#o.tokenProgramId.toBase58();
    return tx.transaction.message.compiledInstructions.some((ix) => {
      if (keys[ix.programIdIndex] !== program) return false;
      const at = ix.data[0] === IX.approve ? 1 : ix.data[0] === IX.approveChecked ? 2 : -1;
      return at > 0 && keys[ix.accountKeyIndexes[0]!] === ata && keys[ix.accountKeyIndexes[at]!] === delegate;
    });
  }

  /** For `getTransferFromOutcome`: a landed charge must have lowered the owner's balance of a registry mint. */
  debitCheck(owner: string): (tx: VersionedTransactionResponse) => { reason: TxFailureReason; detail: string } | null {
    const mints = new Set(this.#o.tokens.map((t) => t.address));
    return (tx) => {
      const pre = tx.meta?.preTokenBalances ?? [];
      const post = tx.meta?.postTokenBalances ?? [];
      const debited = pre.some((b) => {
        if (b.owner !== owner || !mints.has(b.mint)) return false;
        const after = post.find((p) => p.accountIndex === b.accountIndex && p.mint === b.mint);
        return BigInt(b.uiTokenAmount.amount) > BigInt(after?.uiTokenAmount.amount ?? '0');
      });
      return debited ? null : { reason: 'no_transfer_event', detail: `no token balance of ${owner} decreased` };
    };
  }

  /** The TransferChecked (or Transfer) from `owner`'s ATA to `to` (a wallet, through its ATA, or a token account), with
   * the rent the charger (fee payer) locked when the same transaction created `to`'s token account. */
  async findChargeTransfer(hash: string, owner: string, to: string): Promise<ChargeTransfer | null> {
    const conn = this.#o.connection;
    const tx = await conn.getTransaction(hash, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    if (!tx || !tx.meta || tx.meta.err !== null) return null;
    const keys = accountKeysOf(tx);
    const program = this.#o.tokenProgramId.toBase58();
    const instructions = tx.transaction.message.compiledInstructions;
    for (const ix of instructions) {
      if (keys[ix.programIdIndex] !== program) continue;
      const accounts = ix.accountKeyIndexes.map((i) => keys[i]);
      let source: string | undefined;
      let destination: string | undefined;
      let mint: string | undefined;
      // The credited account's index in the transaction's account keys: what names a Solana transfer everywhere
      // (the deposit scanner's logIndex, the token balances' accountIndex), never the instruction's position.
      let credited: number | undefined;
      if (ix.data[0] === IX.transferChecked && ix.data.length >= 10) {
        [source, mint, destination] = accounts;
        credited = ix.accountKeyIndexes[2];
      } else if (ix.data[0] === IX.transfer && ix.data.length >= 9) {
        [source, destination] = accounts;
        credited = ix.accountKeyIndexes[1];
        mint = tx.meta.preTokenBalances?.find((b) => keys[b.accountIndex] === source)?.mint;
      } else continue;
      const token = this.#o.tokens.find((t) => t.address === mint);
      if (!token || source !== this.ataOf(token, owner).toBase58()) continue;
      if (destination !== this.ataOf(token, to).toBase58() && destination !== to) continue;
      const amount = Buffer.from(ix.data).readBigUInt64LE(1);
      const block = await conn.getBlock(tx.slot, {
        commitment: 'confirmed',
        transactionDetails: 'none',
        rewards: false,
        maxSupportedTransactionVersion: 0,
      });
      if (!block || credited === undefined) return null;
      return {
        logIndex: credited,
        amount,
        tokenContract: token.address,
        block: { height: BigInt(tx.slot), hash: block.blockhash, time: new Date((tx.blockTime ?? block.blockTime ?? 0) * 1000) },
        rentPaid: rentLocked(tx),
      };
    }
    return null;
  }

  /**
   * `ApproveChecked(owner's ATA, mint, delegate = spender, authority = owner, amount, decimals)` as a legacy
   * transaction paid by the owner, with a recent blockhash, serialized without signatures: what a Wallet Standard
   * wallet's `solana:signAndSendTransaction` signs and sends.
   */
  async buildApprovalForWallet(symbol: TokenSymbol, owner: string, spender: string, amount: bigint): Promise<WalletTransaction> {
    if (amount < 0n || amount >= 1n << 64n) throw new Error('solana: approval amount out of u64 range');
    const token = this.#token(symbol);
    const ownerKey = new PublicKey(owner);
    const { blockhash, lastValidBlockHeight } = await this.#o.connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: ownerKey, blockhash, lastValidBlockHeight }).add(
      createApproveCheckedInstruction(
        this.ataOf(token, owner),
        new PublicKey(token.address),
        new PublicKey(spender),
        ownerKey,
        amount,
        token.decimals,
        [],
        this.#o.tokenProgramId,
      ),
    );
    return { kind: 'solana', transaction: tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64') };
  }
}
