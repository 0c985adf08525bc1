// Search (#/search?q=...): exact lookups by session id, order id, deposit address or transaction hash (GET api/search),
// each hit a link to its payment or refund.
import { useQuery } from '@tanstack/preact-query';
import type { SearchResult } from '../../contract/stranded.js';
import { Link, PageHeader } from '../components/page.js';
import { Empty, QueryView } from '../components/states.js';
import { api } from '../lib/api.js';
import { useI18n } from '../lib/i18n.js';
import type { PageProps } from '../lib/page-props.js';
import { hrefFor, useQueryState } from '../lib/router.js';

export default function SearchPage(_props: PageProps) {
  const { t } = useI18n();
  const [state] = useQueryState();
  const q = (state.q ?? '').trim();
  const query = useQuery({ queryKey: ['search', q], enabled: q !== '', queryFn: () => api.get<SearchResult>('search', { q }) });
  return (
    <>
      <PageHeader title={t('search.title', { q })} />
      {q === '' ? (
        <Empty>{t('search.hint')}</Empty>
      ) : (
        <QueryView query={query}>
          {({ hits }) =>
            hits.length === 0 ? (
              <Empty>{t('search.none')}</Empty>
            ) : (
              <ul class="plain" data-testid="search-hits">
                {hits.map((h) => {
                  const to = h.kind === 'refund' ? hrefFor(['refunds', h.id]) : hrefFor(['payments', h.session_id ?? h.id]);
                  return (
                    <li key={`${h.kind}-${h.id}`}>
                      <Link to={to} testId={`search-hit-${h.id}`}>
                        {t(`search.kind.${h.kind}`)}: {h.label}
                      </Link>
                    </li>
                  );
                })}
              </ul>
            )
          }
        </QueryView>
      )}
    </>
  );
}
