// The signed-in frame: header (brand, menu toggle on narrow screens, language, account, sign out), the role's
// navigation and the main landmark.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { type AuthState, useSetMe } from '../lib/auth.js';
import { LangSwitch } from './lang-switch.js';
import { SearchBox } from './search-box.js';
import { useT } from '../lib/i18n.js';
import { navFor } from '../lib/nav.js';
import { hrefFor } from '../lib/router.js';

export function Layout({ me, page, children }: { me: AuthState; page: string; children: ComponentChildren }) {
  const t = useT();
  const setMe = useSetMe();
  const [menuOpen, setMenuOpen] = useState(false);
  const signOut = async () => {
    try {
      await api.post('auth/logout');
    } finally {
      setMe(null);
    }
  };
  return (
    <div class="frame">
      <button type="button" class="skip" onClick={() => document.getElementById('main-content')?.focus()}>
        {t('a11y.skip')}
      </button>
      <header class="topbar">
        <button
          type="button"
          class="btn menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen(!menuOpen)}
          data-testid="nav-toggle"
        >
          {t('nav.menu')}
        </button>
        <span class="brand">{t('app.title')}</span>
        <div class="topbar-right">
          <SearchBox />
          <LangSwitch />
          <a class="user-link" href={hrefFor(['account'])} data-testid="nav-account">
            {me.user.email}
          </a>
          <button type="button" class="btn" onClick={signOut} data-testid="sign-out">
            {t('auth.signOut')}
          </button>
        </div>
      </header>
      <div class="body">
        <nav id="main-nav" class={menuOpen ? 'sidenav open' : 'sidenav'} aria-label={t('nav.label')}>
          <ul>
            {navFor(me.user.role).map((item) => (
              <li key={item.page}>
                <a
                  href={hrefFor([item.page])}
                  aria-current={item.page === page ? 'page' : undefined}
                  data-testid={`nav-${item.page}`}
                  onClick={() => setMenuOpen(false)}
                >
                  {t(item.label)}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main-content" class="main" tabIndex={-1}>
          {children}
        </main>
      </div>
    </div>
  );
}
