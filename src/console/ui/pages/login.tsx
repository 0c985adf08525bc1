// Sign-in: email and password; a TOTP code (or a recovery code) field when the API answers 401 totp_required;
// lockout (429 login_locked) and every other error show the API's message.
import { useState } from 'preact/hooks';
import type { AuthState } from '../../contract/auth.js';
import { AuthFrame } from '../components/auth-frame.js';
import { ApiFailure, api, errorMessage } from '../lib/api.js';
import { useSetMe } from '../lib/auth.js';
import { useT } from '../lib/i18n.js';

export default function LoginPage() {
  const t = useT();
  const setMe = useSetMe();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [useRecovery, setUseRecovery] = useState(false);
  const [needTotp, setNeedTotp] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, string> = { email, password };
      if (needTotp && code) body[useRecovery ? 'recovery_code' : 'totp_code'] = code.trim();
      const me = await api.post<AuthState>('auth/login', body);
      setMe(me);
    } catch (err) {
      if (err instanceof ApiFailure && err.code === 'totp_required') {
        setNeedTotp(true);
        setError(t('auth.totpNeeded'));
      } else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <AuthFrame title={t('auth.signInTitle')}>
      <form class="form" onSubmit={submit} data-testid="login-form">
        <div class="field">
          <label for="login-email">{t('auth.email')}</label>
          <input
            id="login-email"
            type="email"
            autoComplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
            data-testid="login-email"
          />
        </div>
        <div class="field">
          <label for="login-password">{t('auth.password')}</label>
          <input
            id="login-password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            data-testid="login-password"
          />
        </div>
        {needTotp ? (
          <div class="field">
            <label for="login-totp">{useRecovery ? t('auth.recoveryCode') : t('auth.totpCode')}</label>
            <input
              id="login-totp"
              type="text"
              inputMode={useRecovery ? 'text' : 'numeric'}
              autoComplete="one-time-code"
              required
              value={code}
              onInput={(e) => setCode(e.currentTarget.value)}
              data-testid="login-totp"
            />
            <button type="button" class="btn-link" onClick={() => setUseRecovery(!useRecovery)} data-testid="login-use-recovery">
              {useRecovery ? t('auth.useTotp') : t('auth.useRecovery')}
            </button>
          </div>
        ) : null}
        {error ? (
          <p class="state state-error" role="alert" data-testid="login-error">
            {error}
          </p>
        ) : null}
        <button type="submit" class="btn btn-primary" disabled={busy} data-testid="login-submit">
          {t('auth.signIn')}
        </button>
      </form>
    </AuthFrame>
  );
}
