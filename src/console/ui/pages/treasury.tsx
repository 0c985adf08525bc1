// Treasury (operator): where sweeps go (destinations with their change history), sweep policies, the sweep plan (dry
// run), run a sweep, the sweeps history and, at #/treasury/<sweep id>, one sweep's steps. Live: `sweeps`, `sweep:<id>`.
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { SweepListItem, SweepPlan, SweepPolicy, TreasuryDestination } from '../../contract/treasury.js';
import type { PageProps } from '../lib/page-props.js';
import { ConfirmButton } from '../components/confirm.js';
import { MODES, NETWORKS, TOKENS } from '../components/filters.js';
import { Badge, ExternalLink, Link, PageHeader, Section } from '../components/page.js';
import { Empty, ErrorBox, QueryView } from '../components/states.js';
import { type Column, DataTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { formatTime, short } from '../lib/format.js';
import { useNetworks } from '../lib/networks.js';
import { useI18n } from '../lib/i18n.js';
import { useLive } from '../lib/live.js';
import { useAction } from '../lib/mutation.js';
import { hrefFor } from '../lib/router.js';
import { SweepView } from './sweep-detail.js';
import { Select } from '../components/select.js';

/** One sweep policy: GET ?network&mode&token → SweepPolicy; POST {network, mode, token, min_amount, max_fee_bps}. */
const POLICY_PATH = 'sweeps/policy';
/** The query key prefix of the sweep plan (dry run): read again when a policy or a destination changes. */
const PLAN_KEY = ['sweeps', 'plan'];

export default function TreasuryPage({ params }: PageProps) {
  const { t, lang } = useI18n();
  useLive(params[0] ? [`sweep:${params[0]}`] : ['sweeps']);
  if (params[0]) return <SweepView id={params[0]} />;
  const columns: Column<SweepListItem>[] = [
    {
      key: 'id',
      label: 'field.id',
      render: (r) => (
        <Link to={hrefFor(['treasury', r.id])} testId={`sweeps-link-${r.id}`}>
          {r.id}
        </Link>
      ),
    },
    { key: 'status', label: 'field.status', render: (r) => <Badge value={r.status} testId="sweep-status" /> },
    {
      key: 'transactions',
      label: 'treasury.transactions',
      render: (r) => (
        <span data-testid="sweep-transactions">
          {r.transactions.length === 0
            ? '—'
            : r.transactions.map((x) => (
                <span key={x.tx_hash} class="mono">
                  <ExternalLink href={x.explorer_url}>{short(x.tx_hash)}</ExternalLink>{' '}
                </span>
              ))}
          {r.transaction_count > r.transactions.length ? (
            <Link to={hrefFor(['treasury', r.id])}>
              {t('treasury.moreTransactions', { n: r.transaction_count - r.transactions.length })}
            </Link>
          ) : null}
        </span>
      ),
    },
    { key: 'network', label: 'field.network', render: (r) => `${r.network} ${r.mode} ${r.token}` },
    { key: 'merchant', label: 'field.merchant', render: (r) => r.merchant_id },
    { key: 'swept', label: 'treasury.swept', render: (r) => `${r.swept ?? r.swept_base} / ${r.planned ?? r.planned_base}` },
    { key: 'fee', label: 'field.fee', render: (r) => `${r.actual_fee_native} ${r.fee_coin}` },
    { key: 'created', label: 'field.created', render: (r) => formatTime(r.created_at, lang) },
  ];
  return (
    <>
      <PageHeader title={t('nav.treasury')} />
      <Destinations />
      <Policies />
      <PlanAndRun />
      <Section title={t('treasury.history')} testId="sweeps-history">
        <DataTable area="sweeps" path="sweeps" columns={columns} rowKey={(r) => r.id} caption={t('treasury.history')} />
      </Section>
    </>
  );
}

function Destinations() {
  const { t, lang } = useI18n();
  const query = useQuery({
    queryKey: ['treasury', 'destinations'],
    queryFn: () => api.get<{ data: TreasuryDestination[] }>('treasury/destinations'),
  });
  const [form, setForm] = useState({ merchant_id: '', network: NETWORKS[0] ?? '', mode: 'live', address: '', hot_float: '' });
  const save = useAction(
    () =>
      api.post('treasury/destinations', {
        merchant_id: form.merchant_id.trim(),
        network: form.network,
        mode: form.mode,
        address: form.address.trim() && form.address.trim() !== 'none' ? form.address.trim() : null,
        hot_float: form.hot_float.trim() || undefined,
      }),
    // A destination changes where the plan sends the money: the plan shown is read again.
    [['treasury'], PLAN_KEY],
  );
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  return (
    <Section title={t('treasury.destinations')} testId="treasury-destinations">
      <QueryView query={query}>
        {({ data }) =>
          data.length === 0 ? (
            <Empty />
          ) : (
            <ul class="plain">
              {data.map((d) => (
                <li key={`${d.merchant_id}-${d.network}-${d.mode}`}>
                  <strong>{d.merchant_id}</strong> {d.network} {d.mode}:{' '}
                  <span class="mono">{d.treasury_address ?? t('treasury.hotWallet')}</span> · {t('treasury.hotFloat')} {d.hot_float} ·{' '}
                  {d.updated_by} {formatTime(d.updated_at, lang)}
                  {d.changes.length ? (
                    <details>
                      <summary>{t('treasury.changes', { n: d.changes.length })}</summary>
                      <ul>
                        {d.changes.map((c) => (
                          <li key={c.changed_at}>
                            {formatTime(c.changed_at, lang)} {c.actor}: {short(c.old_treasury_address)} → {short(c.new_treasury_address)}
                          </li>
                        ))}
                      </ul>
                    </details>
                  ) : null}
                </li>
              ))}
            </ul>
          )
        }
      </QueryView>
      <form
        class="form form-inline"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(undefined);
        }}
      >
        <Field id="dest-merchant" label={t('field.merchant')} value={form.merchant_id} onInput={set('merchant_id')} required />
        <Select id="dest-network" label={t('field.network')} value={form.network} options={NETWORKS} onChange={set('network')} />
        <Select id="dest-mode" label={t('field.mode')} value={form.mode} options={MODES} onChange={set('mode')} />
        <Field id="dest-address" label={t('treasury.address')} value={form.address} onInput={set('address')} />
        <Field id="dest-float" label={t('treasury.hotFloat')} value={form.hot_float} onInput={set('hot_float')} />
        <button type="submit" class="btn btn-primary" disabled={save.isPending} data-testid="destination-save">
          {t('action.save')}
        </button>
      </form>
      {save.error ? <ErrorBox error={save.error} /> : null}
    </Section>
  );
}

