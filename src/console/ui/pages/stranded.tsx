// Stranded money: unmatched deposits and what expired or canceled sessions received; refund to the sender or a
// typed address, after a preview (amount, token, network, destination) and an explicit confirmation.
import { useState } from 'preact/hooks';
import type { StrandedPreview, StrandedRow } from '../../contract/stranded.js';
import type { PageProps } from '../lib/page-props.js';
import { Dialog } from '../components/dialog.js';
import { type FilterField, Filters, NETWORKS } from '../components/filters.js';
import { Badge, KeyValues, Link, PageHeader } from '../components/page.js';
import { ErrorBox } from '../components/states.js';
import { type Column, DataTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { formatTime, money, short } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';
import { useLive } from '../lib/live.js';
import { useAction } from '../lib/mutation.js';
import { hrefFor } from '../lib/router.js';

export default function StrandedPage({ me }: PageProps) {
  const { t, lang } = useI18n();
  useLive(['payments', 'refunds']);
  const [target, setTarget] = useState<StrandedRow | null>(null);
  const fields: FilterField[] = [
    { name: 'kind', label: 'field.kind', type: 'select', options: ['deposit', 'session'] },
    { name: 'network', label: 'field.network', type: 'select', options: NETWORKS },
  ];
  if (me.user.role === 'operator') fields.push({ name: 'merchant_id', label: 'field.merchant' });
  const columns: Column<StrandedRow>[] = [
    { key: 'kind', label: 'field.kind', render: (r) => r.kind },
    { key: 'id', label: 'field.id', render: (r) => <span class="mono">{short(r.id)}</span> },
    { key: 'received', label: 'field.received', render: (r) => money(r.received, r.token) },
    { key: 'refundable', label: 'field.refundable', render: (r) => money(r.refundable, r.token) },
    { key: 'network', label: 'field.network', render: (r) => `${r.network} (${r.mode})` },
    { key: 'sender', label: 'field.sender', render: (r) => <span class="mono">{short(r.sender)}</span> },
    {
      key: 'reason',
      label: 'field.reason',
      render: (r) =>
        r.notice ? (
          <span data-testid={`stranded-notice-${r.id}`}>
            {r.reason}: {r.notice}
          </span>
        ) : (
          r.reason
        ),
    },
    {
      key: 'session',
      label: 'field.payment',
      render: (r) => (r.session_id ? <Link to={hrefFor(['payments', r.session_id])}>{r.session_id}</Link> : '—'),
    },
    { key: 'refunds', label: 'nav.refunds', render: (r) => r.refunds.map((x) => <Badge key={x.id} value={x.status} />) },
    { key: 'at', label: 'field.at', render: (r) => formatTime(r.at, lang) },
    {
      key: 'act',
      label: 'field.actions',
      render: (r) =>
        r.refundable && r.refundable !== '0' ? (
          <button type="button" class="btn btn-small" onClick={() => setTarget(r)} data-testid={`stranded-refund-${r.id}`}>
            {t('payments.refund')}
          </button>
        ) : null,
    },
  ];
  return (
    <>
      <PageHeader title={t('nav.stranded')} />
      <p>{t('stranded.intro')}</p>
      <Filters fields={fields} testId="stranded-filters" />
      <DataTable area="stranded" path="stranded" columns={columns} rowKey={(r) => `${r.kind}-${r.id}`} caption={t('nav.stranded')} />
      {target ? <StrandedRefund row={target} onClose={() => setTarget(null)} /> : null}
    </>
  );
}

function StrandedRefund({ row, onClose }: { row: StrandedRow; onClose: () => void }) {
  const { t } = useI18n();
  const [destination, setDestination] = useState('');
  const [preview, setPreview] = useState<StrandedPreview | null>(null);
  const [done, setDone] = useState(false);
  const path = `stranded/${row.kind}/${encodeURIComponent(row.id)}/refund`;
  const body = () => ({ destination: destination.trim() || undefined });
  const ask = useAction(() => api.post<StrandedPreview>(path, body()), [], setPreview);
  const send = useAction(
    () => api.post(path, { ...body(), confirm: true }),
    [['stranded'], ['refunds']],
    () => setDone(true),
  );
  return (
    <Dialog title={t('stranded.refundTitle')} open onClose={onClose} testId="stranded-dialog">
      {done ? (
        <p role="status" data-testid="stranded-done">
          {t('stranded.done')}
        </p>
      ) : preview ? (
        <div data-testid="stranded-preview">
          <KeyValues
            rows={[
              [t('field.amount'), money(preview.amount, preview.token)],
              [t('field.token'), preview.token],
              [t('field.network'), preview.network],
              [
                t('field.destination'),
                <span key="d" class="mono wrap">
                  {preview.destination}
                </span>,
              ],
            ]}
          />
          {send.error ? <ErrorBox error={send.error} /> : null}
          <button type="button" class="btn" onClick={() => setPreview(null)}>
            {t('action.back')}
          </button>{' '}
          <button
            type="button"
            class="btn btn-danger"
            disabled={send.isPending}
            onClick={() => send.mutate(undefined)}
            data-testid="stranded-confirm"
          >
            {t('payments.refundSubmit')}
          </button>
        </div>
      ) : (
        <form
          class="form"
          onSubmit={(e) => {
            e.preventDefault();
            ask.mutate(undefined);
          }}
        >
          <div class="field">
            <label for="stranded-destination">{t('stranded.destination')}</label>
            <input
              id="stranded-destination"
              value={destination}
              placeholder={row.sender ?? ''}
              onInput={(e) => setDestination(e.currentTarget.value)}
              data-testid="stranded-destination"
            />
            <small>{t('stranded.destinationHelp')}</small>
          </div>
          {ask.error ? <ErrorBox error={ask.error} /> : null}
          <button type="submit" class="btn btn-primary" disabled={ask.isPending} data-testid="stranded-preview-button">
            {t('action.review')}
          </button>
        </form>
      )}
    </Dialog>
  );
}
