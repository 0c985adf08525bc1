// Books (operator): reconcile runs and their differences, start a reconcile, unexplained journal entries with
// acknowledge (a note), and export downloads (the same files as the CLI's export).
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { ReconcileRun, UnexplainedEntry } from '../../contract/books.js';
import type { PageProps } from '../lib/page-props.js';
import { ConfirmButton } from '../components/confirm.js';
import { Exports } from '../components/exports.js';
import { MODES, NETWORKS } from '../components/filters.js';
import { Badge, PageHeader, Section } from '../components/page.js';
import { Select } from '../components/select.js';
import { Empty, QueryView } from '../components/states.js';
import { type Column, DataTable } from '../components/table.js';
import { api } from '../lib/api.js';
import { formatTime, short } from '../lib/format.js';
import { useNetworks } from '../lib/networks.js';
import { useI18n } from '../lib/i18n.js';
import { useAction } from '../lib/mutation.js';

export default function BooksPage(_props: PageProps) {
  const { t, lang } = useI18n();
  const columns: Column<ReconcileRun>[] = [
    { key: 'network', label: 'field.network', render: (r) => `${r.network} ${r.mode}` },
    { key: 'height', label: 'books.height', render: (r) => r.height },
    {
      key: 'diff',
      label: 'books.differences',
      render: (r) => <Badge value={r.differences === 0 ? 'ok' : 'differences'} testId="reconcile-differences" />,
    },
    {
      key: 'rows',
      label: 'books.detail',
      render: (r) =>
        r.difference_rows.length ? (
          <ul class="plain">
            {r.difference_rows.map((d) => (
              <li key={`${d.account}-${d.asset}`}>
                {d.account} {d.asset}: {d.difference_base} ({t('books.unexplained')} {d.unexplained_base})
              </li>
            ))}
          </ul>
        ) : (
          '—'
        ),
    },
    { key: 'addresses', label: 'books.addresses', render: (r) => String(r.addresses) },
    { key: 'finished', label: 'treasury.finished', render: (r) => formatTime(r.finished_at, lang) },
  ];
  return (
    <>
      <PageHeader title={t('nav.books')} />
      <Section title={t('books.runs')} testId="reconcile-runs">
        <RunReconcile />
        <DataTable area="reconcile" path="reconcile/runs" columns={columns} rowKey={(r) => r.id} caption={t('books.runs')} />
      </Section>
      <Unexplained />
      <Exports />
    </>
  );
}

function RunReconcile() {
  const { t } = useI18n();
  const [network, setNetwork] = useState('');
  const { first } = useNetworks();
  const [pickedMode, setMode] = useState<string | null>(null);
  const mode = pickedMode ?? first?.mode ?? 'live';
  const run = useAction(() => api.post<{ job_id: string }>('reconcile/run', { network: network || undefined, mode }), [['reconcile']]);
  return (
    <div class="form form-inline">
      <Select id="rec-network" label={t('field.network')} value={network} options={['', ...NETWORKS]} onChange={setNetwork} />
      <Select id="rec-mode" label={t('field.mode')} value={mode} options={MODES} onChange={setMode} />
      <ConfirmButton
        label={t('books.run')}
        title={t('books.run')}
        onConfirm={() => run.mutateAsync(undefined)}
        pending={run.isPending}
        error={run.error}
        testId="reconcile-run"
      >
        <p>{t('books.runBody', { network: network || t('filter.any'), mode })}</p>
      </ConfirmButton>
      {run.data ? <span role="status">{t('books.started', { id: run.data.job_id })}</span> : null}
    </div>
  );
}

function Unexplained() {
  const { t } = useI18n();
  const query = useQuery({
    queryKey: ['journal', 'unexplained'],
    queryFn: () => api.get<{ data: UnexplainedEntry[] }>('journal/unexplained'),
  });
  return (
    <Section title={t('books.unexplainedTitle')} testId="unexplained">
      <QueryView query={query}>
        {({ data }) =>
          data.length === 0 ? (
            <Empty />
          ) : (
            <ul class="plain">
              {data.map((e) => (
                <li key={e.entry_id} data-testid={`unexplained-${e.entry_id}`}>
                  {e.network} {e.mode} <span class="mono">{short(e.tx_hash)}</span> #{e.block_height}:{' '}
                  {e.legs.map((l) => `${l.account} ${l.amount} ${l.asset}`).join(', ')}{' '}
                  {e.acknowledged ? <Badge value="acknowledged" /> : <Acknowledge id={e.entry_id} />}
                </li>
              ))}
            </ul>
          )
        }
      </QueryView>
    </Section>
  );
}

function Acknowledge({ id }: { id: string }) {
  const { t } = useI18n();
  const [note, setNote] = useState('');
  const ack = useAction(() => api.post(`journal/unexplained/${encodeURIComponent(id)}/acknowledge`, { note: note.trim() }), [['journal']]);
  return (
    <ConfirmButton
      label={t('books.acknowledge')}
      title={t('books.acknowledge')}
      onConfirm={() => ack.mutateAsync(undefined)}
      pending={ack.isPending}
      error={ack.error}
      testId={`acknowledge-${id}`}
    >
      <div class="field">
        <label for={`ack-${id}`}>{t('books.note')}</label>
        <textarea id={`ack-${id}`} required value={note} onInput={(e) => setNote(e.currentTarget.value)} data-testid="acknowledge-note" />
      </div>
    </ConfirmButton>
  );
}
