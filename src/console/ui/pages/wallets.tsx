// Wallets (operator): every gas station, TRON resources account and refunds hot wallet: address (copy, QR),
// balances, nonce, pending attempts and what the next sweep plan needs.
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { ConsoleWallet } from '../../contract/wallets.js';
import type { PageProps } from '../lib/page-props.js';
import { CopyButton } from '../components/dialog.js';
import { Badge, KeyValues, PageHeader } from '../components/page.js';
import { QrCode } from '../components/qr.js';
import { Empty, QueryView } from '../components/states.js';
import { api } from '../lib/api.js';
import { useI18n } from '../lib/i18n.js';

export default function WalletsPage(_props: PageProps) {
  const { t } = useI18n();
  const query = useQuery({ queryKey: ['wallets'], queryFn: () => api.get<{ data: ConsoleWallet[]; error: string | null }>('wallets') });
  return (
    <>
      <PageHeader title={t('nav.wallets')} />
      <QueryView query={query}>
        {({ data, error }) => (
          <>
            {error ? <p class="warn">{error}</p> : null}
            {data.length === 0 ? (
              <Empty />
            ) : (
              <div class="cards">
                {data.map((w) => (
                  <WalletCard key={`${w.network}-${w.mode}-${w.role}-${w.address}`} w={w} />
                ))}
              </div>
            )}
          </>
        )}
      </QueryView>
    </>
  );
}

function WalletCard({ w }: { w: ConsoleWallet }) {
  const { t } = useI18n();
  const [qr, setQr] = useState(false);
  return (
    <article class="card" data-testid={`wallet-${w.network}-${w.mode}-${w.role}`}>
      <h2>
        {w.network} · {w.mode} · {t(`wallets.role.${w.role}`)}
      </h2>
      <p class="mono wrap" data-testid="wallet-address">
        {w.address}
      </p>
      <div class="row">
        <CopyButton value={w.address} />
        <button type="button" class="btn btn-small" aria-expanded={qr} onClick={() => setQr(!qr)}>
          {t('wallets.qr')}
        </button>
      </div>
      {qr ? <QrCode text={w.address} label={t('wallets.qrLabel', { address: w.address })} /> : null}
      <KeyValues
        rows={[
          [t('field.merchant'), w.merchant_id ?? '—'],
          [t('wallets.balance'), w.balance === null ? (w.error ?? '—') : `${w.balance} ${w.native}`],
          [
            t('wallets.tokens'),
            w.tokens
              ? Object.entries(w.tokens)
                  .map(([k, v]) => `${v} ${k}`)
                  .join(', ') || '—'
              : '—',
          ],
          [t('wallets.energy'), w.energy ?? '—'],
          [t('wallets.bandwidth'), w.bandwidth === null ? '—' : `${w.bandwidth} ${t('wallets.bytes')}`],
          [t('field.nonce'), w.nonce ?? '—'],
          [t('wallets.pending'), String(w.pending_attempts)],
          [
            t('wallets.nextSweep'),
            w.next_sweep_plan ? (
              <span key="n">
                {t('field.needed')} {w.next_sweep_plan.needed} · {t('field.shortfall')} {w.next_sweep_plan.shortfall}{' '}
                {w.next_sweep_plan.shortfall !== '0' ? <Badge value="low" /> : null}
              </span>
            ) : (
              '—'
            ),
          ],
        ]}
      />
    </article>
  );
}
