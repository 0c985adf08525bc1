import type { Profile, TokenSpec } from './profiles.js';

// What the runner does on a chain, whatever the family: read who it is and what the payer holds, and send the
// payer's transactions. Each implementation signs locally with the payer key it was given and never prints it.

export interface ChainIdentity {
  /** EVM/TRON chain id, or the Solana genesis hash. */
  value: string;
  /** How `value` was read, for the report (eth_chainId, getGenesisHash). */
  method: string;
}

export interface PayerChain {
  readonly payer: string;
  identity(): Promise<ChainIdentity>;
  /** The token's decimals as its contract (mint) states them; null when no contract (mint) is at that address. */
  tokenDecimals(token: TokenSpec): Promise<number | null>;
  tokenBalance(token: TokenSpec, owner: string): Promise<bigint>;
  nativeBalance(owner: string): Promise<bigint>;
  /** A payment to a session's deposit address (Solana: a Solana Pay transfer carrying the session's reference). */
  pay(token: TokenSpec, depositAddress: string, amount: bigint): Promise<string>;
  transferToken(token: TokenSpec, to: string, amount: bigint): Promise<string>;
  sendNative(to: string, amount: bigint): Promise<string>;
  /**
   * Authorizes `spender` for `amount` as the subscription page would: ERC-20/TRC-20 approve (after approve(0) when
   * `resetFirst`), or signing and sending the transactions the page prepared (`walletTransactions`).
   */
  authorize(
    token: TokenSpec,
    spender: string,
    amount: bigint,
    o: { resetFirst: boolean; walletTransactions: unknown[] },
  ): Promise<string[]>;
  /** Whether a transaction succeeded, read from the chain (receipt status, meta.err, TRON receipt result). */
  succeeded(hash: string): Promise<boolean>;
  close(): Promise<void>;
}

export type ChainFactory = (profile: Profile, env: Record<string, string | undefined>) => Promise<PayerChain>;

/** The payer secret's variable names, in the order they are tried. */
export function payerSecretNames(profile: Profile): string[] {
  const p = profile.envPrefix;
  if (profile.family === 'solana') return [`${p}_PAYER_KEYPAIR`, `${p}_PAYER_KEY`];
  return [`${p}_PAYER_KEY`, `${p}_PAYER_MNEMONIC`];
}
