// Users (operator): the console's accounts; create (the temporary password shown once), disable, reset (a new
// temporary password; TOTP, sessions and recovery codes cleared).
import { useState } from 'preact/hooks';
import type { ConsoleUserRow, UserCreated, UserReset } from '../../contract/users.js';
import type { PageProps } from '../lib/page-props.js';
import { ConfirmButton } from '../components/confirm.js';
import { Dialog, SecretOnce } from '../components/dialog.js';
import { Badge, PageHeader, Section } from '../components/page.js';
import { Select } from '../components/select.js';
import { ErrorBox } from '../components/states.js';
import { type Column, DataTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { formatTime } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';
import { useAction } from '../lib/mutation.js';

export default function UsersPage({ me }: PageProps) {
  const { t, lang } = useI18n();
  const [password, setPassword] = useState<{ email: string; password: string } | null>(null);
  const columns: Column<ConsoleUserRow>[] = [
    { key: 'email', label: 'auth.email', render: (r) => r.email },
    { key: 'role', label: 'users.role', render: (r) => r.role },
    { key: 'merchant', label: 'field.merchant', render: (r) => r.merchant_id ?? '—' },
    { key: 'totp', label: 'users.totp', render: (r) => (r.totp_enabled ? t('users.yes') : t('users.no')) },
    { key: 'state', label: 'field.status', render: (r) => <Badge value={r.disabled ? 'disabled' : 'active'} testId="user-status" /> },
    { key: 'created', label: 'field.created', render: (r) => formatTime(r.created_at, lang) },
    {
      key: 'act',
      label: 'field.actions',
      render: (r) =>
        r.disabled || r.id === me.user.id ? null : (
          <UserActions user={r} onPassword={(p) => setPassword({ email: r.email, password: p })} />
        ),
    },
  ];
  return (
    <>
      <PageHeader title={t('nav.users')} />
      <CreateUser onCreated={(c) => setPassword({ email: c.user.email, password: c.password })} />
      <Section title={t('users.list')}>
        <DataTable area="users" path="users" columns={columns} rowKey={(r) => r.id} caption={t('users.list')} />
      </Section>
      <Dialog title={t('users.tempPassword')} open={password !== null} onClose={() => setPassword(null)} testId="user-password-dialog">
        {password ? <SecretOnce label={password.email} value={password.password} testId="user-password" /> : null}
      </Dialog>
    </>
  );
}

function UserActions({ user, onPassword }: { user: ConsoleUserRow; onPassword: (p: string) => void }) {
  const { t } = useI18n();
  const disable = useAction(() => api.post(`users/${encodeURIComponent(user.id)}/disable`), [['users']]);
  const reset = useAction(
    () => api.post<UserReset>(`users/${encodeURIComponent(user.id)}/reset`),
    [['users']],
    (r) => onPassword(r.password),
  );
  return (
    <span class="row">
      <ConfirmButton
        label={t('users.reset')}
        title={t('users.reset')}
        onConfirm={() => reset.mutateAsync(undefined)}
        pending={reset.isPending}
        error={reset.error}
        testId={`user-reset-${user.id}`}
      >
        <p>{t('users.resetBody', { email: user.email })}</p>
      </ConfirmButton>
      <ConfirmButton
        label={t('users.disable')}
        title={t('users.disable')}
        onConfirm={() => disable.mutateAsync(undefined)}
        pending={disable.isPending}
        error={disable.error}
        testId={`user-disable-${user.id}`}
        danger
      >
        <p>{t('users.disableBody', { email: user.email })}</p>
      </ConfirmButton>
    </span>
  );
}

function CreateUser({ onCreated }: { onCreated: (c: UserCreated) => void }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('merchant');
  const [merchantId, setMerchantId] = useState('');
  const create = useAction(
    () => api.post<UserCreated>('users', { email: email.trim(), role, ...(role === 'merchant' ? { merchant_id: merchantId.trim() } : {}) }),
    [['users']],
    (c) => {
      setEmail('');
      onCreated(c);
    },
  );
  return (
    <Section title={t('users.create')}>
      <form
        class="form form-inline"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate(undefined);
        }}
      >
        <div class="field">
          <label for="user-email">{t('auth.email')}</label>
          <input
            id="user-email"
            type="email"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
            data-testid="user-email"
          />
        </div>
        <Select id="user-role" label={t('users.role')} value={role} options={['merchant', 'operator']} onChange={setRole} />
        {role === 'merchant' ? (
          <div class="field">
            <label for="user-merchant">{t('field.merchant')}</label>
            <input
              id="user-merchant"
              required
              value={merchantId}
              onInput={(e) => setMerchantId(e.currentTarget.value)}
              data-testid="user-merchant"
            />
          </div>
        ) : null}
        <button type="submit" class="btn btn-primary" disabled={create.isPending} data-testid="user-create">
          {t('users.create')}
        </button>
      </form>
      {create.error ? <ErrorBox error={create.error} /> : null}
    </Section>
  );
}
