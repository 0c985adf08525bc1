// Kept for the commands already written down: the Nile run is now the `nile` profile of the scenario runner, with
// the same environment (TRON_NILE_FULL_HOST, TRON_PRO_API_KEY, TRON_NILE_PAYER_MNEMONIC, TRON_NILE_USDT, SERVICE_URL,
// SERVICE_API_KEY/SECRET/MERCHANT_ID, AMOUNT, REFUND_MINOR, TIMEOUT_SEC). Prefer `npm run testnet -- --network nile`.
process.argv.splice(2, 0, '--network', 'nile');
await import('./run.js');
