// The console's languages (English, Chinese): the switcher's choice remembered in localStorage, else the browser's
// language (lib/lang.ts). Every visible string goes through the catalogues in messages/ (same keys in both: unit test).
import { createContext, type ComponentChildren } from 'preact';
import { useContext, useState } from 'preact/hooks';
import { en, type MessageKey } from '../messages/en.js';
import { zh } from '../messages/zh.js';
import { initialLang, isLang, LANGUAGES, type Lang } from './lang.js';

export { isLang, LANGUAGES, type Lang };
const CATALOGS: Record<Lang, Record<MessageKey, string>> = { en, zh };
const STORAGE_KEY = 'stablepay.console.lang';

export type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

export function translator(lang: Lang): Translate {
  const catalog = CATALOGS[lang];
  return (key, vars) => (catalog[key] ?? key).replace(/\{(\w+)\}/g, (m, name: string) => (vars && name in vars ? String(vars[name]) : m));
}

interface I18n {
  lang: Lang;
  t: Translate;
  setLang: (lang: Lang) => void;
}

const I18nContext = createContext<I18n>({ lang: 'en', t: translator('en'), setLang: () => {} });

function readStored(): string | null {
  try {
    return window.localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function I18nProvider({ children }: { children: ComponentChildren }) {
  const [lang, setLangState] = useState<Lang>(() => initialLang(readStored(), navigator.languages ?? [navigator.language]));
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  const setLang = (next: Lang) => {
    try {
      window.localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // private mode: the choice lasts for this page only
    }
    setLangState(next);
  };
  return <I18nContext.Provider value={{ lang, t: translator(lang), setLang }}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  return useContext(I18nContext);
}
export function useT(): Translate {
  return useContext(I18nContext).t;
}
