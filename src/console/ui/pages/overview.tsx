// Overview: volume per day (chart and table), session outcome rates, time to paid, refunds in flight, failing
// webhook endpoints, watcher lag, operator wallets against thresholds, last reconcile per network. Live: `overview`.
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { OverviewResponse } from '../../contract/overview.js';
import type { PageProps } from '../lib/page-props.js';
import { BarChart } from '../components/chart.js';
import { Filters } from '../components/filters.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { Badge, KeyValues, PageHeader, Section } from '../components/page.js';
import { Empty, QueryView } from '../components/states.js';
import { api } from '../lib/api.js';
import { addDecimal, magnitude } from '../lib/decimal.js';
import { formatTime, percent } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';
import { useLive } from '../lib/live.js';
import { useQueryState } from '../lib/router.js';

function volumeByDay(data: OverviewResponse, token: string): { day: string; volume: string; paid: number }[] {
  const byDay = new Map<string, { volume: string; paid: number }>();
  for (const d of data.days) {
    if (d.token !== token) continue;
    const cur = byDay.get(d.day) ?? { volume: '0', paid: 0 };
    byDay.set(d.day, { volume: addDecimal(cur.volume, d.volume), paid: cur.paid + d.paid });
  }
  return [...byDay.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([day, v]) => ({ day, ...v }));
}

export default function OverviewPage({ me }: PageProps) {
  const { t, lang } = useI18n();
  useLive(['overview']);
  const [state] = useQueryState();
  const merchantId = me.user.role === 'operator' ? state.merchant_id : undefined;
  const query = useQuery({
    queryKey: ['overview', merchantId ?? null],
    queryFn: () => api.get<OverviewResponse>('overview', { merchant_id: merchantId }),
  });
  const [token, setToken] = useState('USDT');
  return (
    <>
      <PageHeader title={t('nav.overview')} />
      {me.user.role === 'operator' ? (
        <Filters fields={[{ name: 'merchant_id', label: 'field.merchant' }]} testId="overview-filters" />
      ) : null}
      <QueryView query={query}>
        {(data) => {
          const tokens = [...new Set(data.days.map((d) => d.token))].sort();
          const series = volumeByDay(data, tokens.includes(token) ? token : (tokens[0] ?? token));
          return (
            <div class="grid" data-testid="overview">
              <Section title={t('overview.volume')} testId="overview-volume">
                {tokens.length > 1 ? (
                  <div class="field field-inline">
                    <label for="overview-token">{t('field.token')}</label>
                    <select id="overview-token" value={token} onChange={(e) => setToken(e.currentTarget.value)}>
                      {tokens.map((tk) => (
                        <option key={tk}>{tk}</option>
                      ))}
                    </select>
                  </div>
                ) : null}
                {series.length === 0 ? (
                  <Empty />
                ) : (
                  <>
                    <BarChart
                      label={t('overview.volume')}
                      bars={series.map((s) => ({
                        label: s.day.slice(5),
                        value: magnitude(s.volume),
                        title: `${s.day}: ${s.volume} (${s.paid})`,
                      }))}
                    />
                    <details>
                      <summary>{t('overview.table')}</summary>
                      <ScrollRegion label={t('overview.volume')}>
                        <table class="table">
                          <thead>
                            <tr>
                              <th scope="col">{t('field.day')}</th>
                              <th scope="col">{t('field.volume')}</th>
                              <th scope="col">{t('field.paidCount')}</th>
                            </tr>
                          </thead>
                          <tbody>
                            {series.map((s) => (
                              <tr key={s.day}>
                                <td>{s.day}</td>
                                <td>{s.volume}</td>
                                <td>{s.paid}</td>
                              </tr>
                            ))}
                          </tbody>
                        </table>
                      </ScrollRegion>
                    </details>
                  </>
                )}
              </Section>
              <Section title={t('overview.rates')} testId="overview-rates">
                <KeyValues
                  rows={[
                    [t('overview.created'), String(data.rates.created)],
                    [t('overview.paidRate'), `${percent(data.rates.paid_rate)} (${data.rates.paid})`],
                    [t('overview.expiredRate'), `${percent(data.rates.expired_rate)} (${data.rates.expired})`],
                    [t('overview.canceledRate'), `${percent(data.rates.canceled_rate)} (${data.rates.canceled})`],
                    [t('overview.refundsInFlight'), String(data.refunds_in_flight.count)],
                  ]}
                />
                {data.time_to_paid.length ? (
                  <ul class="plain">
                    {data.time_to_paid.map((x) => (
                      <li key={`${x.network}-${x.mode}`}>
                        {t('overview.timeToPaid', {
                          network: `${x.network} (${x.mode})`,
                          seconds: x.median_seconds ?? '—',
                          samples: x.samples,
                        })}
                      </li>
                    ))}
                  </ul>
                ) : null}
              </Section>
              <Section title={t('overview.failingEndpoints')} testId="overview-failing">
                {data.failing_webhook_endpoints.length === 0 ? (
                  <Empty>{t('overview.noFailing')}</Empty>
                ) : (
                  <ul class="plain">
                    {data.failing_webhook_endpoints.map((f) => (
                      <li key={f.merchant_id}>
                        {f.merchant_id}: <span class="mono">{f.url ?? '—'}</span> ({f.failed_deliveries},{' '}
                        {formatTime(f.last_failure_at, lang)}) {f.last_error ?? ''}
                      </li>
                    ))}
                  </ul>
                )}
              </Section>
              <Section title={t('overview.watchers')} testId="overview-watchers">
                {data.watchers.length === 0 ? (
                  <Empty />
                ) : (
                  <ul class="plain">
                    {data.watchers.map((w) => (
                      <li key={w.chain_key}>
                        {t('overview.watcherLine', {
                          chain: w.chain_key,
                          lag: w.lag_blocks,
                          tip: w.tip_height,
                          seconds: w.seconds_since_update ?? '—',
                        })}
                      </li>
                    ))}
                  </ul>
                )}
              </Section>
              {me.user.role === 'operator' ? (
                <Section title={t('overview.wallets')} testId="overview-wallets">
                  {data.wallets_error ? <p class="warn">{data.wallets_error}</p> : null}
                  {!data.wallets || data.wallets.length === 0 ? (
                    <Empty />
                  ) : (
                    <ul class="plain">
                      {data.wallets.map((w) => (
                        <li key={`${w.network}-${w.mode}-${w.role}-${w.address}`}>
                          <Badge value={w.below_threshold ? 'low' : w.below_threshold === false ? 'ok' : 'unknown'} /> {w.network} {w.mode}{' '}
                          {w.role}: {w.balance ?? w.error ?? '—'} {w.native}
                          {w.shortfall && w.below_threshold ? ` (${t('field.shortfall')} ${w.shortfall})` : ''}
                        </li>
                      ))}
                    </ul>
                  )}
                </Section>
              ) : null}
              {data.last_reconcile ? (
                <Section title={t('overview.lastReconcile')} testId="overview-reconcile">
                  {data.last_reconcile.length === 0 ? (
                    <Empty />
                  ) : (
                    <ul class="plain">
                      {data.last_reconcile.map((r) => (
                        <li key={r.run_id}>
                          {r.network} {r.mode}: {formatTime(r.finished_at, lang)} · {t('overview.differences', { n: r.differences })}
                        </li>
                      ))}
                    </ul>
                  )}
                </Section>
              ) : null}
            </div>
          );
        }}
      </QueryView>
    </>
  );
}
