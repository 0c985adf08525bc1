// One sweep: totals, steps (transactions, fees, explorer links) and sources.
import { useQuery } from '@tanstack/preact-query';
import type { SweepDetail } from '../../contract/treasury.js';
import { Badge, ExternalLink, KeyValues, PageHeader, Section } from '../components/page.js';
import { Empty, QueryView } from '../components/states.js';
import { api } from '../lib/api.js';
import { formatTime, short } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';
import { hrefFor } from '../lib/router.js';

export function SweepView({ id }: { id: string }) {
  const { t, lang } = useI18n();
  const query = useQuery({ queryKey: ['sweep', id], queryFn: () => api.get<SweepDetail>(`sweeps/${encodeURIComponent(id)}`) });
  return (
    <>
      <PageHeader title={t('treasury.sweepTitle', { id })}>
        <a href={hrefFor(['treasury'])}>{t('action.back')}</a>
      </PageHeader>
      <QueryView query={query}>
        {(s) => (
          <>
            <Section title={t('payments.summary')}>
              <KeyValues
                rows={[
                  [t('field.status'), <Badge key="s" value={s.status} testId="sweep-status" />],
                  [t('field.network'), `${s.network} ${s.mode} ${s.token} (${s.method})`],
                  [t('field.merchant'), s.merchant_id],
                  [
                    t('field.destination'),
                    <span key="d" class="mono wrap">
                      {s.destination}
                    </span>,
                  ],
                  [t('treasury.swept'), `${s.swept ?? s.swept_base} / ${s.planned ?? s.planned_base}`],
                  [t('field.fee'), `${s.actual_fee_native} ${s.fee_coin} (${t('treasury.estimated')} ${s.estimated_fee_native})`],
                  [t('field.failure'), s.failure_reason ?? '—'],
                  [t('field.created'), formatTime(s.created_at, lang)],
                  [t('treasury.finished'), formatTime(s.finished_at, lang)],
                ]}
              />
            </Section>
            <Section title={t('treasury.steps')}>
              {s.steps.length === 0 ? (
                <Empty />
              ) : (
                <ol class="timeline">
                  {s.steps.map((st) => (
                    <li key={st.seq}>
                      {st.purpose} <Badge value={st.status} /> <span class="mono">{short(st.from)}</span>{' '}
                      <ExternalLink href={st.explorer_url}>{short(st.tx_hash)}</ExternalLink> {st.fee ? `${t('field.fee')} ${st.fee}` : ''}{' '}
                      {st.failure_reason ?? ''}
                    </li>
                  ))}
                </ol>
              )}
            </Section>
            <Section title={t('treasury.sources')}>
              {s.sources.length === 0 ? (
                <Empty />
              ) : (
                <ul class="plain">
                  {s.sources.map((src) => (
                    <li key={src.address}>
                      <span class="mono">{short(src.address)}</span> {src.swept_base ?? '—'} / {src.planned_base}{' '}
                      <Badge value={src.state} /> <ExternalLink href={src.explorer_url}>{short(src.tx_hash)}</ExternalLink>
                    </li>
                  ))}
                </ul>
              )}
            </Section>
          </>
        )}
      </QueryView>
    </>
  );
}
