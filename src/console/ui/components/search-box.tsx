// The search box of the top bar: goes to #/search?q=... (exact lookups across payments, refunds, deposits).
import { useState } from 'preact/hooks';
import { useT } from '../lib/i18n.js';
import { navigate } from '../lib/router.js';

export function SearchBox() {
  const t = useT();
  const [q, setQ] = useState('');
  return (
    <search class="search-box">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (q.trim()) navigate(['search'], { q: q.trim() });
        }}
      >
        <label for="global-search" class="sr-only">
          {t('search.label')}
        </label>
        <input
          id="global-search"
          type="search"
          value={q}
          placeholder={t('search.label')}
          onInput={(e) => setQ(e.currentTarget.value)}
          data-testid="global-search"
        />
      </form>
    </search>
  );
}
