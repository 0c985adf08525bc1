// LiteSVM's transaction errors mapped to the JSON a validator's RPC returns for `TransactionError`
// (`"BlockhashNotFound"`, `{"InstructionError":[0,{"Custom":1}]}`, ...), as documented for `err` fields.

const TRANSACTION_ERRORS = [
  'AccountInUse',
  'AccountLoadedTwice',
  'AccountNotFound',
  'ProgramAccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'CallChainTooDeep',
  'MissingSignatureForFee',
  'InvalidAccountIndex',
  'SignatureFailure',
  'InvalidProgramForExecution',
  'SanitizeFailure',
  'ClusterMaintenance',
  'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit',
  'UnsupportedVersion',
  'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'InvalidRentPayingAccount',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit',
  'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit',
  'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit',
  'CommitCancelled',
] as const;

const INSTRUCTION_ERRORS = [
  'GenericError',
  'InvalidArgument',
  'InvalidInstructionData',
  'InvalidAccountData',
  'AccountDataTooSmall',
  'InsufficientFunds',
  'IncorrectProgramId',
  'MissingRequiredSignature',
  'AccountAlreadyInitialized',
  'UninitializedAccount',
  'UnbalancedInstruction',
  'ModifiedProgramId',
  'ExternalAccountLamportSpend',
  'ExternalAccountDataModified',
  'ReadonlyLamportChange',
  'ReadonlyDataModified',
  'DuplicateAccountIndex',
  'ExecutableModified',
  'RentEpochModified',
  'NotEnoughAccountKeys',
  'AccountDataSizeChanged',
  'AccountNotExecutable',
  'AccountBorrowFailed',
  'AccountBorrowOutstanding',
  'DuplicateAccountOutOfSync',
  'InvalidError',
  'ExecutableDataModified',
  'ExecutableLamportChange',
  'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId',
  'CallDepth',
  'MissingAccount',
  'ReentrancyNotAllowed',
  'MaxSeedLengthExceeded',
  'InvalidSeeds',
  'InvalidRealloc',
  'ComputationalBudgetExceeded',
  'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure',
  'ProgramFailedToComplete',
  'ProgramFailedToCompile',
  'Immutable',
  'IncorrectAuthority',
  'AccountNotRentExempt',
  'InvalidAccountOwner',
  'ArithmeticOverflow',
  'UnsupportedSysvar',
  'IllegalOwner',
  'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits',
  'BorshIoError',
] as const;

export type TransactionErrorJson = string | Record<string, unknown>;

interface NamedObject {
  constructor: { name: string };
  [k: string]: unknown;
}

function instructionError(e: unknown): unknown {
  if (typeof e === 'number') return INSTRUCTION_ERRORS[e] ?? 'GenericError';
  const o = e as NamedObject;
  if (o.constructor.name === 'InstructionErrorCustom') return { Custom: o.code };
  if (o.constructor.name === 'InstructionErrorBorshIo') return 'BorshIoError';
  return 'GenericError';
}

export function transactionErrorJson(e: unknown): TransactionErrorJson {
  if (typeof e === 'number') return TRANSACTION_ERRORS[e] ?? 'SanitizeFailure';
  const o = e as NamedObject;
  switch (o.constructor.name) {
    case 'TransactionErrorInstructionError':
      return { InstructionError: [o.index, instructionError((o.err as () => unknown)())] };
    case 'TransactionErrorDuplicateInstruction':
      return { DuplicateInstruction: o.index };
    case 'TransactionErrorInsufficientFundsForRent':
      return { InsufficientFundsForRent: { account_index: o.accountIndex } };
    case 'TransactionErrorProgramExecutionTemporarilyRestricted':
      return { ProgramExecutionTemporarilyRestricted: { account_index: o.accountIndex } };
    default:
      return 'SanitizeFailure';
  }
}

/** Errors raised while executing instructions put the transaction in a block (fee charged, `err` recorded);
 * every other error means a leader would never have included it. */
export function landsOnChain(err: TransactionErrorJson): boolean {
  return (
    typeof err === 'object' &&
    ('InstructionError' in err || 'InsufficientFundsForRent' in err || 'ProgramExecutionTemporarilyRestricted' in err)
  );
}

/** The message a validator puts in a -32002 preflight error. */
export function describeTransactionError(err: TransactionErrorJson): string {
  if (typeof err === 'string') {
    if (err === 'BlockhashNotFound') return 'Blockhash not found';
    if (err === 'AlreadyProcessed') return 'This transaction has already been processed';
    return err;
  }
  const ie = (err as { InstructionError?: [number, unknown] }).InstructionError;
  if (ie) {
    const [index, inner] = ie;
    if (inner && typeof inner === 'object' && 'Custom' in inner) {
      return `Error processing Instruction ${index}: custom program error: 0x${Number((inner as { Custom: number }).Custom).toString(16)}`;
    }
    return `Error processing Instruction ${index}: ${String(inner)}`;
  }
  return JSON.stringify(err);
}
