import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PAYMENT_UNMATCHED_REASONS, UNMATCHED_REASONS } from '../../src/domain/unmatched-reasons.js';
import { sessionReceivedShape } from '../../src/domain/events/catalog.js';

// Issue 34 item 17: the reasons of unmatched deposits, as the code records them and as docs/checkout.md explains
// them, are one list. (decisions.md names the rule, not the codes; a late payment to an expired session is `late`,
// proven on every chain by the adapter conformance scenarios and test/integration/journal-scripted-day.test.ts.)

function documentedReasons(): string[] {
  const page = readFileSync('docs/checkout.md', 'utf8');
  const start = page.indexOf('### Why a transfer is unmatched');
  expect(start, 'docs/checkout.md has a section "Why a transfer is unmatched"').toBeGreaterThan(-1);
  const section = page.slice(start, page.indexOf('\n#', start + 5));
  return [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!);
}

describe('unmatched deposit reasons', () => {
  it('docs/checkout.md lists exactly the reasons the ledger records, late payments as `late`', () => {
    expect(documentedReasons().sort()).toEqual([...UNMATCHED_REASONS].sort());
    expect(UNMATCHED_REASONS).toContain('late');
  });

  it('the API documents the same values (payments[].unmatched_reason), but unsupported_token, which payments[] never lists', () => {
    const payment = (sessionReceivedShape.payments as any).unwrap().element;
    expect(payment.shape.unmatched_reason.unwrap().options).toEqual([...PAYMENT_UNMATCHED_REASONS]);
    expect(UNMATCHED_REASONS.filter((r) => r !== 'unsupported_token')).toEqual([...PAYMENT_UNMATCHED_REASONS]);
    expect(UNMATCHED_REASONS).toContain('unsupported_token');
  });

  it('no page names a reason the ledger never records', () => {
    for (const page of ['docs/checkout.md', 'docs/watcher.md', 'docs/refunds.md']) {
      expect(readFileSync(page, 'utf8'), page).not.toMatch(/unmatched[^.|]*`session_expired`/);
    }
  });
});
