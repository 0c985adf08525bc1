// Layer violations that other issue-14 branches remove (they own these files). The check ignores exactly these
// imports; test/unit/layers.test.ts fails once one of them is gone, so each entry leaves with the merge that fixes it.
// Empty this list after merging them: the goal is no exception at all.

const dep = (from, to, rule, fixedBy) => ({ type: 'dependency', from, to, rule: { severity: 'error', name: rule }, comment: fixedBy });

module.exports = [
  // item 1 (one outbound engine): charges stop importing the refund engine.
  dep('src/subscriptions/charge-engine.ts', 'src/payouts/engine.ts', 'layer-subscriptions', 'item 1: one outbound engine'),
  // items 2 and 3 (registry, vocabulary): refund-chains stops importing api/ and the API stops importing payouts/.
  dep('src/payouts/refund-chains.ts', 'src/api/routes/refunds.ts', 'layer-payouts', 'items 2, 3: refund-chains → api/'),
  dep('src/api/server.ts', 'src/payouts/refund-chains.ts', 'layer-api', 'items 2, 3: refund-chains → api/'),
  // item 2 (registry): deep links come from an adapter method, not from the chain families' modules.
  dep('src/checkout/deep-links.ts', 'chains/evm/adapter.ts', 'chain-family-outside-adapters', 'item 2: paymentLink() adapter method'),
  dep('src/checkout/deep-links.ts', 'chains/solana/solana-pay.ts', 'chain-family-outside-adapters', 'item 2: paymentLink() adapter method'),
  dep('src/checkout/deep-links.ts', 'chains/tron/payment-uri.ts', 'chain-family-outside-adapters', 'item 2: paymentLink() adapter method'),
];
