// A token transfer into one of our addresses as a watcher saw it in a block: what a deposit row and its journal
// entry are made from (payments/deposits.ts records it; journal/observed-movements.ts journals the others).
export interface ObservedDeposit {
  txHash: string;
  logIndex: number;
  blockHeight: bigint;
  blockHash: string;
  blockTime: Date;
  token: string;
  tokenContract: string;
  from: string | null;
  to: string;
  amount: bigint;
}
