// EVM watcher at each network's block rate (issue 37, "Block rate"). Prints figures; never fails on a timing.
//   npx tsx scripts/bench/evm-watcher-rates.ts [--polls 20] [--catch-up 3000]
// For each EVM network's block time and default poll interval, one Anvil node mines the blocks one poll interval would
// hold between polls (no wall-clock wait), with a transfer to a watched address every 10th poll, and the scanner
// (chains/evm/block-scanner.ts, through the adapter) polls: RPC calls per poll and per block while tracking the head.
// Then a catch-up: `--catch-up` blocks behind, five transfers among them, polled until caught up (Arbitrum's policy).
// Local only: one Anvil node on a random port; the watch set is in memory (the scanner's calls do not depend on it).
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Contract, parseUnits } from 'ethers';
import type { ConfirmationPolicy } from '../../chains/evm/block-scanner.js';
import { NETWORKS as REGISTRY } from '../../chains/registry.js';
import type { CursorState, WatchSet } from '../../chains/types.js';
import { startAnvil } from '../../test/support/anvil.js';
import { deployTokens, fund, makeAdapter, walletAt } from '../../test/support/evm-tokens/scenario.js';

// Block times, poll intervals and finality from the network registry (chains/networks/<id>.ts), for every EVM network.
// A tag policy reads Anvil's tag (`safe` lags 32 blocks, `finalized` 64): the real tags lag minutes (thousands of
// Arbitrum blocks), which changes nothing here since no header is read per block between the tip and the final height.
const NETWORKS: Array<{ network: string; blockMs: number; pollMs: number; confirmation: ConfirmationPolicy }> = REGISTRY.filter(
  (n) => n.family === 'evm',
).map((n) => {
  const f = n.watcher.finality;
  const confirmation: ConfirmationPolicy = f.kind === 'depth' ? { kind: 'depth', confirmations: f.confirmations } : { kind: f.tag };
  return { network: n.id, blockMs: n.blockTimeMs, pollMs: n.watcher.pollIntervalMs, confirmation };
});
/** Calls a poll may make besides one header per block holding a matched transfer (docs/chains.md, "Calls per poll"). */
const BOUND = 7;

const { values } = parseArgs({ options: { polls: { type: 'string', default: '20' }, 'catch-up': { type: 'string', default: '3000' } } });
const POLLS = Number(values.polls);
const CATCH_UP = Number(values['catch-up']);

