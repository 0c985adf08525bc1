// Refunds: the list (filters, sort, keyset pages in the URL) and, at #/refunds/<id>, the detail with its payout
// attempts; retry a failed refund; settle from the chain (operator). Live: `refunds`.
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { ConsoleRefund, RefundDetail } from '../../contract/refunds.js';
import type { PageProps } from '../lib/page-props.js';
import { ConfirmButton } from '../components/confirm.js';
import { type FilterField, Filters, NETWORKS } from '../components/filters.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { Badge, ExternalLink, KeyValues, Link, PageHeader, Section } from '../components/page.js';
import { Empty, ErrorBox, QueryView } from '../components/states.js';
import { type Column, DataTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { formatTime, money, short } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';
import { useLive } from '../lib/live.js';
import { useAction } from '../lib/mutation.js';
import { hrefFor } from '../lib/router.js';

const STATUSES = ['pending', 'processing', 'completed', 'failed', 'canceled'] as const;

export default function RefundsPage(props: PageProps) {
  useLive(['refunds']);
  if (props.params[0]) return <RefundView id={props.params[0]} operator={props.me.user.role === 'operator'} />;
  return <RefundsList {...props} />;
}

function RefundsList({ me }: PageProps) {
  const { t, lang } = useI18n();
  const fields: FilterField[] = [
    { name: 'status', label: 'field.status', type: 'select', options: STATUSES },
    { name: 'network', label: 'field.network', type: 'select', options: NETWORKS },
    { name: 'created_from', label: 'field.from', type: 'date' },
    { name: 'created_to', label: 'field.to', type: 'date' },
  ];
  if (me.user.role === 'operator') fields.push({ name: 'merchant_id', label: 'field.merchant' });
  const columns: Column<ConsoleRefund>[] = [
    {
      key: 'id',
      label: 'field.id',
      render: (r) => (
        <Link to={hrefFor(['refunds', r.id])} testId={`refunds-link-${r.id}`}>
          <span class="mono">{r.refund_id}</span>
        </Link>
      ),
    },
    { key: 'status', label: 'field.status', render: (r) => <Badge value={r.status} testId="refund-status" /> },
    { key: 'amount', label: 'field.amount', render: (r) => money(r.amount, r.token) },
    { key: 'network', label: 'field.network', render: (r) => r.network },
    { key: 'session', label: 'field.payment', render: (r) => <Link to={hrefFor(['payments', r.session_id])}>{r.session_id}</Link> },
    { key: 'destination', label: 'field.destination', render: (r) => <span class="mono">{short(r.destination_address)}</span> },
    { key: 'created', label: 'field.created', sort: 'created_at', render: (r) => formatTime(r.created_at, lang) },
  ];
  return (
    <>
      <PageHeader title={t('nav.refunds')} />
      <Filters fields={fields} testId="refunds-filters" />
      <DataTable area="refunds" path="refunds" columns={columns} rowKey={(r) => r.id} caption={t('nav.refunds')} />
    </>
  );
}

function RefundView({ id, operator }: { id: string; operator: boolean }) {
  const { t, lang } = useI18n();
  const path = `refunds/${encodeURIComponent(id)}`;
  const query = useQuery({ queryKey: ['refund', id], queryFn: () => api.get<RefundDetail>(path) });
  const retry = useAction(() => api.post(`${path}/retry`), [['refund', id], ['refunds']]);
  const [txHash, setTxHash] = useState('');
  const settle = useAction(() => api.post(`${path}/settle-from-chain`, { tx_hash: txHash.trim() }), [['refund', id], ['refunds']]);
  return (
    <>
      <PageHeader title={t('refunds.detailTitle', { id })}>
        <a href={hrefFor(['refunds'])}>{t('action.back')}</a>
      </PageHeader>
      <QueryView query={query}>
        {({ refund: r, attempts }) => (
          <>
            <Section title={t('payments.summary')} testId="refund-summary">
              <KeyValues
                rows={[
                  [t('field.status'), <Badge key="s" value={r.status} testId="refund-status" />],
                  [t('field.amount'), money(r.amount, r.token)],
                  [t('field.delivered'), money(r.amount_delivered, r.token)],
                  [t('field.network'), r.network],
                  [
                    t('field.destination'),
                    <span key="d" class="mono wrap">
                      {r.destination_address}
                    </span>,
                  ],
                  [
                    t('field.txHash'),
                    <ExternalLink key="x" href={r.explorer_url}>
                      {r.transaction_hash ?? '—'}
                    </ExternalLink>,
                  ],
                  [
                    t('field.payment'),
                    <Link key="p" to={hrefFor(['payments', r.session_id])}>
                      {r.session_id}
                    </Link>,
                  ],
                  [t('field.reason'), r.reason ?? '—'],
                  [t('field.failure'), r.failure_reason ?? '—'],
                  [t('field.created'), formatTime(r.created_at, lang)],
                  [t('field.processed'), formatTime(r.processed_at, lang)],
                ]}
              />
              <div class="page-actions">
                {r.status === 'failed' ? (
                  <ConfirmButton
                    label={t('refunds.retry')}
                    title={t('refunds.retry')}
                    onConfirm={() => retry.mutateAsync(undefined)}
                    pending={retry.isPending}
                    error={retry.error}
                    testId="refund-retry"
                  >
                    <p>{t('refunds.retryBody', { amount: money(r.amount, r.token), destination: r.destination_address })}</p>
                  </ConfirmButton>
                ) : null}
                {operator && (r.status === 'processing' || r.status === 'failed' || r.status === 'pending') ? (
                  <ConfirmButton
                    label={t('refunds.settle')}
                    title={t('refunds.settle')}
                    onConfirm={() => settle.mutateAsync(undefined)}
                    pending={settle.isPending}
                    error={settle.error}
                    testId="refund-settle"
                  >
                    <p>{t('refunds.settleBody')}</p>
                    <div class="field">
                      <label for="settle-tx">{t('field.txHash')}</label>
                      <input
                        id="settle-tx"
                        value={txHash}
                        onInput={(e) => setTxHash(e.currentTarget.value)}
                        data-testid="refund-settle-tx"
                      />
                    </div>
                  </ConfirmButton>
                ) : null}
              </div>
              {retry.isSuccess ? <p role="status">{t('refunds.retried')}</p> : null}
            </Section>
            <Section title={t('refunds.attempts')} testId="refund-attempts">
              {attempts.length === 0 ? (
                <Empty />
              ) : (
                <ScrollRegion label={t('refunds.attempts')}>
                  <table class="table">
                    <thead>
                      <tr>
                        <th scope="col">{t('field.txHash')}</th>
                        <th scope="col">{t('field.state')}</th>
                        <th scope="col">{t('field.nonce')}</th>
                        <th scope="col">{t('field.fee')}</th>
                        <th scope="col">{t('field.created')}</th>
                        <th scope="col">{t('field.settled')}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {attempts.map((a) => (
                        <tr key={a.tx_hash}>
                          <td class="mono">
                            <ExternalLink href={a.explorer_url}>{short(a.tx_hash)}</ExternalLink>
                          </td>
                          <td>
                            <Badge value={a.state} />
                          </td>
                          <td>{a.nonce ?? '—'}</td>
                          <td class="mono">{a.fee_native === null ? '—' : `${a.fee_native} ${a.fee_coin}`}</td>
                          <td>{formatTime(a.created_at, lang)}</td>
                          <td>{formatTime(a.settled_at, lang)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </ScrollRegion>
              )}
              {settle.error && !settle.isPending ? <ErrorBox error={settle.error} /> : null}
            </Section>
          </>
        )}
      </QueryView>
    </>
  );
}
