// The server-driven list: sortable table plus keyset pager. Filters, sort, order and cursor live in the URL hash;
// the server pages (limit/cursor), filters and sorts. Narrow screens scroll the table horizontally.
import { useQuery } from '@tanstack/preact-query';
import type { ComponentChild } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { useT } from '../lib/i18n.js';
import { useQueryState } from '../lib/router.js';
import type { MessageKey } from '../messages/en.js';
import { ScrollRegion } from './scroll-region.js';
import { Empty, ErrorBox, Loading } from './states.js';

export interface Column<R> {
  key: string;
  label: MessageKey;
  render: (row: R) => ComponentChild;
  /** The server's sort name when this column sorts. */
  sort?: string;
}

export interface Page<R> {
  data: R[];
  next_cursor?: string | null;
}

/** Date inputs keep YYYY-MM-DD in the URL; the API takes ISO times: a `*from` day starts at 00:00 UTC, a `*to` day
 * ends at 23:59:59.999 UTC. */
export function toApiParams(params: Record<string, string | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(params)) {
    if (v && /^\d{4}-\d{2}-\d{2}$/.test(v) && /(^|_)from$/.test(k)) out[k] = `${v}T00:00:00.000Z`;
    else if (v && /^\d{4}-\d{2}-\d{2}$/.test(v) && /(^|_)(to|since)$/.test(k))
      out[k] = k.endsWith('since') ? `${v}T00:00:00.000Z` : `${v}T23:59:59.999Z`;
    else out[k] = v;
  }
  return out;
}

/** Fetches one page of `path` with the URL's query (filters + sort/order/cursor/limit). */
export function useListQuery<R>(area: string, path: string, extra: Record<string, string | undefined> = {}) {
  const [state] = useQueryState();
  const params = toApiParams({ ...state, ...extra });
  return useQuery({ queryKey: [area, 'list', params], queryFn: () => api.get<Page<R>>(path, params) });
}

export function DataTable<R>({
  area,
  path,
  columns,
  rowKey,
  extra,
  caption,
}: {
  area: string;
  path: string;
  columns: Column<R>[];
  rowKey: (row: R) => string;
  extra?: Record<string, string | undefined>;
  caption: string;
}) {
  const t = useT();
  const [state, setState] = useQueryState();
  const [previous, setPrevious] = useState<string[]>([]);
  const query = useListQuery<R>(area, path, extra);
  const sort = state.sort;
  const order = state.order === 'asc' ? 'asc' : 'desc';

  const toggleSort = (col: string) => {
    setPrevious([]);
    setState({ sort: col, order: sort === col && order === 'desc' ? 'asc' : 'desc', cursor: undefined });
  };

  if (query.error) return <ErrorBox error={query.error} />;
  if (query.isPending) return <Loading />;
  const rows = query.data?.data ?? [];
  const next = query.data?.next_cursor ?? null;
  return (
    <div class="list" data-testid={`${area}-list`}>
      {rows.length === 0 ? (
        <Empty />
      ) : (
        <ScrollRegion label={caption}>
          <table class="table">
            <caption class="sr-only">{caption}</caption>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th
                    key={c.key}
                    scope="col"
                    aria-sort={c.sort && sort === c.sort ? (order === 'asc' ? 'ascending' : 'descending') : undefined}
                  >
                    {c.sort ? (
                      <button type="button" class="th-sort" onClick={() => toggleSort(c.sort!)} data-testid={`sort-${c.sort}`}>
                        {t(c.label)}
                        <span aria-hidden="true">{sort === c.sort ? (order === 'asc' ? ' ▲' : ' ▼') : ' ↕'}</span>
                      </button>
                    ) : (
                      t(c.label)
                    )}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={rowKey(row)} data-testid={`${area}-row-${rowKey(row)}`}>
                  {columns.map((c) => (
                    <td key={c.key} data-label={t(c.label)}>
                      {c.render(row)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
      <nav class="pager" aria-label={t('pager.label')}>
        <button
          type="button"
          class="btn"
          disabled={!state.cursor}
          data-testid="pager-first"
          onClick={() => {
            setPrevious([]);
            setState({ cursor: undefined });
          }}
        >
          {t('pager.first')}
        </button>
        <button
          type="button"
          class="btn"
          disabled={!state.cursor}
          data-testid="pager-prev"
          onClick={() => {
            const stack = [...previous];
            const back = stack.pop();
            setPrevious(stack);
            setState({ cursor: back || undefined });
          }}
        >
          {t('pager.previous')}
        </button>
        <button
          type="button"
          class="btn"
          disabled={!next}
          data-testid="pager-next"
          onClick={() => {
            setPrevious([...previous, state.cursor ?? '']);
            setState({ cursor: next });
          }}
        >
          {t('pager.next')}
        </button>
      </nav>
    </div>
  );
}
