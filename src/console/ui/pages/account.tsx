// The signed-in user's own page: change password, two-factor sign-in (enroll when not yet), sign out everywhere.
import { PageHeader, Section } from '../components/page.js';
import { ErrorBox } from '../components/states.js';
import { api } from '../lib/api.js';
import { type AuthState, useSetMe } from '../lib/auth.js';
import { useT } from '../lib/i18n.js';
import { useAction } from '../lib/mutation.js';
import { TotpEnrollment } from './enroll.js';
import { PasswordForm } from './password.js';

export default function AccountPage({ me }: { me: AuthState }) {
  const t = useT();
  const setMe = useSetMe();
  const everywhere = useAction(
    () => api.post('auth/logout-all'),
    [],
    () => setMe(null),
  );
  return (
    <>
      <PageHeader title={t('account.title')} />
      <Section title={t('password.title')}>
        <PasswordForm />
      </Section>
      <Section title={t('totp.title')}>
        {me.user.totp_enabled ? <p data-testid="totp-enabled">{t('totp.enabled')}</p> : <TotpEnrollment />}
      </Section>
      <Section title={t('auth.signOutEverywhere')}>
        <p>{t('auth.signOutEverywhereHelp')}</p>
        {everywhere.error ? <ErrorBox error={everywhere.error} /> : null}
        <button type="button" class="btn btn-danger" onClick={() => everywhere.mutate(undefined)} data-testid="sign-out-everywhere">
          {t('auth.signOutEverywhere')}
        </button>
      </Section>
    </>
  );
}
