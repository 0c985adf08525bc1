// Subscriptions: the list (status, mode, merchant filters; keyset pages) and, at #/subscriptions/<id>, the detail with
// invoices, charges (dunning), payment methods and hold; cancel; operator: resolve a hold (retry or cancel).
import { useQuery } from '@tanstack/preact-query';
import type { SubscriptionDetail, SubscriptionRowView } from '../../contract/subscriptions.js';
import type { PageProps } from '../lib/page-props.js';
import { ConfirmButton } from '../components/confirm.js';
import { type FilterField, Filters, MODES } from '../components/filters.js';
import { Badge, ExternalLink, KeyValues, Link, PageHeader, Section } from '../components/page.js';
import { Empty, QueryView } from '../components/states.js';
import { type Column, DataTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { formatTime, money, short } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';
import { useAction } from '../lib/mutation.js';
import { hrefFor } from '../lib/router.js';

const STATUSES = ['incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'canceled'] as const;

export default function SubscriptionsPage(props: PageProps) {
  if (props.params[0]) return <SubscriptionView id={props.params[0]} operator={props.me.user.role === 'operator'} />;
  return <SubscriptionsList {...props} />;
}

function SubscriptionsList(props: PageProps) {
  const { t, lang } = useI18n();
  const fields: FilterField[] = [
    { name: 'status', label: 'field.status', type: 'select', options: STATUSES },
    { name: 'mode', label: 'field.mode', type: 'select', options: MODES },
  ];
  if (props.me.user.role === 'operator') fields.push({ name: 'merchant_id', label: 'field.merchant' });
  const columns: Column<SubscriptionRowView>[] = [
    {
      key: 'id',
      label: 'field.id',
      render: (r) => (
        <Link to={hrefFor(['subscriptions', r.id])} testId={`subscriptions-link-${r.id}`}>
          {r.id}
        </Link>
      ),
    },
    { key: 'status', label: 'field.status', render: (r) => <Badge value={r.status} testId="subscription-status" /> },
    { key: 'customer', label: 'field.customer', render: (r) => r.customer_email ?? r.customer },
    { key: 'product', label: 'field.product', render: (r) => r.product },
    { key: 'amount', label: 'field.amount', render: (r) => `${money(r.amount, r.currency)} / ${r.interval}` },
    {
      key: 'next',
      label: 'field.nextAction',
      render: (r) => (r.next_action ? `${r.next_action} ${formatTime(r.next_action_at, lang)}` : '—'),
    },
    { key: 'hold', label: 'field.hold', render: (r) => (r.hold ? <Badge value="held" /> : '—') },
    { key: 'created', label: 'field.created', render: (r) => formatTime(r.created_at, lang) },
  ];
  return (
    <>
      <PageHeader title={t('nav.subscriptions')} />
      <Filters fields={fields} testId="subscriptions-filters" />
      <DataTable area="subscriptions" path="subscriptions" columns={columns} rowKey={(r) => r.id} caption={t('nav.subscriptions')} />
    </>
  );
}

function SubscriptionView({ id, operator }: { id: string; operator: boolean }) {
  const { t, lang } = useI18n();
  const path = `subscriptions/${encodeURIComponent(id)}`;
  const query = useQuery({ queryKey: ['subscription', id], queryFn: () => api.get<SubscriptionDetail>(path) });
  const cancel = useAction(() => api.post(`${path}/cancel`, {}), [['subscription', id], ['subscriptions']]);
  const resolve = useAction(
    (action: 'retry' | 'cancel') => api.post(`${path}/resolve`, { action }),
    [['subscription', id], ['subscriptions']],
  );
  return (
    <>
      <PageHeader title={t('subscriptions.detailTitle', { id })}>
        <a href={hrefFor(['subscriptions'])}>{t('action.back')}</a>
      </PageHeader>
      <QueryView query={query}>
        {(d) => {
          const s = d.subscription as Record<string, unknown>;
          const status = String(s.status ?? '');
          return (
            <>
              <Section title={t('payments.summary')} testId="subscription-summary">
                <KeyValues
                  rows={[
                    [t('field.status'), <Badge key="s" value={status} testId="subscription-status" />],
                    [t('field.merchant'), d.merchant_id],
                    [t('field.mode'), d.mode],
                    [t('field.nextAction'), d.next_action ? `${d.next_action} ${formatTime(d.next_action_at, lang)}` : '—'],
                    [t('field.hold'), d.hold ? `${d.hold.reason} (${formatTime(d.hold.since, lang)})` : '—'],
                  ]}
                />
                <div class="page-actions">
                  {status !== 'canceled' && status !== 'incomplete_expired' ? (
                    <ConfirmButton
                      label={t('subscriptions.cancel')}
                      title={t('subscriptions.cancel')}
                      onConfirm={() => cancel.mutateAsync(undefined)}
                      pending={cancel.isPending}
                      error={cancel.error}
                      testId="subscription-cancel"
                      danger
                    >
                      <p>{t('subscriptions.cancelBody', { id })}</p>
                    </ConfirmButton>
                  ) : null}
                  {operator && d.hold ? (
                    <>
                      <ConfirmButton
                        label={t('subscriptions.resolveRetry')}
                        title={t('subscriptions.resolveRetry')}
                        onConfirm={() => resolve.mutateAsync('retry')}
                        pending={resolve.isPending}
                        error={resolve.error}
                        testId="subscription-resolve-retry"
                      >
                        <p>{t('subscriptions.resolveBody', { reason: d.hold.reason })}</p>
                      </ConfirmButton>
                      <ConfirmButton
                        label={t('subscriptions.resolveCancel')}
                        title={t('subscriptions.resolveCancel')}
                        onConfirm={() => resolve.mutateAsync('cancel')}
                        pending={resolve.isPending}
                        error={resolve.error}
                        testId="subscription-resolve-cancel"
                        danger
                      >
                        <p>{t('subscriptions.resolveBody', { reason: d.hold.reason })}</p>
                      </ConfirmButton>
                    </>
                  ) : null}
                </div>
              </Section>
              <Section title={t('subscriptions.invoices')} testId="subscription-invoices">
                {d.invoices.length === 0 ? (
                  <Empty />
                ) : (
                  <ul class="plain">
                    {d.invoices.map((i) => (
                      <li key={i.id}>
                        #{i.period_number} <Badge value={i.status} /> {money(i.amount_due, i.currency)} · {t('field.paid')}{' '}
                        {money(i.amount_paid, i.currency)} · {t('subscriptions.attempts', { n: i.attempt_count })} ·{' '}
                        {formatTime(i.due_date, lang)}
                      </li>
                    ))}
                  </ul>
                )}
              </Section>
              <Section title={t('subscriptions.charges')} testId="subscription-charges">
                {d.charges.length === 0 ? (
                  <Empty />
                ) : (
                  <ul class="plain">
                    {d.charges.map((c) => (
                      <li key={c.id}>
                        <Badge value={c.state} /> {c.amount ? money(c.amount, c.token) : c.amount_base} {c.network}{' '}
                        <ExternalLink href={c.explorer_url}>{short(c.transaction_hash)}</ExternalLink> {c.failure_reason ?? ''}{' '}
                        {formatTime(c.created_at, lang)}
                      </li>
                    ))}
                  </ul>
                )}
              </Section>
              <Section title={t('subscriptions.methods')} testId="subscription-methods">
                {d.payment_methods.length === 0 ? (
                  <Empty />
                ) : (
                  <ul class="plain">
                    {d.payment_methods.map((m) => (
                      <li key={m.id}>
                        <Badge value={m.status} /> {m.network} {m.token} <span class="mono">{short(m.owner_address)}</span> ·{' '}
                        {t('subscriptions.allowance')} {m.allowance ?? m.allowance_base}
                      </li>
                    ))}
                  </ul>
                )}
              </Section>
            </>
          );
        }}
      </QueryView>
    </>
  );
}
