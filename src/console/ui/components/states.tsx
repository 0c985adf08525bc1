// Loading, empty and error states every page uses (an API error shows its error.message).
import type { ComponentChildren } from 'preact';
import { errorMessage } from '../lib/api.js';
import { useT } from '../lib/i18n.js';

export function Loading() {
  const t = useT();
  return (
    <p class="state state-loading" role="status" data-testid="state-loading">
      {t('state.loading')}
    </p>
  );
}

export function Empty({ children }: { children?: ComponentChildren }) {
  const t = useT();
  return (
    <p class="state state-empty" data-testid="state-empty">
      {children ?? t('state.empty')}
    </p>
  );
}

export function ErrorBox({ error }: { error: unknown }) {
  const t = useT();
  return (
    <div class="state state-error" role="alert" data-testid="state-error">
      <strong>{t('state.error')}</strong> {errorMessage(error)}
    </div>
  );
}

/** Renders loading/error for a query and its children once data is there. */
export function QueryView<T>({
  query,
  children,
}: {
  query: { isPending: boolean; error: unknown; data: T | undefined };
  children: (data: T) => ComponentChildren;
}) {
  if (query.error) return <ErrorBox error={query.error} />;
  if (query.isPending || query.data === undefined) return <Loading />;
  return <>{children(query.data)}</>;
}
