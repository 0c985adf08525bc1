// One payment: summary, timeline, deposits (explorer links), webhook deliveries (resend), refunds; actions: refund
// (amount, reason, then a confirmation step) and cancel. Live: `payment:<id>`.
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { PaymentDetail as Detail } from '../../contract/payments.js';
import type { ConsoleRefund } from '../../contract/refunds.js';
import { ConfirmButton } from '../components/confirm.js';
import { Dialog } from '../components/dialog.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { Badge, ExternalLink, KeyValues, Link, PageHeader, Section } from '../components/page.js';
import { Empty, ErrorBox, QueryView } from '../components/states.js';
import { api } from '../lib/api.js';
import type { AuthState } from '../lib/auth.js';
import { formatTime, money, short } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';
import { useLive } from '../lib/live.js';
import { useAction } from '../lib/mutation.js';
import { hrefFor } from '../lib/router.js';

const REASONS = ['requested_by_customer', 'duplicate', 'fraudulent'] as const;

function newRefundId(): string {
  // getRandomValues works in every context (randomUUID only in secure ones).
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `console_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export default function PaymentDetail({ id }: { id: string; me: AuthState }) {
  const { t, lang } = useI18n();
  useLive([`payment:${id}`]);
  const query = useQuery({ queryKey: ['payment', id], queryFn: () => api.get<Detail>(`payments/${encodeURIComponent(id)}`) });
  const cancel = useAction(() => api.post(`payments/${encodeURIComponent(id)}/cancel`), [['payment', id], ['payments']]);
  const resend = useAction((eventId: string) => api.post(`webhooks/deliveries/${encodeURIComponent(eventId)}/resend`), [['payment', id]]);
  return (
    <>
      <PageHeader title={t('payments.detailTitle', { id })}>
        <a href={hrefFor(['payments'])}>{t('action.back')}</a>
      </PageHeader>
      <QueryView query={query}>
        {(d) => {
          const s = d.session;
          const token = s.target_currency ?? d.deposits[0]?.token ?? null;
          return (
            <>
              <div class="page-actions">
                {d.deposits.some((dep) => dep.unsupported === null) ? (
                  <RefundAction id={id} token={token} network={d.deposits[0]?.network ?? null} />
                ) : null}
                {s.status === 'open' ? (
                  <ConfirmButton
                    label={t('payments.cancel')}
                    title={t('payments.cancelTitle')}
                    onConfirm={() => cancel.mutateAsync(undefined)}
                    pending={cancel.isPending}
                    error={cancel.error}
                    testId="payment-cancel"
                    danger
                  >
                    <p>{t('payments.cancelBody', { id })}</p>
                  </ConfirmButton>
                ) : null}
              </div>
              <Section title={t('payments.summary')} testId="payment-summary">
                <KeyValues
                  rows={[
                    [t('field.status'), <Badge key="s" value={s.status} testId="payment-status" />],
                    [t('field.amount'), money(s.amount_total, s.currency)],
                    [t('field.target'), money(s.target_amount_total ?? null, s.target_currency ?? null)],
                    [t('field.orderId'), String(s.metadata?.order_id ?? '—')],
                    [t('field.merchant'), d.merchant_id],
                    [t('field.mode'), d.mode],
                    [t('field.created'), formatTime(new Date(s.created * 1000).toISOString(), lang)],
                    [t('field.expires'), formatTime(new Date(s.expires_at * 1000).toISOString(), lang)],
                  ]}
                />
              </Section>
              <Section title={t('payments.timeline')} testId="payment-timeline">
                {d.timeline.length === 0 ? (
                  <Empty />
                ) : (
                  <ol class="timeline">
                    {d.timeline.map((e, i) => (
                      <li key={`${e.at}-${i}`} data-testid={`timeline-${e.kind}`}>
                        <time dateTime={e.at}>{formatTime(e.at, lang)}</time> <strong>{t(`timeline.${e.kind}`)}</strong> {e.detail}
                      </li>
                    ))}
                  </ol>
                )}
              </Section>
              <Section title={t('payments.deposits')} testId="payment-deposits">
                {d.deposits.length === 0 ? (
                  <Empty />
                ) : (
                  <ScrollRegion label={t('payments.deposits')}>
                    <table class="table">
                      <thead>
                        <tr>
                          <th scope="col">{t('field.txHash')}</th>
                          <th scope="col">{t('field.amount')}</th>
                          <th scope="col">{t('field.status')}</th>
                          <th scope="col">{t('field.confirmations')}</th>
                          <th scope="col">{t('field.from')}</th>
                          <th scope="col">{t('field.at')}</th>
                        </tr>
                      </thead>
                      <tbody>
                        {d.deposits.map((dep) => (
                          <tr key={dep.id} data-testid={`deposit-row-${dep.id}`}>
                            <td class="mono">
                              <ExternalLink href={dep.explorer_url}>{short(dep.tx_hash)}</ExternalLink>
                            </td>
                            <td>
                              {dep.amount ? money(dep.amount, dep.token) : `${dep.amount_base} (base)`}
                              {dep.unsupported ? (
                                <div data-testid={`deposit-unsupported-${dep.id}`} title={dep.unsupported.note}>
                                  <Badge value="unsupported_token" /> {t('payments.unsupportedToken')}: {dep.unsupported.note}
                                </div>
                              ) : null}
                            </td>
                            <td>
                              <Badge value={dep.status} />
                            </td>
                            <td>{dep.confirmations ?? '—'}</td>
                            <td class="mono">{short(dep.from_address)}</td>
                            <td>{formatTime(dep.at, lang)}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </ScrollRegion>
                )}
              </Section>
              <Section title={t('payments.webhooks')} testId="payment-webhooks">
                {resend.error ? <ErrorBox error={resend.error} /> : null}
                {d.webhook_deliveries.length === 0 ? (
                  <Empty />
                ) : (
                  <ul class="plain">
                    {d.webhook_deliveries.map((w) => (
                      <li key={w.event_id}>
                        <span class="mono">{w.type}</span> <Badge value={w.status} /> {t('webhooks.attempts', { n: w.attempts })}{' '}
                        {w.last_response_code ?? ''} {formatTime(w.last_attempt_at, lang)}{' '}
                        <button
                          type="button"
                          class="btn btn-small"
                          disabled={resend.isPending}
                          onClick={() => resend.mutate(w.event_id)}
                          data-testid={`resend-${w.event_id}`}
                        >
                          {t('webhooks.resend')}
                        </button>
                      </li>
                    ))}
                  </ul>
                )}
              </Section>
              <Section title={t('nav.refunds')} testId="payment-refunds">
                <RefundList refunds={d.refunds} />
              </Section>
            </>
          );
        }}
      </QueryView>
    </>
  );
}

function RefundList({ refunds }: { refunds: ConsoleRefund[] }) {
  const { lang } = useI18n();
  if (refunds.length === 0) return <Empty />;
  return (
    <ul class="plain">
      {refunds.map((r) => (
        <li key={r.id}>
          <Link to={hrefFor(['refunds', r.id])} testId={`refund-link-${r.id}`}>
            {r.refund_id}
          </Link>{' '}
          {money(r.amount, r.token)} <Badge value={r.status} /> {formatTime(r.created_at, lang)}
        </li>
      ))}
    </ul>
  );
}

function RefundAction({ id, token, network }: { id: string; token: string | null; network: string | null }) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const [step, setStep] = useState<'form' | 'confirm'>('form');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState<string>('requested_by_customer');
  const [description, setDescription] = useState('');
  // The refund's idempotency key: one per dialog, so sending the same refund again (a retry) cannot pay twice.
  const [refundId, setRefundId] = useState(() => newRefundId());
  const refund = useAction(
    () =>
      api.post(`payments/${encodeURIComponent(id)}/refund`, {
        amount: amount || undefined,
        reason,
        description: description || undefined,
        refund_id: refundId,
      }),
    [['payment', id], ['refunds']],
    () => {
      setOpen(false);
      setStep('form');
      setRefundId(newRefundId());
    },
  );
  return (
    <>
      <button type="button" class="btn" onClick={() => setOpen(true)} data-testid="payment-refund">
        {t('payments.refund')}
      </button>
      <Dialog
        title={t('payments.refundTitle')}
        open={open}
        onClose={() => {
          setOpen(false);
          setStep('form');
        }}
        testId="refund-dialog"
      >
        {step === 'form' ? (
          <form
            class="form"
            onSubmit={(e) => {
              e.preventDefault();
              setStep('confirm');
            }}
          >
            <div class="field">
              <label for="refund-amount">{t('payments.refundAmount', { token: token ?? '' })}</label>
              <input
                id="refund-amount"
                inputMode="decimal"
                pattern="\d+(\.\d+)?"
                value={amount}
                placeholder={t('payments.refundAll')}
                onInput={(e) => setAmount(e.currentTarget.value)}
                data-testid="refund-amount"
              />
            </div>
            <div class="field">
              <label for="refund-reason">{t('field.reason')}</label>
              <select id="refund-reason" value={reason} onChange={(e) => setReason(e.currentTarget.value)} data-testid="refund-reason">
                {REASONS.map((r) => (
                  <option key={r} value={r}>
                    {t(`reason.${r}`)}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="refund-description">{t('field.description')}</label>
              <input id="refund-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
            </div>
            <button type="submit" class="btn btn-primary" data-testid="refund-next">
              {t('action.review')}
            </button>
          </form>
        ) : (
          <div>
            <p data-testid="refund-summary">
              {t('payments.refundConfirm', { amount: amount || t('payments.refundAll'), token: token ?? '', network: network ?? '', id })}
            </p>
            {refund.error ? <ErrorBox error={refund.error} /> : null}
            <button type="button" class="btn" onClick={() => setStep('form')}>
              {t('action.back')}
            </button>{' '}
            <button
              type="button"
              class="btn btn-danger"
              disabled={refund.isPending}
              onClick={() => refund.mutate(undefined)}
              data-testid="refund-confirm"
            >
              {t('payments.refundSubmit')}
            </button>
          </div>
        )}
      </Dialog>
    </>
  );
}
