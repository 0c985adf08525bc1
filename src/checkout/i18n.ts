import { en, type MessageKey, type Messages } from './messages/en.js';
import { zh } from './messages/zh.js';

// Language of the hosted page: an explicit `?lang=` (the switch) wins, else the best Accept-Language match, else English.

export const LANGUAGES = ['en', 'zh'] as const;
export type Lang = (typeof LANGUAGES)[number];
const CATALOGS: Record<Lang, Messages> = { en, zh };
/** BCP 47 tag for <html lang>. */
export const HTML_LANG: Record<Lang, string> = { en: 'en', zh: 'zh-CN' };

export function isLang(v: unknown): v is Lang {
  return typeof v === 'string' && (LANGUAGES as readonly string[]).includes(v);
}

/** Best supported language of an Accept-Language header (q-values honoured, ties keep header order). */
export function languageFromAcceptLanguage(header: string | undefined): Lang | undefined {
  if (!header) return undefined;
  const ranked = header
    .split(',')
    .slice(0, 20)
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(p)).find(Boolean);
      return { tag: tag.trim().toLowerCase(), q: q ? Number(q[1]) : 1, i };
    })
    .filter((x) => x.tag && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { tag } of ranked) {
    const primary = tag.split('-')[0];
    if (isLang(primary)) return primary;
  }
  return undefined;
}

export function pickLanguage(queryLang: unknown, acceptLanguage: string | undefined): Lang {
  if (isLang(queryLang)) return queryLang;
  return languageFromAcceptLanguage(acceptLanguage) ?? 'en';
}

export type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

export function translator(lang: Lang): Translate {
  const catalog = CATALOGS[lang];
  return (key, vars) => catalog[key].replace(/\{(\w+)\}/g, (m, name: string) => (vars && name in vars ? String(vars[name]) : m));
}

export function catalog(lang: Lang): Messages {
  return CATALOGS[lang];
}
