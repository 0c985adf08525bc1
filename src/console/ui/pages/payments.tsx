// Payments: the list (filters status, network, token, mode, dates, amounts, one search box; sort; keyset pages;
// everything in the URL) and, at #/payments/<id>, the detail. Live: `payments`.
import type { PaymentRow } from '../../contract/payments.js';
import type { PageProps } from '../lib/page-props.js';
import { Exports } from '../components/exports.js';
import { type FilterField, Filters, MODES, NETWORKS, TOKENS } from '../components/filters.js';
import { Badge, Link, PageHeader } from '../components/page.js';
import { type Column, DataTable } from '../components/table.js';
import { formatTime, money, short } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';
import { useLive } from '../lib/live.js';
import { hrefFor } from '../lib/router.js';
import PaymentDetail from './payment-detail.js';

const STATUSES = ['open', 'paid', 'expired', 'canceled'] as const;

export default function PaymentsPage(props: PageProps) {
  if (props.params[0]) return <PaymentDetail id={props.params[0]} me={props.me} />;
  return <PaymentsList {...props} />;
}

function PaymentsList({ me }: PageProps) {
  const { t, lang } = useI18n();
  useLive(['payments']);
  const fields: FilterField[] = [
    { name: 'q', label: 'payments.search', type: 'search', placeholder: t('payments.searchHint') },
    { name: 'status', label: 'field.status', type: 'select', options: STATUSES },
    { name: 'network', label: 'field.network', type: 'select', options: NETWORKS },
    { name: 'token', label: 'field.token', type: 'select', options: TOKENS },
    { name: 'mode', label: 'field.mode', type: 'select', options: MODES },
    { name: 'created_from', label: 'field.from', type: 'date' },
    { name: 'created_to', label: 'field.to', type: 'date' },
    { name: 'amount_min', label: 'field.amountMin' },
    { name: 'amount_max', label: 'field.amountMax' },
  ];
  if (me.user.role === 'operator') fields.push({ name: 'merchant_id', label: 'field.merchant' });
  const columns: Column<PaymentRow>[] = [
    {
      key: 'id',
      label: 'field.id',
      render: (r) => (
        <Link to={hrefFor(['payments', r.id])} testId={`payments-link-${r.id}`}>
          <span class="mono">{r.id}</span>
        </Link>
      ),
    },
    { key: 'status', label: 'field.status', render: (r) => <Badge value={r.status} testId="payment-status" /> },
    { key: 'amount', label: 'field.amount', sort: 'amount', render: (r) => money(r.amount, r.currency) },
    { key: 'received', label: 'field.received', render: (r) => money(r.received, r.token) },
    { key: 'network', label: 'field.network', render: (r) => `${r.network ?? '—'} ${r.token ?? ''}` },
    { key: 'order', label: 'field.orderId', render: (r) => r.order_id },
    { key: 'mode', label: 'field.mode', render: (r) => r.mode },
    { key: 'address', label: 'field.depositAddress', render: (r) => <span class="mono">{short(r.deposit_address)}</span> },
    { key: 'created', label: 'field.created', sort: 'created_at', render: (r) => formatTime(r.created_at, lang) },
  ];
  if (me.user.role === 'operator') columns.splice(2, 0, { key: 'merchant', label: 'field.merchant', render: (r) => r.merchant_id });
  return (
    <>
      <PageHeader title={t('nav.payments')} />
      <Filters fields={fields} testId="payments-filters" />
      <DataTable area="payments" path="payments" columns={columns} rowKey={(r) => r.id} caption={t('nav.payments')} />
      {me.user.role === 'merchant' ? <Exports merchantId={me.user.merchant_id ?? ''} /> : null}
    </>
  );
}
