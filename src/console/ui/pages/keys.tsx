// API keys: the list (never a secret), create (the secret shown once) and revoke (after a confirmation).
import { useState } from 'preact/hooks';
import type { ApiKeyCreated, ApiKeyRow } from '../../contract/keys.js';
import type { PageProps } from '../lib/page-props.js';
import { ConfirmButton } from '../components/confirm.js';
import { Dialog, SecretOnce } from '../components/dialog.js';
import { type FilterField, Filters, MODES } from '../components/filters.js';
import { Badge, PageHeader, Section } from '../components/page.js';
import { ErrorBox } from '../components/states.js';
import { type Column, DataTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { formatTime } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';
import { useAction } from '../lib/mutation.js';

export default function KeysPage({ me }: PageProps) {
  const { t, lang } = useI18n();
  const operator = me.user.role === 'operator';
  const fields: FilterField[] = [{ name: 'mode', label: 'field.mode', type: 'select', options: MODES }];
  if (operator) fields.push({ name: 'merchant_id', label: 'field.merchant' });
  const columns: Column<ApiKeyRow>[] = [
    { key: 'prefix', label: 'keys.prefix', render: (r) => <span class="mono">{r.prefix}…</span> },
    { key: 'mode', label: 'field.mode', render: (r) => r.mode },
    { key: 'merchant', label: 'field.merchant', render: (r) => r.merchant_id },
    { key: 'state', label: 'field.status', render: (r) => <Badge value={r.revoked_at ? 'revoked' : 'active'} testId="key-status" /> },
    { key: 'created', label: 'field.created', render: (r) => formatTime(r.created_at, lang) },
    { key: 'used', label: 'keys.lastUsed', render: (r) => formatTime(r.last_used_at, lang) },
    { key: 'act', label: 'field.actions', render: (r) => (r.revoked_at ? null : <RevokeButton prefix={r.prefix} />) },
  ];
  return (
    <>
      <PageHeader title={t('nav.keys')} />
      <CreateKey operator={operator} />
      <Section title={t('keys.list')}>
        <Filters fields={fields} testId="keys-filters" />
        <DataTable area="keys" path="keys" columns={columns} rowKey={(r) => r.prefix} caption={t('keys.list')} />
      </Section>
    </>
  );
}

function RevokeButton({ prefix }: { prefix: string }) {
  const { t } = useI18n();
  const revoke = useAction(() => api.post(`keys/${encodeURIComponent(prefix)}/revoke`), [['keys']]);
  return (
    <ConfirmButton
      label={t('keys.revoke')}
      title={t('keys.revoke')}
      onConfirm={() => revoke.mutateAsync(undefined)}
      pending={revoke.isPending}
      error={revoke.error}
      testId={`key-revoke-${prefix}`}
      danger
    >
      <p>{t('keys.revokeBody', { prefix })}</p>
    </ConfirmButton>
  );
}

function CreateKey({ operator }: { operator: boolean }) {
  const { t } = useI18n();
  const [mode, setMode] = useState<'test' | 'live'>('test');
  const [merchantId, setMerchantId] = useState('');
  const [created, setCreated] = useState<ApiKeyCreated | null>(null);
  const create = useAction(
    () => api.post<ApiKeyCreated>('keys', { mode, ...(operator ? { merchant_id: merchantId.trim() } : {}) }),
    [['keys']],
    setCreated,
  );
  return (
    <Section title={t('keys.create')}>
      <form
        class="form form-inline"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate(undefined);
        }}
      >
        <div class="field">
          <label for="key-mode">{t('field.mode')}</label>
          <select
            id="key-mode"
            value={mode}
            onChange={(e) => setMode(e.currentTarget.value === 'live' ? 'live' : 'test')}
            data-testid="key-mode"
          >
            {MODES.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        {operator ? (
          <div class="field">
            <label for="key-merchant">{t('field.merchant')}</label>
            <input
              id="key-merchant"
              required
              value={merchantId}
              onInput={(e) => setMerchantId(e.currentTarget.value)}
              data-testid="key-merchant"
            />
          </div>
        ) : null}
        <button type="submit" class="btn btn-primary" disabled={create.isPending} data-testid="key-create">
          {t('keys.create')}
        </button>
      </form>
      {create.error ? <ErrorBox error={create.error} /> : null}
      <Dialog title={t('keys.created')} open={created !== null} onClose={() => setCreated(null)} testId="key-created-dialog">
        {created ? <SecretOnce label={`${created.prefix} (${created.mode})`} value={created.secret} testId="key-secret" /> : null}
      </Dialog>
    </Section>
  );
}
