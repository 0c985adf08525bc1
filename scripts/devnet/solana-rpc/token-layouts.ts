// SPL Token / Token-2022 account layouts as the fake Solana RPC reads them: raw amounts as bigint, and the
// `jsonParsed` shapes that a validator's account-decoder produces for token accounts and mints.
import { PublicKey } from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  AccountLayout,
  AccountState,
  MINT_SIZE,
  MintLayout,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';

export const TOKEN_PROGRAMS = new Set([TOKEN_PROGRAM_ID.toBase58(), TOKEN_2022_PROGRAM_ID.toBase58()]);

export interface TokenAccountState {
  mint: string;
  owner: string;
  amount: bigint;
  state: 'initialized' | 'frozen';
  delegate: string | null;
  delegatedAmount: bigint;
  closeAuthority: string | null;
  isNative: boolean;
}

export interface MintState {
  decimals: number;
  supply: bigint;
  mintAuthority: string | null;
  freezeAuthority: string | null;
  isInitialized: boolean;
}

/** A token account is 165 bytes (Token-2022 adds extensions after byte 165 with account type 2 at byte 165). */
export function decodeTokenAccount(programOwner: string, data: Uint8Array): TokenAccountState | null {
  if (!TOKEN_PROGRAMS.has(programOwner) || data.length < ACCOUNT_SIZE) return null;
  if (data.length > ACCOUNT_SIZE && data[ACCOUNT_SIZE] !== 2) return null;
  const raw = AccountLayout.decode(Buffer.from(data.subarray(0, ACCOUNT_SIZE)));
  if (raw.state === AccountState.Uninitialized) return null;
  return {
    mint: raw.mint.toBase58(),
    owner: raw.owner.toBase58(),
    amount: raw.amount,
    state: raw.state === AccountState.Frozen ? 'frozen' : 'initialized',
    delegate: raw.delegateOption ? raw.delegate.toBase58() : null,
    delegatedAmount: raw.delegatedAmount,
    closeAuthority: raw.closeAuthorityOption ? raw.closeAuthority.toBase58() : null,
    isNative: raw.isNativeOption === 1,
  };
}

export function decodeMint(programOwner: string, data: Uint8Array): MintState | null {
  if (!TOKEN_PROGRAMS.has(programOwner) || data.length < MINT_SIZE) return null;
  // Token-2022 mints with extensions are padded to 165 bytes and carry account type 1 at byte 165.
  if (data.length > MINT_SIZE && (data.length <= ACCOUNT_SIZE || data[ACCOUNT_SIZE] !== 1)) return null;
  const raw = MintLayout.decode(Buffer.from(data.subarray(0, MINT_SIZE)));
  if (!raw.isInitialized) return null;
  return {
    decimals: raw.decimals,
    supply: raw.supply,
    mintAuthority: raw.mintAuthorityOption ? raw.mintAuthority.toBase58() : null,
    freezeAuthority: raw.freezeAuthorityOption ? raw.freezeAuthority.toBase58() : null,
    isInitialized: raw.isInitialized,
  };
}

export function encodeMint(m: {
  decimals: number;
  supply?: bigint;
  mintAuthority?: string | null;
  freezeAuthority?: string | null;
}): Buffer {
  const data = Buffer.alloc(MINT_SIZE);
  MintLayout.encode(
    {
      mintAuthorityOption: m.mintAuthority ? 1 : 0,
      mintAuthority: m.mintAuthority ? new PublicKey(m.mintAuthority) : PublicKey.default,
      supply: m.supply ?? 0n,
      decimals: m.decimals,
      isInitialized: true,
      freezeAuthorityOption: m.freezeAuthority ? 1 : 0,
      freezeAuthority: m.freezeAuthority ? new PublicKey(m.freezeAuthority) : PublicKey.default,
    },
    data,
  );
  return data;
}

export function encodeTokenAccount(a: {
  mint: string;
  owner: string;
  amount: bigint;
  delegate?: string | null;
  delegatedAmount?: bigint;
  /** Frozen by the mint's freeze authority: every transfer from or to it fails (SPL Token error 17, AccountFrozen). */
  frozen?: boolean;
}): Buffer {
  const data = Buffer.alloc(ACCOUNT_SIZE);
  AccountLayout.encode(
    {
      mint: new PublicKey(a.mint),
      owner: new PublicKey(a.owner),
      amount: a.amount,
      delegateOption: a.delegate ? 1 : 0,
      delegate: a.delegate ? new PublicKey(a.delegate) : PublicKey.default,
      state: a.frozen ? AccountState.Frozen : AccountState.Initialized,
      isNativeOption: 0,
      isNative: 0n,
      delegatedAmount: a.delegatedAmount ?? 0n,
      closeAuthorityOption: 0,
      closeAuthority: PublicKey.default,
    },
    data,
  );
  return data;
}

/** The RPC's UiTokenAmount: `amount` is the raw base-unit string; the float is informational only. */
export function uiTokenAmount(amount: bigint, decimals: number) {
  const s = amount.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const frac = decimals > 0 ? s.slice(s.length - decimals).replace(/0+$/, '') : '';
  const uiAmountString = frac ? `${whole}.${frac}` : whole;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

export function parsedTokenAccount(acc: TokenAccountState, decimals: number, space: number, programOwner: string) {
  const info: Record<string, unknown> = {
    isNative: acc.isNative,
    mint: acc.mint,
    owner: acc.owner,
    state: acc.state,
    tokenAmount: uiTokenAmount(acc.amount, decimals),
  };
  if (acc.delegate) {
    info.delegate = acc.delegate;
    info.delegatedAmount = uiTokenAmount(acc.delegatedAmount, decimals);
  }
  if (acc.closeAuthority) info.closeAuthority = acc.closeAuthority;
  return { program: programName(programOwner), parsed: { info, type: 'account' }, space };
}

export function parsedMint(m: MintState, space: number, programOwner: string) {
  return {
    program: programName(programOwner),
    parsed: {
      info: {
        decimals: m.decimals,
        freezeAuthority: m.freezeAuthority,
        isInitialized: m.isInitialized,
        mintAuthority: m.mintAuthority,
        supply: m.supply.toString(),
      },
      type: 'mint',
    },
    space,
  };
}

function programName(programOwner: string): string {
  return programOwner === TOKEN_2022_PROGRAM_ID.toBase58() ? 'spl-token-2022' : 'spl-token';
}
