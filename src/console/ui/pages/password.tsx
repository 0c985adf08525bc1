// Change password: current and new (at least 12 characters, typed twice). Required when must_change_password.
import { useState } from 'preact/hooks';
import { AuthFrame } from '../components/auth-frame.js';
import { ErrorBox } from '../components/states.js';
import { api } from '../lib/api.js';
import { fetchMe, useSetMe } from '../lib/auth.js';
import { useT } from '../lib/i18n.js';
import { useAction } from '../lib/mutation.js';

export function PasswordForm() {
  const t = useT();
  const setMe = useSetMe();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [done, setDone] = useState(false);
  const [mismatch, setMismatch] = useState(false);
  const change = useAction(
    () => api.post('auth/password', { current_password: current, new_password: next }),
    [],
    async () => {
      setDone(true);
      setMe(await fetchMe());
    },
  );
  return (
    <form
      class="form"
      onSubmit={(e) => {
        e.preventDefault();
        setMismatch(next !== again);
        if (next === again) change.mutate(undefined);
      }}
      data-testid="password-form"
    >
      <div class="field">
        <label for="pw-current">{t('password.current')}</label>
        <input
          id="pw-current"
          type="password"
          autoComplete="current-password"
          required
          value={current}
          onInput={(e) => setCurrent(e.currentTarget.value)}
          data-testid="password-current"
        />
      </div>
      <div class="field">
        <label for="pw-new">{t('password.new')}</label>
        <input
          id="pw-new"
          type="password"
          autoComplete="new-password"
          required
          minLength={12}
          value={next}
          onInput={(e) => setNext(e.currentTarget.value)}
          data-testid="password-new"
        />
      </div>
      <div class="field">
        <label for="pw-again">{t('password.again')}</label>
        <input
          id="pw-again"
          type="password"
          autoComplete="new-password"
          required
          minLength={12}
          value={again}
          onInput={(e) => setAgain(e.currentTarget.value)}
          data-testid="password-again"
        />
      </div>
      {mismatch ? (
        <p class="state state-error" role="alert">
          {t('password.mismatch')}
        </p>
      ) : null}
      {change.error ? <ErrorBox error={change.error} /> : null}
      {done ? (
        <p role="status" data-testid="password-done">
          {t('password.changed')}
        </p>
      ) : null}
      <button type="submit" class="btn btn-primary" disabled={change.isPending} data-testid="password-submit">
        {t('password.submit')}
      </button>
    </form>
  );
}

export default function PasswordPage() {
  const t = useT();
  return (
    <AuthFrame title={t('password.title')} signedIn>
      <p>{t('password.mustChange')}</p>
      <PasswordForm />
    </AuthFrame>
  );
}
