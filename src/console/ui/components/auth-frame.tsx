// The frame of the pages before the console (sign-in, forced password change, required TOTP enrollment): brand,
// language switcher, and sign out once a session exists.
import type { ComponentChildren } from 'preact';
import { api } from '../lib/api.js';
import { useSetMe } from '../lib/auth.js';
import { useT } from '../lib/i18n.js';
import { LangSwitch } from './lang-switch.js';

export function AuthFrame({ title, signedIn, children }: { title: string; signedIn?: boolean; children: ComponentChildren }) {
  const t = useT();
  const setMe = useSetMe();
  return (
    <div class="auth-frame">
      <header class="auth-top">
        <span class="brand-dark">{t('app.title')}</span>
        <span class="row">
          <LangSwitch />
          {signedIn ? (
            <button
              type="button"
              class="btn"
              data-testid="sign-out"
              onClick={() => {
                void api.post('auth/logout').finally(() => setMe(null));
              }}
            >
              {t('auth.signOut')}
            </button>
          ) : null}
        </span>
      </header>
      <main id="main-content" class="auth-main">
        <h1>{title}</h1>
        {children}
      </main>
    </div>
  );
}
