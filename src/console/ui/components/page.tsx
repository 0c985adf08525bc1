// Page scaffolding: the page heading (one h1 per page), sections with h2, a key/value list, and a status badge.
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { useT } from '../lib/i18n.js';

export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  const t = useT();
  useEffect(() => {
    document.title = `${title} · ${t('app.title')}`;
  }, [title, t]);
  return (
    <div class="page-header">
      <h1 data-testid="page-title">{title}</h1>
      {children ? <div class="page-actions">{children}</div> : null}
    </div>
  );
}

export function Section({ title, children, testId }: { title: string; children: ComponentChildren; testId?: string }) {
  return (
    <section class="section" aria-label={title} data-testid={testId}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export function KeyValues({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="kv">
      {rows.map(([k, v]) => (
        <div class="kv-row" key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Badge({ value, testId }: { value: string; testId?: string }) {
  return (
    <span class={`badge badge-${value.replace(/[^a-z_]/gi, '')}`} data-testid={testId}>
      {value}
    </span>
  );
}

/** A link inside the app (hash route). */
export function Link({ to, children, testId }: { to: string; children: ComponentChildren; testId?: string }) {
  return (
    <a href={to} data-testid={testId}>
      {children}
    </a>
  );
}

export function ExternalLink({ href, children }: { href: string | null; children: ComponentChildren }) {
  if (!href) return <>{children}</>;
  return (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}
