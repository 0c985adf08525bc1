// Audit: every console and CLI action (operator: all; merchant user: its merchant's), newest first, with filters.
import type { AuditRowView } from '../../contract/audit.js';
import type { PageProps } from '../lib/page-props.js';
import { type FilterField, Filters } from '../components/filters.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { PageHeader } from '../components/page.js';
import { type Column, DataTable } from '../components/table.js';
import { formatTime } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';

export default function AuditPage({ me }: PageProps) {
  const { t, lang } = useI18n();
  const fields: FilterField[] = [
    { name: 'action', label: 'audit.action' },
    { name: 'object_type', label: 'audit.objectType' },
    { name: 'object_id', label: 'audit.objectId' },
    { name: 'actor_id', label: 'audit.actor' },
    { name: 'from', label: 'field.from', type: 'date' },
    { name: 'to', label: 'field.to', type: 'date' },
  ];
  if (me.user.role === 'operator') fields.push({ name: 'merchant_id', label: 'field.merchant' });
  const columns: Column<AuditRowView>[] = [
    { key: 'at', label: 'field.at', render: (r) => formatTime(r.at, lang) },
    { key: 'actor', label: 'audit.actor', render: (r) => `${r.actor_email ?? r.actor_id ?? '—'} (${r.actor_kind})` },
    { key: 'action', label: 'audit.action', render: (r) => <span class="mono">{r.action}</span> },
    { key: 'object', label: 'audit.object', render: (r) => `${r.object_type} ${r.object_id ?? ''}` },
    { key: 'merchant', label: 'field.merchant', render: (r) => r.merchant_id ?? '—' },
    { key: 'ip', label: 'audit.ip', render: (r) => r.ip ?? '—' },
    {
      key: 'change',
      label: 'audit.change',
      render: (r) =>
        r.before !== null || r.after !== null ? (
          <details>
            <summary>{t('audit.show')}</summary>
            <ScrollRegion kind="code" label={t('audit.change')}>
              <pre class="code-pre">{JSON.stringify({ before: r.before, after: r.after }, null, 2)}</pre>
            </ScrollRegion>
          </details>
        ) : (
          (r.detail ?? '—')
        ),
    },
  ];
  return (
    <>
      <PageHeader title={t('nav.audit')} />
      <Filters fields={fields} testId="audit-filters" />
      <DataTable area="audit" path="audit" columns={columns} rowKey={(r) => r.id} caption={t('nav.audit')} />
    </>
  );
}
