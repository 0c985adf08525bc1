// Webhooks: the endpoint (URL edit, rotate the secret: shown once), the deliveries log (filters, resend one, resend
// every failed one since a date) and, at #/webhooks/<event_id>, one delivery with its body and attempts.
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { DeliveryDetail, DeliveryRow, ResendFailed, WebhookEndpoint, WebhookSecretRotation } from '../../contract/webhooks.js';
import type { PageProps } from '../lib/page-props.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { ConfirmButton } from '../components/confirm.js';
import { Dialog, SecretOnce } from '../components/dialog.js';
import { type FilterField, Filters } from '../components/filters.js';
import { Badge, KeyValues, Link, PageHeader, Section } from '../components/page.js';
import { Empty, ErrorBox, QueryView } from '../components/states.js';
import { type Column, DataTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { formatTime } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';
import { useAction } from '../lib/mutation.js';
import { hrefFor, useQueryState } from '../lib/router.js';

const STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const;

export default function WebhooksPage(props: PageProps) {
  const { t, lang } = useI18n();
  const [state] = useQueryState();
  if (props.params[0]) return <DeliveryView eventId={props.params[0]} />;
  const operator = props.me.user.role === 'operator';
  const merchantId = operator ? state.merchant_id : (props.me.user.merchant_id ?? undefined);
  const fields: FilterField[] = [
    { name: 'status', label: 'field.status', type: 'select', options: STATUSES },
    { name: 'type', label: 'field.type' },
    { name: 'since', label: 'field.since', type: 'date' },
  ];
  if (operator) fields.unshift({ name: 'merchant_id', label: 'field.merchant' });
  const columns: Column<DeliveryRow>[] = [
    {
      key: 'event',
      label: 'field.event',
      render: (r) => (
        <Link to={hrefFor(['webhooks', r.event_id])} testId={`webhooks-link-${r.event_id}`}>
          {r.event_id}
        </Link>
      ),
    },
    { key: 'type', label: 'field.type', render: (r) => r.type },
    { key: 'status', label: 'field.status', render: (r) => <Badge value={r.status} testId="delivery-status" /> },
    { key: 'attempts', label: 'field.attempts', render: (r) => String(r.attempts) },
    { key: 'code', label: 'field.responseCode', render: (r) => r.last_response_code ?? r.last_error ?? '—' },
    { key: 'latency', label: 'field.latency', render: (r) => (r.latency_ms === null ? '—' : `${r.latency_ms} ms`) },
    { key: 'excerpt', label: 'field.response', render: (r) => <span class="excerpt">{r.body_excerpt ?? ''}</span> },
    { key: 'created', label: 'field.created', render: (r) => formatTime(r.created_at, lang) },
    { key: 'resend', label: 'field.actions', render: (r) => <ResendButton eventId={r.event_id} /> },
  ];
  return (
    <>
      <PageHeader title={t('nav.webhooks')} />
      {merchantId ? <EndpointSection merchantId={merchantId} operator={operator} /> : <p>{t('webhooks.pickMerchant')}</p>}
      <Section title={t('webhooks.deliveries')} testId="webhooks-deliveries">
        <Filters fields={fields} testId="webhooks-filters" />
        <ResendFailedForm merchantId={merchantId} />
        <DataTable
          area="webhooks"
          path="webhooks/deliveries"
          columns={columns}
          rowKey={(r) => r.event_id}
          caption={t('webhooks.deliveries')}
        />
      </Section>
    </>
  );
}

function ResendButton({ eventId }: { eventId: string }) {
  const { t } = useI18n();
  const resend = useAction(() => api.post(`webhooks/deliveries/${encodeURIComponent(eventId)}/resend`), [['webhooks']]);
  return (
    <>
      <button
        type="button"
        class="btn btn-small"
        disabled={resend.isPending}
        onClick={() => resend.mutate(undefined)}
        data-testid={`resend-${eventId}`}
      >
        {resend.isSuccess ? t('webhooks.resent') : t('webhooks.resend')}
      </button>
      {resend.error ? <ErrorBox error={resend.error} /> : null}
    </>
  );
}

function EndpointSection({ merchantId, operator }: { merchantId: string; operator: boolean }) {
  const { t, lang } = useI18n();
  const query = useQuery({
    queryKey: ['webhook-endpoint', merchantId],
    queryFn: () => api.get<WebhookEndpoint>('webhooks/endpoint', { merchant_id: merchantId }),
  });
  const [url, setUrl] = useState<string | null>(null);
  const [overlap, setOverlap] = useState('24');
  const [secret, setSecret] = useState<string | null>(null);
  const mid = operator ? { merchant_id: merchantId } : {};
  const save = useAction(
    () => api.put('webhooks/endpoint', { url: url?.trim() || null, ...mid }),
    [['webhook-endpoint']],
    () => setUrl(null),
  );
  const rotate = useAction(
    () => api.post<WebhookSecretRotation>('webhooks/rotate-secret', { overlap_hours: Number.parseInt(overlap, 10) || 0, ...mid }),
    [['webhook-endpoint']],
    (r) => setSecret(r.secret),
  );
  return (
    <Section title={t('webhooks.endpoint')} testId="webhooks-endpoint">
      <QueryView query={query}>
        {(ep) => (
          <>
            <KeyValues
              rows={[
                [
                  t('field.url'),
                  <span key="u" class="mono wrap" data-testid="webhook-url">
                    {ep.url ?? '—'}
                  </span>,
                ],
                [
                  t('webhooks.secretPrefix'),
                  <span key="s" class="mono">
                    {ep.secret_prefix}…
                  </span>,
                ],
                [t('webhooks.previousUntil'), formatTime(ep.previous_secret_expires_at, lang)],
              ]}
            />
            <form
              class="form form-inline"
              onSubmit={(e) => {
                e.preventDefault();
                save.mutate(undefined);
              }}
            >
              <div class="field">
                <label for="webhook-url-input">{t('webhooks.newUrl')}</label>
                <input
                  id="webhook-url-input"
                  type="url"
                  value={url ?? ep.url ?? ''}
                  onInput={(e) => setUrl(e.currentTarget.value)}
                  data-testid="webhook-url-input"
                />
              </div>
              <button type="submit" class="btn btn-primary" disabled={save.isPending || url === null} data-testid="webhook-url-save">
                {t('action.save')}
              </button>
            </form>
            {save.error ? <ErrorBox error={save.error} /> : null}
            {save.isSuccess ? <p role="status">{t('action.saved')}</p> : null}
            <ConfirmButton
              label={t('webhooks.rotate')}
              title={t('webhooks.rotate')}
              onConfirm={() => rotate.mutateAsync(undefined)}
              pending={rotate.isPending}
              error={rotate.error}
              testId="webhook-rotate"
              danger
            >
              <p>{t('webhooks.rotateBody')}</p>
              <div class="field">
                <label for="rotate-overlap">{t('webhooks.overlap')}</label>
                <input id="rotate-overlap" inputMode="numeric" value={overlap} onInput={(e) => setOverlap(e.currentTarget.value)} />
              </div>
            </ConfirmButton>
            <Dialog title={t('webhooks.newSecret')} open={secret !== null} onClose={() => setSecret(null)} testId="webhook-secret-dialog">
              {secret ? <SecretOnce label={t('webhooks.newSecret')} value={secret} testId="webhook-secret" /> : null}
            </Dialog>
          </>
        )}
      </QueryView>
    </Section>
  );
}

function ResendFailedForm({ merchantId }: { merchantId: string | undefined }) {
  const { t } = useI18n();
  const [since, setSince] = useState('');
  const run = useAction(
    () =>
      api.post<ResendFailed>('webhooks/resend-failed', {
        since: `${since}T00:00:00.000Z`,
        ...(merchantId ? { merchant_id: merchantId } : {}),
      }),
    [['webhooks']],
  );
  return (
    <form
      class="form form-inline"
      onSubmit={(e) => {
        e.preventDefault();
        if (since) run.mutate(undefined);
      }}
    >
      <div class="field">
        <label for="resend-since">{t('webhooks.resendFailedSince')}</label>
        <input
          id="resend-since"
          type="date"
          required
          value={since}
          onInput={(e) => setSince(e.currentTarget.value)}
          data-testid="resend-failed-since"
        />
      </div>
      <button type="submit" class="btn" disabled={run.isPending} data-testid="resend-failed">
        {t('webhooks.resendFailed')}
      </button>
      {run.data ? <span role="status">{t('webhooks.resentCount', { n: run.data.resent })}</span> : null}
      {run.error ? <ErrorBox error={run.error} /> : null}
    </form>
  );
}

function DeliveryView({ eventId }: { eventId: string }) {
  const { t, lang } = useI18n();
  const query = useQuery({
    queryKey: ['webhooks', 'delivery', eventId],
    queryFn: () => api.get<DeliveryDetail>(`webhooks/deliveries/${encodeURIComponent(eventId)}`),
  });
  return (
    <>
      <PageHeader title={t('webhooks.deliveryTitle', { id: eventId })}>
        <a href={hrefFor(['webhooks'])}>{t('action.back')}</a>
      </PageHeader>
      <QueryView query={query}>
        {(d) => (
          <>
            <Section title={t('payments.summary')}>
              <KeyValues
                rows={[
                  [t('field.type'), d.delivery.type],
                  [t('field.status'), <Badge key="s" value={d.delivery.status} testId="delivery-status" />],
                  [t('field.attempts'), String(d.delivery.attempts)],
                  [t('webhooks.nextAttempt'), formatTime(d.next_attempt_at, lang)],
                ]}
              />
              <ResendButton eventId={eventId} />
            </Section>
            <Section title={t('webhooks.attemptsTitle')}>
              {d.attempts.length === 0 ? (
                <Empty />
              ) : (
                <ol class="timeline">
                  {d.attempts.map((a) => (
                    <li key={a.id}>
                      <time dateTime={a.created_at}>{formatTime(a.created_at, lang)}</time> <Badge value={a.outcome} />{' '}
                      {a.status_code ?? a.error ?? ''} {a.latency_ms === null ? '' : `${a.latency_ms} ms`}{' '}
                      <span class="excerpt">{a.response_excerpt ?? ''}</span>
                    </li>
                  ))}
                </ol>
              )}
            </Section>
            <Section title={t('webhooks.body')}>
              <ScrollRegion kind="code" label={t('webhooks.body')}>
                <pre class="code-pre">{d.body}</pre>
              </ScrollRegion>
            </Section>
          </>
        )}
      </QueryView>
    </>
  );
}
