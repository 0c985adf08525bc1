import type { TxFailureReason } from '../types.js';

// Raw TRON execution results to the adapter's enums, in one place. `receipt.result` is the contractResult enum of
// java-tron's Tron.proto (Transaction.Result.contractResult); `contractRet` in gettransactionbyid carries the same
// value. Only SUCCESS can be a success; every other value is a failure with its own reason.

export const CONTRACT_RESULTS = [
  'DEFAULT',
  'SUCCESS',
  'REVERT',
  'BAD_JUMP_DESTINATION',
  'OUT_OF_MEMORY',
  'PRECOMPILED_CONTRACT',
  'STACK_TOO_SMALL',
  'STACK_TOO_LARGE',
  'ILLEGAL_OPERATION',
  'STACK_OVERFLOW',
  'OUT_OF_ENERGY',
  'OUT_OF_TIME',
  'JVM_STACK_OVER_FLOW',
  'UNKNOWN',
  'TRANSFER_FAILED',
  'INVALID_CODE',
] as const;
export type ContractResult = (typeof CONTRACT_RESULTS)[number];

export function parseContractResult(text: string | undefined): ContractResult {
  return (CONTRACT_RESULTS as readonly string[]).includes(text ?? '') ? (text as ContractResult) : 'UNKNOWN';
}

/** null = success; otherwise the failure reason and an operator-readable detail. */
export function classifyContractResult(r: ContractResult): { reason: TxFailureReason; detail: string } | null {
  switch (r) {
    case 'SUCCESS':
      return null;
    case 'OUT_OF_ENERGY':
      return {
        reason: 'out_of_energy',
        detail:
          'OUT_OF_ENERGY: the hot wallet ran out of energy; its staked energy plus the TRX it could burn (bounded by fee_limit) did not cover execution. Stake or rent energy, add TRX, or raise the fee_limit ceiling.',
      };
    case 'REVERT':
      return {
        reason: 'reverted',
        detail: 'REVERT: the token contract refused the transfer (balance, blacklist or pause); nothing was moved.',
      };
    case 'OUT_OF_TIME':
      return { reason: 'reverted', detail: 'OUT_OF_TIME: execution exceeded the TVM time limit; nothing was moved.' };
    case 'TRANSFER_FAILED':
      return { reason: 'reverted', detail: 'TRANSFER_FAILED: a value transfer inside the call failed; nothing was moved.' };
    case 'DEFAULT':
    case 'UNKNOWN':
    case 'BAD_JUMP_DESTINATION':
    case 'OUT_OF_MEMORY':
    case 'PRECOMPILED_CONTRACT':
    case 'STACK_TOO_SMALL':
    case 'STACK_TOO_LARGE':
    case 'ILLEGAL_OPERATION':
    case 'STACK_OVERFLOW':
    case 'JVM_STACK_OVER_FLOW':
    case 'INVALID_CODE':
      return { reason: 'reverted', detail: `${r}: the TVM aborted the call; nothing was moved.` };
    default: {
      const never: never = r;
      return never;
    }
  }
}

/** Broadcast reply codes (GrpcAPI.Return.response_code) and what they mean for a payout. */
export type BroadcastCode =
  | 'SUCCESS'
  | 'SIGERROR'
  | 'CONTRACT_VALIDATE_ERROR'
  | 'CONTRACT_EXE_ERROR'
  | 'BANDWITH_ERROR'
  | 'DUP_TRANSACTION_ERROR'
  | 'TAPOS_ERROR'
  | 'TOO_BIG_TRANSACTION_ERROR'
  | 'TRANSACTION_EXPIRATION_ERROR'
  | 'SERVER_BUSY'
  | 'NO_CONNECTION'
  | 'NOT_ENOUGH_EFFECTIVE_CONNECTION'
  | 'BLOCK_UNSOLIDIFIED'
  | 'OTHER_ERROR';

export type BroadcastVerdict =
  | { kind: 'accepted' }
  | { kind: 'duplicate' }
  | { kind: 'retry' }
  | {
      kind: 'rejected';
      reason: 'insufficient_gas' | 'expired' | 'invalid' | 'simulation_reverted' | 'insufficient_token_balance' | 'other';
    };

export function classifyBroadcast(code: string | undefined, message: string): BroadcastVerdict {
  const c = (code ?? 'OTHER_ERROR') as BroadcastCode;
  switch (c) {
    case 'SUCCESS':
      return { kind: 'accepted' };
    case 'DUP_TRANSACTION_ERROR':
      return { kind: 'duplicate' };
    case 'SERVER_BUSY':
    case 'NO_CONNECTION':
    case 'NOT_ENOUGH_EFFECTIVE_CONNECTION':
    case 'BLOCK_UNSOLIDIFIED':
      return { kind: 'retry' };
    case 'TRANSACTION_EXPIRATION_ERROR':
      return { kind: 'rejected', reason: 'expired' };
    case 'BANDWITH_ERROR':
      return { kind: 'rejected', reason: 'insufficient_gas' };
    case 'CONTRACT_VALIDATE_ERROR':
      return {
        kind: 'rejected',
        reason: /balance is not sufficient|insufficient|not enough/i.test(message) ? 'insufficient_gas' : 'invalid',
      };
    case 'CONTRACT_EXE_ERROR':
      return { kind: 'rejected', reason: 'simulation_reverted' };
    case 'SIGERROR':
    case 'TAPOS_ERROR':
    case 'TOO_BIG_TRANSACTION_ERROR':
      return { kind: 'rejected', reason: 'invalid' };
    case 'OTHER_ERROR':
      return { kind: 'rejected', reason: 'other' };
    default: {
      const never: never = c;
      void never;
      return { kind: 'rejected', reason: 'other' };
    }
  }
}
