// A filter form bound to the URL: submitting writes the fields into the hash (and drops the cursor); reset clears them.
import { useEffect, useState } from 'preact/hooks';
import { useT } from '../lib/i18n.js';
import { useQueryState } from '../lib/router.js';
import type { MessageKey } from '../messages/en.js';
import { NETWORK_IDS } from '../../contract/network-ids.js';

export interface FilterField {
  name: string;
  label: MessageKey;
  type?: 'text' | 'date' | 'select' | 'search';
  options?: readonly string[];
  placeholder?: string;
}

export function Filters({ fields, testId }: { fields: FilterField[]; testId: string }) {
  const t = useT();
  const [state, setState] = useQueryState();
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(fields.map((f) => [f.name, state[f.name] ?? ''])));
  // The URL changed under the form (back, forward, a link): show what it says.
  const fromUrl = JSON.stringify(fields.map((f) => state[f.name] ?? ''));
  useEffect(() => {
    const values = JSON.parse(fromUrl) as string[];
    setValues(Object.fromEntries(fields.map((f, i) => [f.name, values[i] ?? ''])));
  }, [fromUrl]);
  const submit = (e: Event) => {
    e.preventDefault();
    const patch: Record<string, string | undefined> = { cursor: undefined };
    for (const f of fields) patch[f.name] = values[f.name] || undefined;
    setState(patch);
  };
  const reset = () => {
    setValues(Object.fromEntries(fields.map((f) => [f.name, ''])));
    const patch: Record<string, string | undefined> = { cursor: undefined };
    for (const f of fields) patch[f.name] = undefined;
    setState(patch);
  };
  // Narrow screens start with the filters folded away unless one is set.
  const [open] = useState(() => !window.matchMedia?.('(max-width: 800px)').matches || fields.some((f) => state[f.name]));
  return (
    <details class="filters-box" open={open}>
      <summary data-testid={`${testId}-toggle`}>{t('filter.title')}</summary>
      <form class="filters" onSubmit={submit} data-testid={testId}>
        {fields.map((f) => {
          const id = `${testId}-${f.name}`;
          const value = values[f.name] ?? '';
          const onInput = (e: Event) => setValues({ ...values, [f.name]: (e.currentTarget as HTMLInputElement).value });
          return (
            <div class="field" key={f.name}>
              <label for={id}>{t(f.label)}</label>
              {f.type === 'select' ? (
                <select id={id} value={value} onChange={onInput} data-testid={id}>
                  <option value="">{t('filter.any')}</option>
                  {(f.options ?? []).map((o) => (
                    <option key={o} value={o}>
                      {o}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  id={id}
                  type={f.type === 'date' ? 'date' : f.type === 'search' ? 'search' : 'text'}
                  value={value}
                  placeholder={f.placeholder}
                  onInput={onInput}
                  data-testid={id}
                />
              )}
            </div>
          );
        })}
        <div class="filter-actions">
          <button type="submit" class="btn btn-primary" data-testid={`${testId}-apply`}>
            {t('filter.apply')}
          </button>
          <button type="button" class="btn" onClick={reset} data-testid={`${testId}-reset`}>
            {t('filter.reset')}
          </button>
        </div>
      </form>
    </details>
  );
}

/** The registry's networks (src/console/contract/network-ids.ts): a new entry appears in every filter. */
export const NETWORKS: readonly string[] = NETWORK_IDS;
export const TOKENS = ['USDT', 'USDC'] as const;
export const MODES = ['test', 'live'] as const;
