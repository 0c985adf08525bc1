import { z } from 'zod';

// Response shape of the console's wallets (operator only): every gas station, TRON resources account and refunds hot
// wallet per network, mode and merchant; balances as decimal strings (null when the chain could not be read in time:
// `error` says why), the nonce the service holds for it, pending attempts, and what the next sweep plan needs.

export const consoleWallet = z.object({
  network: z.string(),
  mode: z.enum(['test', 'live']),
  role: z.enum(['gas_station', 'resources', 'refunds']),
  merchant_id: z.string().nullable(),
  address: z.string(),
  native: z.string(),
  balance: z.string().nullable(),
  tokens: z.record(z.string(), z.string()).nullable(),
  /** TRON: energy available now (staked or delegated, less what is used); null on other chains or unread. */
  energy: z.string().nullable(),
  /** TRON: bandwidth available now, in bytes (free and staked); null on other chains or unread. */
  bandwidth: z.string().nullable(),
  /** The next nonce the service allocates (EVM); null when none held. */
  nonce: z.string().nullable(),
  pending_attempts: z.number().int(),
  error: z.string().optional(),
  next_sweep_plan: z
    .object({ planned_spend: z.string(), waiting_addresses_need: z.string(), needed: z.string(), shortfall: z.string() })
    .nullable(),
});
export type ConsoleWallet = z.infer<typeof consoleWallet>;
export const walletList = z.object({ data: z.array(consoleWallet), error: z.string().nullable() });
