// A region that scrolls (wide tables, long code): keyboard users must be able to focus it to scroll it (axe:
// scrollable-region-focusable), so it takes tabIndex 0 and a name.
import type { ComponentChildren } from 'preact';

export function ScrollRegion({ label, children, kind = 'table' }: { label: string; children: ComponentChildren; kind?: 'table' | 'code' }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to scroll it.
    // biome-ignore lint/a11y/useSemanticElements: a div region keeps the table's layout; <section> would add a landmark per table.
    <div class={kind === 'code' ? 'code' : 'table-wrap'} tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}
