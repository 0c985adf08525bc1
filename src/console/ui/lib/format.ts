// Display helpers: times in the browser's locale, money as the decimal strings the API sends (never a JS number).
import type { Lang } from './i18n.js';

export function formatTime(iso: string | null | undefined, lang: Lang): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

export function money(amount: string | null | undefined, unit?: string | null): string {
  if (amount === null || amount === undefined) return '—';
  return unit ? `${amount} ${unit.toUpperCase()}` : amount;
}

export function short(value: string | null | undefined, keep = 10): string {
  if (!value) return '—';
  return value.length > keep * 2 + 1 ? `${value.slice(0, keep)}…${value.slice(-6)}` : value;
}

export function percent(rate: number | null | undefined): string {
  if (rate === null || rate === undefined) return '—';
  return `${(rate * 100).toFixed(1)}%`;
}
