// The app: who is signed in decides between sign-in, forced password change, TOTP enrollment and the console;
// the hash route picks the page (each page its own chunk, loaded on demand).
import type { FunctionComponent } from 'preact';
import { useQueryClient } from '@tanstack/preact-query';
import { useEffect, useState } from 'preact/hooks';
import { Layout } from './components/layout.js';
import { PageHeader } from './components/page.js';
import { ErrorBox, Loading } from './components/states.js';
import { setUnauthorizedHandler } from './lib/api.js';
import { forgetAll, useMe } from './lib/auth.js';
import type { PageProps } from './lib/page-props.js';
import { useT } from './lib/i18n.js';
import { mayVisit } from './lib/nav.js';
import { useRoute } from './lib/router.js';
import LoginPage from './pages/login.js';

type PageModule = { default: FunctionComponent<PageProps> };

const PAGES: Record<string, () => Promise<PageModule>> = {
  overview: () => import('./pages/overview.js'),
  payments: () => import('./pages/payments.js'),
  refunds: () => import('./pages/refunds.js'),
  stranded: () => import('./pages/stranded.js'),
  subscriptions: () => import('./pages/subscriptions.js'),
  webhooks: () => import('./pages/webhooks.js'),
  keys: () => import('./pages/keys.js'),
  merchants: () => import('./pages/merchants.js'),
  treasury: () => import('./pages/treasury.js'),
  books: () => import('./pages/books.js'),
  wallets: () => import('./pages/wallets.js'),
  users: () => import('./pages/users.js'),
  audit: () => import('./pages/audit.js'),
  account: () => import('./pages/account.js'),
  search: () => import('./pages/search.js'),
};

function LazyPage({ name, props }: { name: string; props: PageProps }) {
  const [mod, setMod] = useState<{ name: string; page: PageModule } | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    setError(null);
    const load = PAGES[name];
    if (!load) return;
    load().then(
      (page) => live && setMod({ name, page }),
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [name]);
  if (error) return <ErrorBox error={error} />;
  if (!mod || mod.name !== name) return <Loading />;
  const Page = mod.page.default;
  return <Page {...props} />;
}

function NotFound() {
  const t = useT();
  return (
    <>
      <PageHeader title={t('notFound.title')} />
      <p data-testid="not-found">{t('notFound.body')}</p>
    </>
  );
}

export function App() {
  const me = useMe();
  const route = useRoute();
  const client = useQueryClient();
  const [PasswordPage, setPasswordPage] = useState<FunctionComponent | null>(null);
  const [EnrollPage, setEnrollPage] = useState<FunctionComponent | null>(null);

  useEffect(() => {
    setUnauthorizedHandler(() => {
      forgetAll(client);
      client.setQueryData(['me'], null);
    });
    return () => setUnauthorizedHandler(null);
  }, [client]);

  const state = me.data;
  const mustChange = !!state?.user.must_change_password;
  const mustEnroll = !!state?.totp_enrollment_required && !mustChange;
  useEffect(() => {
    if (mustChange && !PasswordPage) void import('./pages/password.js').then((m) => setPasswordPage(() => m.default));
    if (mustEnroll && !EnrollPage) void import('./pages/enroll.js').then((m) => setEnrollPage(() => m.default));
  }, [mustChange, mustEnroll, PasswordPage, EnrollPage]);

  if (me.isPending) return <Loading />;
  if (me.error) return <ErrorBox error={me.error} />;
  if (!state) return <LoginPage />;
  if (mustChange) return PasswordPage ? <PasswordPage /> : <Loading />;
  if (mustEnroll) return EnrollPage ? <EnrollPage /> : <Loading />;

  const [first = 'overview', ...params] = route.segments;
  const allowed = first in PAGES && mayVisit(state.user.role, first);
  return (
    <Layout me={state} page={first}>
      {allowed ? <LazyPage name={first} props={{ me: state, params }} /> : <NotFound />}
    </Layout>
  );
}
