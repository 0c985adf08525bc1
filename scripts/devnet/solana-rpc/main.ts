// Runs the FAKE Solana JSON-RPC endpoint over LiteSVM for the local devnet and demos:
//   npx tsx scripts/devnet/solana-rpc/main.ts
// SOLANA_FAKE_RPC_PORT (default 8899), SOLANA_FAKE_SLOT_MS (unset: one slot per transaction; e.g. 400 for a slot
// clock), SOLANA_FAKE_MINTS=1 (default) writes 6-decimal mints at the mainnet USDC and USDT addresses.
import { startFakeSolanaRpc } from './rpc-server.js';

const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const USDT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';

const port = Number(process.env.SOLANA_FAKE_RPC_PORT ?? 8899);
const slotMs = process.env.SOLANA_FAKE_SLOT_MS ? Number(process.env.SOLANA_FAKE_SLOT_MS) : undefined;
const rpc = await startFakeSolanaRpc({ port, slotIntervalMs: slotMs });
if ((process.env.SOLANA_FAKE_MINTS ?? '1') === '1') {
  rpc.validator.createMint({ address: USDC, decimals: 6 });
  rpc.validator.createMint({ address: USDT, decimals: 6 });
}
console.log(`fake Solana RPC (LiteSVM) listening on ${rpc.url}`);
const stop = () => void rpc.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
