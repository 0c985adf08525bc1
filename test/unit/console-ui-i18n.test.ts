// The console's message catalogues: English and Chinese have exactly the same keys, no empty message, the same
// {placeholders} per key; and the starting language (remembered choice, else browser language, else English).
import { describe, expect, it } from 'vitest';
import { initialLang } from '../../src/console/ui/lib/lang.js';
import { en } from '../../src/console/ui/messages/en.js';
import { zh } from '../../src/console/ui/messages/zh.js';

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('console UI messages', () => {
  it('has exactly the same keys in English and Chinese', () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
  });

  it('has no empty message and the same placeholders in both languages', () => {
    for (const [key, text] of Object.entries(en)) {
      const other = (zh as Record<string, string>)[key]!;
      expect(text.trim(), key).not.toBe('');
      expect(other.trim(), key).not.toBe('');
      expect(placeholders(other), key).toEqual(placeholders(text));
    }
  });

  it('has a navigation label for every page of the navigation', () => {
    for (const page of [
      'overview',
      'payments',
      'refunds',
      'stranded',
      'subscriptions',
      'webhooks',
      'keys',
      'merchants',
      'treasury',
      'books',
      'wallets',
      'users',
      'audit',
    ])
      expect(Object.keys(en)).toContain(`nav.${page}`);
  });
});

describe('console UI starting language', () => {
  it('prefers the remembered choice, then the first supported browser language, then English', () => {
    expect(initialLang('zh', ['en-US'])).toBe('zh');
    expect(initialLang(null, ['fr-FR', 'zh-CN', 'en'])).toBe('zh');
    expect(initialLang('xx', ['en-GB'])).toBe('en');
    expect(initialLang(null, ['fr', 'de'])).toBe('en');
  });
});