function Field({
  id,
  label,
  value,
  onInput,
  required,
}: {
  id: string;
  label: string;
  value: string;
  onInput: (v: string) => void;
  required?: boolean;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} value={value} required={required} onInput={(e) => onInput(e.currentTarget.value)} data-testid={id} />
    </div>
  );
}

function Policies() {
  const { t } = useI18n();
  // The form starts on a network this deployment has (GET networks): reading a policy of another is refused.
  const { list, first } = useNetworks();
  const [picked, setForm] = useState<null | { network: string; mode: string; token: string; min_amount: string; max_fee_bps: string }>(
    null,
  );
  const form = picked ?? {
    network: first?.network ?? NETWORKS[0] ?? '',
    mode: first?.mode ?? 'live',
    token: first?.tokens[0]?.symbol ?? 'USDT',
    min_amount: '',
    max_fee_bps: '',
  };
  const which = { network: form.network, mode: form.mode, token: form.token };
  const query = useQuery({
    queryKey: ['treasury', 'policy', which],
    queryFn: () => api.get<SweepPolicy>(POLICY_PATH, which),
    enabled: picked !== null || first !== undefined,
  });
  const save = useAction(
    () => api.post(POLICY_PATH, { ...which, min_amount: form.min_amount.trim(), max_fee_bps: Number.parseInt(form.max_fee_bps, 10) }),
    [['treasury', 'policy'], PLAN_KEY],
  );
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  return (
    <Section title={t('treasury.policies')} testId="treasury-policies">
      <form
        class="form form-inline"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(undefined);
        }}
      >
        <Select id="pol-network" label={t('field.network')} value={form.network} options={NETWORKS} onChange={set('network')} />
        <Select id="pol-mode" label={t('field.mode')} value={form.mode} options={MODES} onChange={set('mode')} />
        <Select id="pol-token" label={t('field.token')} value={form.token} options={TOKENS} onChange={set('token')} />
        <Field id="pol-min" label={t('treasury.minAmount')} value={form.min_amount} onInput={set('min_amount')} required />
        <Field id="pol-fee" label={t('treasury.maxFee')} value={form.max_fee_bps} onInput={set('max_fee_bps')} required />
        <button type="submit" class="btn btn-primary" disabled={save.isPending} data-testid="policy-save">
          {t('action.save')}
        </button>
      </form>
      {list && list.length === 0 ? <p data-testid="policy-no-network">{t('treasury.noNetwork')}</p> : null}
      {picked === null && first === undefined ? null : (
        <QueryView query={query}>
          {(p) => (
            <p data-testid="policy-current">
              {t('treasury.policyNow', {
                network: p.network,
                mode: p.mode,
                token: p.token,
                min: p.min_amount,
                bps: p.max_fee_bps,
                source: p.source,
              })}
            </p>
          )}
        </QueryView>
      )}
      {save.error ? <ErrorBox error={save.error} /> : null}
      {save.isSuccess ? <p role="status">{t('action.saved')}</p> : null}
    </Section>
  );
}

