// Merchants (operator): the list, create (the test key and the webhook secret shown once), and settings (session
// lifetime, underpayment tolerance) at #/merchants/<id>.
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { ConsoleMerchant, MerchantCreated } from '../../contract/merchants.js';
import type { PageProps } from '../lib/page-props.js';
import { Dialog, SecretOnce } from '../components/dialog.js';
import { KeyValues, Link, PageHeader, Section } from '../components/page.js';
import { ErrorBox, QueryView } from '../components/states.js';
import { type Column, DataTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { formatTime } from '../lib/format.js';
import { useI18n } from '../lib/i18n.js';
import { useAction } from '../lib/mutation.js';
import { hrefFor } from '../lib/router.js';

export default function MerchantsPage({ params }: PageProps) {
  const { t, lang } = useI18n();
  if (params[0]) return <MerchantView id={params[0]} />;
  const columns: Column<ConsoleMerchant>[] = [
    {
      key: 'id',
      label: 'field.id',
      render: (r) => (
        <Link to={hrefFor(['merchants', r.id])} testId={`merchants-link-${r.id}`}>
          {r.id}
        </Link>
      ),
    },
    { key: 'name', label: 'field.name', render: (r) => r.name },
    { key: 'webhook', label: 'field.url', render: (r) => <span class="mono">{r.webhook_url ?? '—'}</span> },
    { key: 'lifetime', label: 'merchants.lifetime', render: (r) => `${r.session_lifetime_seconds} s (${r.session_lifetime_source})` },
    { key: 'tolerance', label: 'merchants.tolerance', render: (r) => `${r.underpayment_tolerance_bps} bps` },
    { key: 'created', label: 'field.created', render: (r) => formatTime(r.created_at, lang) },
  ];
  return (
    <>
      <PageHeader title={t('nav.merchants')} />
      <CreateMerchant />
      <Section title={t('merchants.list')}>
        <DataTable area="merchants" path="merchants" columns={columns} rowKey={(r) => r.id} caption={t('merchants.list')} />
      </Section>
    </>
  );
}

function CreateMerchant() {
  const { t } = useI18n();
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [created, setCreated] = useState<MerchantCreated | null>(null);
  const create = useAction(
    () => api.post<MerchantCreated>('merchants', { name: name.trim(), webhook_url: url.trim() || undefined }),
    [['merchants']],
    setCreated,
  );
  return (
    <Section title={t('merchants.create')}>
      <form
        class="form form-inline"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate(undefined);
        }}
      >
        <div class="field">
          <label for="merchant-name">{t('field.name')}</label>
          <input id="merchant-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} data-testid="merchant-name" />
        </div>
        <div class="field">
          <label for="merchant-url">{t('field.url')}</label>
          <input id="merchant-url" type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} data-testid="merchant-url" />
        </div>
        <button type="submit" class="btn btn-primary" disabled={create.isPending} data-testid="merchant-create">
          {t('merchants.create')}
        </button>
      </form>
      {create.error ? <ErrorBox error={create.error} /> : null}
      <Dialog title={t('merchants.created')} open={created !== null} onClose={() => setCreated(null)} testId="merchant-created-dialog">
        {created ? (
          <>
            <p>{created.merchant.id}</p>
            <SecretOnce label={t('merchants.testKey')} value={created.test_key.secret} testId="merchant-key-secret" />
            <SecretOnce label={t('webhooks.newSecret')} value={created.webhook_secret} testId="merchant-webhook-secret" />
          </>
        ) : null}
      </Dialog>
    </Section>
  );
}

function MerchantView({ id }: { id: string }) {
  const { t, lang } = useI18n();
  const path = `merchants/${encodeURIComponent(id)}`;
  const query = useQuery({ queryKey: ['merchants', 'one', id], queryFn: () => api.get<ConsoleMerchant>(path) });
  const [lifetime, setLifetime] = useState('');
  const [tolerance, setTolerance] = useState('');
  const save = useAction(() => {
    const body: Record<string, number | null> = {};
    if (lifetime.trim() === 'default') body.session_lifetime_seconds = null;
    else if (lifetime.trim()) body.session_lifetime_seconds = Number.parseInt(lifetime, 10);
    if (tolerance.trim()) body.underpayment_tolerance_bps = Number.parseInt(tolerance, 10);
    return api.post(`${path}/settings`, body);
  }, [['merchants']]);
  return (
    <>
      <PageHeader title={t('merchants.detailTitle', { id })}>
        <a href={hrefFor(['merchants'])}>{t('action.back')}</a>
      </PageHeader>
      <QueryView query={query}>
        {(m) => (
          <>
            <Section title={t('payments.summary')}>
              <KeyValues
                rows={[
                  [t('field.name'), m.name],
                  [t('field.url'), m.webhook_url ?? '—'],
                  [t('merchants.lifetime'), `${m.session_lifetime_seconds} s (${m.session_lifetime_source})`],
                  [t('merchants.tolerance'), `${m.underpayment_tolerance_bps} bps`],
                  [t('field.created'), formatTime(m.created_at, lang)],
                ]}
              />
            </Section>
            <Section title={t('merchants.settings')}>
              <form
                class="form"
                onSubmit={(e) => {
                  e.preventDefault();
                  save.mutate(undefined);
                }}
              >
                <div class="field">
                  <label for="m-lifetime">{t('merchants.lifetimeInput')}</label>
                  <input
                    id="m-lifetime"
                    value={lifetime}
                    placeholder={String(m.session_lifetime_seconds)}
                    onInput={(e) => setLifetime(e.currentTarget.value)}
                    data-testid="merchant-lifetime"
                  />
                </div>
                <div class="field">
                  <label for="m-tolerance">{t('merchants.toleranceInput')}</label>
                  <input
                    id="m-tolerance"
                    inputMode="numeric"
                    value={tolerance}
                    placeholder={String(m.underpayment_tolerance_bps)}
                    onInput={(e) => setTolerance(e.currentTarget.value)}
                    data-testid="merchant-tolerance"
                  />
                </div>
                {save.error ? <ErrorBox error={save.error} /> : null}
                {save.isSuccess ? <p role="status">{t('action.saved')}</p> : null}
                <button type="submit" class="btn btn-primary" disabled={save.isPending} data-testid="merchant-save">
                  {t('action.save')}
                </button>
              </form>
            </Section>
          </>
        )}
      </QueryView>
    </>
  );
}
