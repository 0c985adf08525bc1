// TOTP enrollment: start (secret + otpauth URL as text and as a QR code made here), confirm with a code, then the
// ten recovery codes shown once. Required for operators (totp_enrollment_required), offered to merchant users.
import { useState } from 'preact/hooks';
import type { TotpConfirm, TotpSetup } from '../../contract/auth.js';
import { AuthFrame } from '../components/auth-frame.js';
import { SecretOnce } from '../components/dialog.js';
import { QrCode } from '../components/qr.js';
import { ErrorBox } from '../components/states.js';
import { api } from '../lib/api.js';
import { fetchMe, useSetMe } from '../lib/auth.js';
import { useT } from '../lib/i18n.js';
import { useAction } from '../lib/mutation.js';

export function TotpEnrollment({ onFinished }: { onFinished?: () => void }) {
  const t = useT();
  const setMe = useSetMe();
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState('');
  const start = useAction(() => api.post<TotpSetup>('auth/totp/setup'), [], setSetup);
  const confirm = useAction(
    (c: string) => api.post<TotpConfirm>('auth/totp/confirm', { code: c }),
    [],
    (r) => setCodes(r.recovery_codes),
  );

  if (codes) {
    return (
      <div data-testid="totp-recovery">
        <SecretOnce label={t('totp.recoveryCodes')} value={codes.join('\n')} testId="totp-recovery-codes" />
        <button
          type="button"
          class="btn btn-primary"
          data-testid="totp-done"
          onClick={async () => {
            setMe(await fetchMe());
            onFinished?.();
          }}
        >
          {t('action.continue')}
        </button>
      </div>
    );
  }
  if (!setup) {
    return (
      <div>
        <p>{t('totp.intro')}</p>
        {start.error ? <ErrorBox error={start.error} /> : null}
        <button
          type="button"
          class="btn btn-primary"
          disabled={start.isPending}
          onClick={() => start.mutate(undefined)}
          data-testid="totp-start"
        >
          {t('totp.start')}
        </button>
      </div>
    );
  }
  return (
    <form
      class="form"
      onSubmit={(e) => {
        e.preventDefault();
        confirm.mutate(code.trim());
      }}
    >
      <p>{t('totp.scan')}</p>
      <QrCode text={setup.otpauth_url} label={t('totp.qrLabel')} testId="totp-qr" />
      <p class="mono wrap" data-testid="totp-url">
        {setup.otpauth_url}
      </p>
      <p>
        {t('totp.secret')} <code data-testid="totp-secret">{setup.secret}</code>
      </p>
      <div class="field">
        <label for="totp-code">{t('auth.totpCode')}</label>
        <input
          id="totp-code"
          inputMode="numeric"
          autoComplete="one-time-code"
          required
          value={code}
          onInput={(e) => setCode(e.currentTarget.value)}
          data-testid="totp-code"
        />
      </div>
      {confirm.error ? <ErrorBox error={confirm.error} /> : null}
      <button type="submit" class="btn btn-primary" disabled={confirm.isPending} data-testid="totp-confirm">
        {t('totp.confirm')}
      </button>
    </form>
  );
}

/** The page an operator without TOTP sees until it enrolls. */
export default function EnrollPage() {
  const t = useT();
  return (
    <AuthFrame title={t('totp.title')} signedIn>
      <p>{t('totp.required')}</p>
      <TotpEnrollment />
    </AuthFrame>
  );
}
