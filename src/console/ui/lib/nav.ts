// The navigation by role: an operator sees every page; a merchant user its merchant's pages only.
import type { MessageKey } from '../messages/en.js';
import type { Role } from './auth.js';

export interface NavItem {
  page: string;
  label: MessageKey;
}

const MERCHANT_PAGES = ['overview', 'payments', 'refunds', 'stranded', 'subscriptions', 'webhooks', 'keys', 'audit'] as const;
const OPERATOR_PAGES = [
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
] as const;

export type PageName = (typeof OPERATOR_PAGES)[number] | 'account' | 'search';

export function navFor(role: Role): NavItem[] {
  const pages: readonly PageName[] = role === 'operator' ? OPERATOR_PAGES : MERCHANT_PAGES;
  return pages.map((page) => ({ page, label: `nav.${page}` as MessageKey }));
}

export function mayVisit(role: Role, page: string): boolean {
  return page === 'account' || page === 'search' || navFor(role).some((n) => n.page === page);
}
