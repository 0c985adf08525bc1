// The language switcher (English / 中文), remembered in localStorage by the i18n provider.
import { isLang, LANGUAGES, useI18n } from '../lib/i18n.js';

const NAMES = { en: 'English', zh: '中文' } as const;

export function LangSwitch() {
  const { lang, setLang, t } = useI18n();
  return (
    <span class="lang">
      <label for="lang-select" class="sr-only">
        {t('lang.label')}
      </label>
      <select
        id="lang-select"
        value={lang}
        data-testid="lang-select"
        onChange={(e) => {
          const v = (e.currentTarget as HTMLSelectElement).value;
          if (isLang(v)) setLang(v);
        }}
      >
        {LANGUAGES.map((l) => (
          <option key={l} value={l} lang={l === 'zh' ? 'zh-CN' : 'en'}>
            {NAMES[l]}
          </option>
        ))}
      </select>
    </span>
  );
}
