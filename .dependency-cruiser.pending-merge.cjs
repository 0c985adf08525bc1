// Layer violations that other issue-14 branches remove (they own these files). The check ignores exactly these
// imports; test/unit/layers.test.ts fails once one of them is gone, so each entry leaves with the merge that fixes it.
// Empty this list after merging them: the goal is no exception at all.

const dep = (from, to, rule, fixedBy) => ({ type: 'dependency', from, to, rule: { severity: 'error', name: rule }, comment: fixedBy });

module.exports = [
  // item 1 (one outbound engine): charges stop importing the refund engine.
  dep('src/subscriptions/charge-engine.ts', 'src/payouts/engine.ts', 'layer-subscriptions', 'item 1: one outbound engine'),
];