function PlanAndRun() {
  const { t } = useI18n();
  const { first } = useNetworks();
  const [picked, setForm] = useState<null | { network: string; mode: string; merchant_id: string }>(null);
  const form = picked ?? { network: first?.network ?? NETWORKS[0] ?? '', mode: first?.mode ?? 'live', merchant_id: '' };
  const [asked, setAsked] = useState<typeof form | null>(null);
  const plan = useQuery({
    queryKey: [...PLAN_KEY, asked],
    enabled: asked !== null,
    queryFn: () =>
      api.get<SweepPlan>('sweeps/plan', {
        network: asked!.network,
        mode: asked!.mode,
        merchant_id: asked!.merchant_id.trim() || undefined,
      }),
  });
  const run = useAction(
    () =>
      api.post<{ sweep_ids: string[] }>('sweeps/run', {
        network: form.network,
        mode: form.mode,
        merchant_id: form.merchant_id.trim() || undefined,
      }),
    [['sweeps']],
  );
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  return (
    <Section title={t('treasury.plan')} testId="sweep-plan">
      <form
        class="form form-inline"
        onSubmit={(e) => {
          e.preventDefault();
          // Asking again for the same plan reads it again (balances and fees move).
          if (asked && JSON.stringify(asked) === JSON.stringify(form)) void plan.refetch();
          else setAsked({ ...form });
        }}
      >
        <Select id="plan-network" label={t('field.network')} value={form.network} options={NETWORKS} onChange={set('network')} />
        <Select id="plan-mode" label={t('field.mode')} value={form.mode} options={MODES} onChange={set('mode')} />
        <Field id="plan-merchant" label={t('field.merchant')} value={form.merchant_id} onInput={set('merchant_id')} />
        <button type="submit" class="btn" data-testid="plan-show">
          {t('treasury.showPlan')}
        </button>
        <ConfirmButton
          label={t('treasury.run')}
          title={t('treasury.run')}
          onConfirm={() => run.mutateAsync(undefined)}
          pending={run.isPending}
          error={run.error}
          testId="sweep-run"
          danger
        >
          <p>{t('treasury.runBody', { network: form.network, mode: form.mode })}</p>
        </ConfirmButton>
      </form>
      {run.data ? (
        <p role="status" data-testid="sweep-run-result">
          {t('treasury.started', { n: run.data.sweep_ids.length })}{' '}
          {run.data.sweep_ids.map((id) => (
            <Link key={id} to={hrefFor(['treasury', id])}>
              {id}{' '}
            </Link>
          ))}
        </p>
      ) : null}
      {asked ? (
        <QueryView query={plan}>
          {(p) => (
            <div data-testid="sweep-plan-result">
              {p.batches.length === 0 ? <Empty>{t('treasury.nothingToSweep')}</Empty> : null}
              <ul class="plain">
                {p.batches.map((b) => (
                  <li key={`${b.merchant_id}-${b.token}-${b.destination}`} data-testid="plan-batch">
                    <strong>{b.merchant_id}</strong> {b.token}: {b.amount ?? b.amount_base} → {b.destination_kind}{' '}
                    <span class="mono">{short(b.destination)}</span> ·{' '}
                    {t('treasury.planLine', {
                      addresses: b.addresses,
                      steps: b.steps,
                      fee: b.estimated_fee_in_token ?? b.estimated_fee_native_base,
                      bps: b.fee_share_bps,
                    })}
                  </li>
                ))}
              </ul>
              {p.skipped.length ? (
                <>
                  <h3>{t('treasury.waiting')}</h3>
                  <ul class="plain">
                    {p.skipped.map((s) => (
                      <li key={`${s.merchant_id}-${s.token}-${s.address}`} data-testid="plan-waiting">
                        <span class="mono">{short(s.address)}</span> {s.amount ?? ''} {s.token}: {s.reason}
                      </li>
                    ))}
                  </ul>
                </>
              ) : null}
              {p.operator_wallets.length ? (
                <>
                  <h3>{t('treasury.operatorWallets')}</h3>
                  <ul class="plain">
                    {p.operator_wallets.map((w) => (
                      <li key={`${w.role}-${w.address}`} data-testid={`plan-wallet-${w.role}`}>
                        {w.role} <span class="mono">{short(w.address)}</span>: {w.balance ?? w.error ?? '—'} {w.token} · {t('field.needed')}{' '}
                        {w.needed} · {t('field.shortfall')} {w.shortfall}
                      </li>
                    ))}
                  </ul>
                </>
              ) : null}
            </div>
          )}
        </QueryView>
      ) : null}
    </Section>
  );
}
