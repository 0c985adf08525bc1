import { createApproveCheckedInstruction, createRevokeInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { Mnemonic } from 'ethers';
import { deriveEd25519Seed } from '../../src/signer/slip10-ed25519.js';
import { SOLANA_SIM_DECIMALS, type SimSolana, sendUntilLanded } from './env/solana.js';
import type { SubscriptionCustomer } from './scenario-subscriptions.js';

// Subscriptions on Solana in a seed (scenario-subscriptions.ts runs the flow; docs/solana.md "Subscriptions
// (delegation)"): the customer is an ed25519 keypair of its own, given SOL by an airdrop on the LiteSVM endpoint and
// its tokens by a real transfer from the simulator's payer (which creates its associated token account). It
// authorizes the page's spender, the merchant's charger, with SPL Token `ApproveChecked` on that account (delegate =
// the charger, amount = the page's allowance), as a Wallet Standard wallet signs the transaction the page prepares;
// it revokes with `Revoke` (the delegate cleared) and lowers with `ApproveChecked` of less than a period. The service
// reads the delegation at `finalized`. Every transaction goes through `sendUntilLanded` (env/solana.ts): signed again
// with a fresh blockhash once the old one can no longer land, so the chain faults (dropped transactions, expired
// blockhashes, a stalled leader) delay an approval but never lose or double it. After the failed renewal the customer
// authorizes again through the page (its selection, then `ApproveChecked` of the full allowance): the poller reads a
// waiting selection's delegation at once, while a delegation changed with no selection is only re-read once a minute
// and a plain `Revoke` is left alone (docs/subscriptions.md "Revocation and re-authorization").

/** A Solana customer per subscription and run index: SLIP-0010 under m/44'/501'/7'/7'/<n>', a branch (change 7') no
 * account of the service derives (deposits use change 0', hot wallets 1'). */
export function solanaCustomerKeypair(mnemonic: string, runIndex: number, i: number): Keypair {
  const seed = Buffer.from(Mnemonic.fromPhrase(mnemonic).computeSeed().slice(2), 'hex');
  return Keypair.fromSeed(deriveEd25519Seed(seed, `m/44'/501'/7'/7'/${runIndex * 16 + i}'`));
}

/** Lamports the customer gets for its approvals' fees (5,000 each). */
const CUSTOMER_LAMPORTS = 1_000_000_000n;

/** What a Solana subscription's customer needs of the chain: the endpoint (no fault proxy, as the payer), the mints. */
export interface SolanaSubscriptionChain {
  network: 'solana';
  conn: Connection;
  mint(token: 'USDT' | 'USDC'): PublicKey;
  airdrop(address: string, lamports: bigint): void;
  pay(token: 'USDT' | 'USDC', to: string, amount: bigint): Promise<string>;
}

export function solanaSubscriptionChain(s: SimSolana): SolanaSubscriptionChain {
  return {
    network: 'solana',
    conn: new Connection(s.rpc.url, 'confirmed'),
    mint: (token) => new PublicKey(s.contract.mints[token]!),
    airdrop: (address, lamports) => {
      s.rpc.validator.airdrop(address, lamports);
    },
    pay: (token, to, amount) => s.pay(token, to, amount),
  };
}

export function solanaCustomer(chain: SolanaSubscriptionChain, customer: Keypair): SubscriptionCustomer {
  const owner = customer.publicKey;
  const address = owner.toBase58();
  return {
    network: 'solana',
    decimals: () => SOLANA_SIM_DECIMALS,
    address,
    resetsTether: false,
    restore: 'page',
    async fund(token, amount) {
      chain.airdrop(address, CUSTOMER_LAMPORTS);
      await chain.pay(token, address, amount);
    },
    authorizer(token, spender) {
      const mint = chain.mint(token);
      const delegate = new PublicKey(spender);
      const account = getAssociatedTokenAddressSync(mint, owner, true);
      return {
        approve: (value) =>
          sendUntilLanded(
            chain.conn,
            [customer],
            [
              value === 0n
                ? createRevokeInstruction(account, owner)
                : createApproveCheckedInstruction(account, mint, delegate, owner, value, SOLANA_SIM_DECIMALS),
            ],
            `the subscription customer's ${value === 0n ? 'Revoke' : `ApproveChecked of ${value}`} from ${address}`,
          ),
        close: () => {},
      };
    },
  };
}
