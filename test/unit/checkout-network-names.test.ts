// The hosted page names, hints and badges each network from its registry entry (issue 37): a new entry needs no
// catalog key, and its badge colour reaches the page through the served stylesheet (the CSP allows no inline style).
import { describe, expect, it } from 'vitest';
import { NETWORKS } from '../../chains/registry.js';
import { loadCheckoutAssets } from '../../src/checkout/assets.js';
import { LANGUAGES, catalog } from '../../src/checkout/i18n.js';
import { networkBadgeCss } from '../../src/checkout/network-badges.js';
import { networkBadge, networkHint, networkName } from '../../src/checkout/network-names.js';

const badgeText = (id: string): string => {
  const b = networkBadge(id);
  return typeof b === 'string' ? b : b.text;
};

describe('checkout network names, hints and badges', () => {
  it('reads every network from the registry, in every language', () => {
    for (const n of NETWORKS) {
      for (const lang of LANGUAGES) {
        expect(networkName(lang, n.id)).toBe(`${n.label[lang]} (${n.standard})`);
        expect(networkHint(lang, n.id)).toBe(n.hint[lang]);
      }
      expect(badgeText(n.id)).toBe(`<span class="nb nb-${n.id}" aria-hidden="true">${n.badge.mark}</span>`);
    }
    expect(networkName('en', 'ethereum')).toBe('Ethereum (ERC-20)');
    expect(networkName('zh', 'bsc')).toBe('BNB 智能链 (BEP-20)');
    expect(networkName('en', 'nowhere')).toBe('nowhere');
    expect(badgeText('nowhere')).toBe('');
  });

  it('the catalogs hold no network', () => {
    for (const lang of LANGUAGES) expect(Object.keys(catalog(lang)).filter((k) => /^(network|hint)\./.test(k))).toEqual([]);
  });

  it('serves one colour rule per network in the stylesheet, and refuses a colour that is not #rrggbb', () => {
    const css = loadCheckoutAssets().style.body.toString('utf8');
    for (const n of NETWORKS) expect(css).toContain(`.nb-${n.id} {\n  background: ${n.badge.color};\n}`);
    expect(css).toContain('.nb {');
    expect(() => networkBadgeCss([{ id: 'x', badge: { color: 'red;}body{display:none' } }])).toThrow(/#rrggbb/);
    expect(() => networkBadgeCss([{ id: 'x y', badge: { color: '#000000' } }])).toThrow();
  });
});
