import { networkEntry } from '../../chains/registry.js';
import { html, type SafeHtml } from './html.js';
import type { Lang } from './i18n.js';

// What the hosted page shows of a network, all read from its registry entry (chains/networks/<id>.ts): the name with
// its token standard ("Ethereum (ERC-20)"), the one-line hint under it, and a small badge (a coloured disc with the
// entry's mark). The catalogs (messages/*.ts) hold no network: a new registry entry shows up named, hinted and badged.

/** "Ethereum (ERC-20)" in `lang`; the id itself for a name the registry does not hold. */
export function networkName(lang: Lang, network: string): string {
  const e = networkEntry(network);
  return e ? `${e.label[lang]} (${e.standard})` : network;
}

/** Fee level and time to paid, in `lang`; empty for a name the registry does not hold. */
export function networkHint(lang: Lang, network: string): string {
  return networkEntry(network)?.hint[lang] ?? '';
}

/** The badge: decorative (the name is beside it), coloured by a class of the served stylesheet (network-badges.ts). */
export function networkBadge(network: string): SafeHtml | string {
  const e = networkEntry(network);
  return e ? html`<span class="nb nb-${e.id}" aria-hidden="true">${e.badge.mark}</span>` : '';
}