const node = await startAnvil({ chainId: 1 });
const rows: string[] = [];
const results: Array<Record<string, unknown>> = [];
let met = true;
let catchUpFigures: { blocks: number; polls: number; calls: number } | null = null;
try {
  const [usdc] = await deployTokens(node, [{ symbol: 'USDC', shape: 'fiat', decimals: 6 }]);
  const payer = walletAt(1, node.provider);
  await fund(usdc!, payer.address, parseUnits('1000000', 6));
  const transfer = new Contract(usdc!.address, ['function transfer(address to, uint256 value)'], payer);
  const watched = new Set<string>();
  const watch: WatchSet = {
    sync: async () => {},
    has: (a) => watched.has(a),
    addresses: () => watched,
    get size() {
      return watched.size;
    },
  };
  let nextAddress = 1;
  const pay = async () => {
    const to = `0x${(0xbe000000 + nextAddress++).toString(16).padStart(40, '0')}`;
    watched.add(to);
    // Automine: the transfer's block is mined when it is sent. Its receipt is read from the node directly (ethers'
    // tx.wait() polls blocks and crawls after thousands of blocks mined at once).
    const tx = await (transfer.getFunction('transfer') as (a: string, b: bigint) => Promise<{ hash: string }>)(to, parseUnits('1', 6));
    for (let i = 0; ; i++) {
      const receipt = await node.rpc<{ status: string } | null>('eth_getTransactionReceipt', [tx.hash]);
      if (receipt?.status === '0x1') return;
      if (receipt || i > 200) throw new Error(`transfer ${tx.hash} not mined`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  // Deep enough for every depth above (Arbitrum's 1,200).
  await node.mine(1300);
  for (const n of NETWORKS) {
    const adapter = makeAdapter(node, [usdc!], { confirmation: n.confirmation, maxBlockRange: 1000 });
    let cursor: CursorState = await adapter.initialCursor(BigInt(await node.provider.getBlockNumber()));
    const poll = async () => {
      const before = adapter.rpc.totalCalls;
      const r = await adapter.pollTransfers(cursor, watch);
      cursor = r.cursor;
      return {
        calls: adapter.rpc.totalCalls - before,
        matched: new Set(r.transfers.map((t) => t.block.height)).size,
        caughtUp: r.caughtUp,
      };
    };
    // Tracking the head: the blocks of one poll interval between polls (fractions carried over).
    let owed = 0;
    let blocks = 0;
    let calls = 0;
    let worst = 0;
    let matchedBlocks = 0;
    for (let i = 0; i < POLLS; i++) {
      owed += n.pollMs / n.blockMs;
      let mine = Math.floor(owed);
      owed -= mine;
      if (i % 10 === 9 && mine > 0) {
        await pay(); // mines one of this poll's blocks
        mine--;
        blocks++;
      }
      if (mine > 0) await node.mine(mine);
      blocks += mine;
      const p = await poll();
      calls += p.calls;
      matchedBlocks += p.matched;
      worst = Math.max(worst, p.calls - p.matched);
    }
    // Catch-up (once, with the last network's policy: Arbitrum's far final height): CATCH_UP blocks behind, five
    // transfers among them. Mining thousands of blocks is the slow part, so it is not repeated per network.
    let catchUp = '';
    if (n === NETWORKS.at(-1)) {
      for (let k = 0; k < 5; k++) {
        await pay();
        await node.mine(Math.floor(CATCH_UP / 5) - 1);
      }
      const t0 = performance.now();
      let cuPolls = 0;
      let cuCalls = 0;
      for (;;) {
        const p = await poll();
        cuPolls++;
        cuCalls += p.calls;
        worst = Math.max(worst, p.calls - p.matched);
        if (p.caughtUp) break;
      }
      catchUpFigures = { blocks: CATCH_UP, polls: cuPolls, calls: cuCalls };
      catchUp = ` | catch-up ${CATCH_UP} blocks: ${cuPolls} polls, ${cuCalls} calls (${(cuCalls / CATCH_UP).toFixed(3)}/block), ${((performance.now() - t0) / 1000).toFixed(1)} s`;
    }
    const perPoll = calls / POLLS;
    const perBlock = blocks > 0 ? calls / blocks : Number.NaN;
    const bounded = worst <= BOUND;
    met &&= bounded;
    const blocksPerPoll = n.pollMs / n.blockMs;
    rows.push(
      `  ${n.network.padEnd(9)} block ${String(n.blockMs / 1000).padStart(5)} s, poll ${String(n.pollMs / 1000).padStart(3)} s (${blocksPerPoll.toFixed(2).padStart(5)} blocks/poll): ` +
        `${perPoll.toFixed(2)} calls/poll, ${perBlock.toFixed(2)} calls/block, worst poll ${worst} + matched blocks (bound ${BOUND})` +
        catchUp,
    );
    results.push({
      network: n.network,
      block_ms: n.blockMs,
      poll_ms: n.pollMs,
      calls_per_poll: Number(perPoll.toFixed(2)),
      calls_per_block: Number(perBlock.toFixed(3)),
      worst_poll_without_matched: worst,
      matched_blocks: matchedBlocks,
    });
  }
  console.log(`EVM watcher at each network's block rate: ${POLLS} polls tracking the head, then ${CATCH_UP} blocks of catch-up`);
  for (const r of rows) console.log(r);
  if (process.env.BENCH_OUT) {
    const fastest = NETWORKS.reduce((a, b) => (b.blockMs < a.blockMs ? b : a));
    const arb = results.find((r) => r.network === fastest.network)!;
    writeFileSync(
      process.env.BENCH_OUT,
      JSON.stringify({
        figures:
          results.map((r) => `${r.network} ${r.calls_per_poll} calls/poll`).join(', ') +
          `; ${fastest.network} ${arb.calls_per_block} calls/block`,
        target: `≤ ${BOUND} calls per poll + matched blocks, at any block rate`,
        met,
        networks: results,
        catch_up: catchUpFigures,
      }),
    );
  }
} finally {
  await node.stop();
}
