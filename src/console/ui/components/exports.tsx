// Export downloads (GET api/exports/:kind?format&from&to&mode&merchant_id): the same files as the CLI's export.
// Operators name a merchant (or none); a merchant user's exports are its own.
import { useState } from 'preact/hooks';
import type { ConsoleExportKind } from '../../contract/exports.js';
import { apiUrl } from '../lib/api.js';
import { useI18n } from '../lib/i18n.js';
import { MODES } from './filters.js';
import { Section } from './page.js';
import { Select } from './select.js';

/** The export kinds (contract/exports.ts CONSOLE_EXPORT_KINDS; a value import would bundle zod). */
const CONSOLE_EXPORT_KINDS: readonly ConsoleExportKind[] = ['sessions', 'payments', 'refunds', 'invoices', 'charges', 'sweeps', 'fees'];

export function Exports({ merchantId }: { merchantId?: string }) {
  const { t } = useI18n();
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [format, setFormat] = useState('csv');
  const [mode, setMode] = useState('live');
  const [merchant, setMerchant] = useState(merchantId ?? '');
  return (
    <Section title={t('books.exports')} testId="exports">
      <div class="form form-inline">
        <div class="field">
          <label for="exp-from">{t('field.from')}</label>
          <input
            id="exp-from"
            type="date"
            required
            value={from}
            onInput={(e) => setFrom(e.currentTarget.value)}
            data-testid="export-from"
          />
        </div>
        <div class="field">
          <label for="exp-to">{t('field.to')}</label>
          <input id="exp-to" type="date" value={to} onInput={(e) => setTo(e.currentTarget.value)} data-testid="export-to" />
        </div>
        <Select id="exp-format" label={t('books.format')} value={format} options={['csv', 'json']} onChange={setFormat} />
        <Select id="exp-mode" label={t('field.mode')} value={mode} options={MODES} onChange={setMode} />
        {merchantId === undefined ? (
          <div class="field">
            <label for="exp-merchant">{t('field.merchant')}</label>
            <input id="exp-merchant" value={merchant} onInput={(e) => setMerchant(e.currentTarget.value)} />
          </div>
        ) : null}
      </div>
      {from ? (
        <ul class="plain exports">
          {CONSOLE_EXPORT_KINDS.map((kind) => (
            <li key={kind}>
              <a
                href={apiUrl(`exports/${kind}`, {
                  format,
                  from,
                  to: to || undefined,
                  mode,
                  merchant_id: merchantId === undefined ? merchant || undefined : undefined,
                })}
                download
                data-testid={`export-${kind}`}
              >
                {t('books.download', { kind })}
              </a>
            </li>
          ))}
        </ul>
      ) : (
        <p>{t('books.pickFrom')}</p>
      )}
    </Section>
  );
}
