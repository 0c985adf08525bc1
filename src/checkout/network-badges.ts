import { NETWORKS } from '../../chains/registry.js';

// The badges' colours as stylesheet rules, one class per registry network (`.nb-<id>`), appended to the page's
// stylesheet when it is loaded (assets.ts): the CSP allows no inline style, so a colour can never sit in the markup.
// Only a plain id and a #rrggbb colour reach the CSS; anything else in an entry is a programming error.

const ID = /^[a-z][a-z0-9-]*$/;
const COLOR = /^#[0-9A-Fa-f]{6}$/;

export function networkBadgeCss(networks: ReadonlyArray<{ id: string; badge: { color: string } }> = NETWORKS): string {
  return networks
    .map((n) => {
      if (!ID.test(n.id) || !COLOR.test(n.badge.color)) throw new Error(`network ${n.id}: badge colour must be #rrggbb`);
      return `.nb-${n.id} {\n  background: ${n.badge.color};\n}\n`;
    })
    .join('');
}
