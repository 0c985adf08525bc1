import { currencyExponent } from '../domain/currency.js';
import { formatMinor } from '../domain/money.js';
import { STABLECOIN_EXPONENT, type NetworkId, type TokenSymbol } from '../../chains/vocabulary.js';
import type { CheckoutAssets } from './assets.js';
import { html, jsonForScript, raw, type SafeHtml } from './html.js';
import { catalog, HTML_LANG, LANGUAGES, translator, type Lang, type Translate } from './i18n.js';
import type { LiveStatus } from './live-status.js';
import type { MessageKey } from './messages/en.js';
import { networkBadge, networkHint, networkName } from './network-names.js';
import type { ArrivedTransfer, PageSession } from './page-data.js';

// Server-rendered HTML of the hosted payment page. All text comes from the catalogs; every value is escaped by
// `html`; money is formatted from integers. The page works without its script (selection is a plain form post);
// the script adds the countdown, copy buttons and live status.

export interface PaymentOption {
  network: NetworkId;
  token: TokenSymbol;
  checked: boolean;
  /** The coin's locked amount ("13.57 USDC") when the session converts into it; null without conversion. */
  amount: string | null;
}

export interface PaymentInstructions {
  network: string;
  token: string;
  address: string;
  contract: string;
  amount: string;
  amountBase: string;
  remainingOnly: boolean;
  deepLink: string;
  qrSvg: string;
}

export interface PageModel {
  lang: Lang;
  basePath: string;
  assets: CheckoutAssets;
  session: PageSession;
  live: LiveStatus;
  options: PaymentOption[];
  showPicker: boolean;
  pinned: { network?: string; token?: string };
  canChange: boolean;
  payment: PaymentInstructions | null;
  /** Once paid: the transfers credited to the session, each with its explorer link where one is configured. */
  arrived: ArrivedTransfer[];
  error: MessageKey | null;
  serverNow: number;
}

/** Keys the script needs (states, countdown, copy feedback); sent in #sp-data, nothing else of the catalog. */
const SCRIPT_KEYS: MessageKey[] = [
  'status.select',
  'status.waiting',
  'status.confirming',
  'status.confirmations',
  'status.partial',
  'status.paid',
  'status.expired',
  'status.expired_received',
  'status.canceled',
  'status.offline',
  'pay.copied',
  'time.minutes_seconds',
];

const money = (minor: bigint, currency: string): string =>
  `${formatMinor(minor, currencyExponent(currency) ?? 2)} ${currency.toUpperCase()}`;

function statusText(t: Translate, live: LiveStatus): string {
  switch (live.state) {
    case 'select':
      return t('status.select');
    case 'waiting':
      return t('status.waiting');
    case 'confirming':
      return t('status.confirming');
    case 'partial':
      return t('status.partial', { remaining: live.remaining ?? '', token: live.token ?? '' });
    case 'paid':
      return t('status.paid');
    case 'expired':
      return live.received && live.received !== '0.00'
        ? t('status.expired_received', { received: live.received, token: live.token ?? '' })
        : t('status.expired');
    case 'canceled':
      return t('status.canceled');
    default: {
      const never: never = live.state;
      return never;
    }
  }
}

/** `0x12345678…9abcdef0`: a hash short enough for a phone; the full one is in the link and its label. */
const shortHash = (h: string): string => (h.length > 22 ? `${h.slice(0, 10)}…${h.slice(-8)}` : h);

function countdownText(t: Translate, expiresAt: number, now: number): string {
  const left = Math.max(0, expiresAt - now);
  const h = Math.floor(left / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = String(left % 60).padStart(2, '0');
  return t('time.minutes_seconds', { m: h > 0 ? `${h}:${String(m).padStart(2, '0')}` : String(m), s });
}

function layout(lang: Lang, title: string, assets: CheckoutAssets, basePath: string, body: SafeHtml, script: SafeHtml | null): string {
  return html`<!doctype html>
<html lang="${HTML_LANG[lang]}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex,nofollow">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="${basePath}/assets/${assets.style.name}">
</head>
<body>
<main>
${body}
</main>
${script}
</body>
</html>
`.text;
}

function languageSwitch(t: Translate, lang: Lang, query: string): SafeHtml {
  return html`<nav class="lang small" aria-label="${t('page.language')}">${LANGUAGES.map(
    (l) =>
      html`<a href="?lang=${l}${query}" hreflang="${HTML_LANG[l]}" lang="${HTML_LANG[l]}"${l === lang ? raw(' aria-current="true"') : ''}>${catalog(l)['lang.name']}</a>`,
  )}</nav>`;
}

export function renderPage(m: PageModel): string {
  const t = translator(m.lang);
  const s = m.session.row;
  const merchant = m.session.merchantName;
  const pagePath = `${m.basePath}/${s.id}`;
  const live = m.live;
  const open = live.state === 'select' || live.state === 'waiting' || live.state === 'partial' || live.state === 'confirming';

  const items = (s.line_items ?? []).map((li) => {
    const unit = BigInt(li.price_data.unit_amount_minor);
    return html`<li><span>${li.price_data.product_data.name}${li.quantity !== 1 ? html` <span class="muted small">· ${t('page.quantity', { n: li.quantity })}</span>` : ''}${
      li.price_data.product_data.description ? html`<br><span class="muted small">${li.price_data.product_data.description}</span>` : ''
    }</span><span>${money(unit * BigInt(li.quantity), s.currency)}</span></li>`;
  });

  const summary = html`<section class="card" aria-labelledby="summary-h">
<h2 id="summary-h">${t('page.order_summary')}</h2>
${s.description ? html`<p class="muted">${s.description}</p>` : ''}
${items.length ? html`<ul class="items">${items}</ul>` : ''}
${s.tax_minor !== null ? html`<div class="row"><span>${t('page.tax')}</span><span>${money(s.tax_minor, s.currency)}</span></div>` : ''}
${s.shipping_minor !== null ? html`<div class="row"><span>${t('page.shipping')}</span><span>${money(s.shipping_minor, s.currency)}</span></div>` : ''}
<div class="row total"><span>${t('page.total')}</span><span id="sp-total">${money(s.amount_minor, s.currency)}</span></div>
${
  s.exchange_rate !== null
    ? html`<div class="row"><span>${t('page.converted')}</span><strong id="sp-converted">${formatMinor(s.target_amount_minor, STABLECOIN_EXPONENT)} ${s.target_currency}</strong></div>
<p class="muted small">${t('page.rate', { from: s.currency.toUpperCase(), rate: s.exchange_rate, to: s.target_currency })}</p>`
    : ''
}
</section>`;

  // The amount comes first, above the status and a picker of any length, so a phone shows it without scrolling.
  const amountTop = html`<section id="sp-amount-top" class="card amount-top" aria-labelledby="amount-top-l">
<span class="label" id="amount-top-l">${t('page.amount')}</span>
<strong class="big" id="sp-top-amount">${money(s.amount_minor, s.currency)}</strong>
${s.exchange_rate !== null ? html`<span class="muted" id="sp-top-converted">${t('page.converted')}: ${formatMinor(s.target_amount_minor, STABLECOIN_EXPONENT)} ${s.target_currency}</span>` : ''}
</section>`;

  const arrived =
    live.state === 'paid' && m.arrived.length > 0
      ? html`<section id="sp-arrived" class="card" aria-labelledby="arrived-h">
<h2 id="arrived-h">${t('paid.heading')}</h2>
<ul class="arrived">${m.arrived.map(
          (
            a,
          ) => html`<li><strong class="arrived-amount">${a.amount} ${a.token}</strong> <span class="muted small">${t('paid.on_network', { network: networkName(m.lang, a.network) })}</span><br>
<span class="small">${t('paid.tx')}: ${
            a.explorerUrl
              ? html`<a class="mono tx" href="${a.explorerUrl}" target="_blank" rel="noopener noreferrer" aria-label="${t('paid.view_tx', { hash: a.txHash })}" data-tx="${a.txHash}">${shortHash(a.txHash)}</a>`
              : html`<span class="mono tx" data-tx="${a.txHash}">${a.txHash}</span>`
          }</span></li>`,
        )}</ul>
</section>`
      : '';

  const status = html`<section id="sp-status" class="card status" data-state="${live.state}" aria-labelledby="status-h">
<h2 id="status-h">${t('status.heading')}</h2>
<p id="sp-status-text" role="status" aria-live="polite">${statusText(t, live)}</p>
${open ? html`<p class="row" id="sp-timer"><span>${t('page.expires_in')}</span><span class="countdown"><time id="sp-countdown" datetime="${new Date(live.expires_at * 1000).toISOString()}">${countdownText(t, live.expires_at, m.serverNow)}</time></span></p>` : ''}
<p id="sp-confirmations" class="muted small"${live.state === 'confirming' && live.confirmations?.total ? '' : raw(' hidden')}>${
    live.confirmations?.total ? t('status.confirmations', { n: live.confirmations.n, total: live.confirmations.total }) : ''
  }</p>
<p id="sp-offline" class="muted small" hidden>${t('status.offline')}</p>
<p id="sp-redirecting" class="muted small"${live.state === 'paid' && live.redirect ? '' : raw(' hidden')}>${t('status.redirecting')}</p>
<a id="sp-return" class="button" href="${live.redirect ?? `${pagePath}/return`}"${live.state === 'paid' && live.redirect ? '' : raw(' hidden')}>${t('status.return')}</a>
</section>`;

  const error = m.error ? html`<p class="error" role="alert">${t(m.error)}</p>` : '';

  const picker = m.showPicker
    ? html`<section id="sp-picker" class="card" aria-labelledby="picker-h">
<form method="post" action="${pagePath}/select">
<fieldset>
<legend id="picker-h">${t('picker.legend')}</legend>
${m.pinned.network || m.pinned.token ? html`<p class="muted small">${t('picker.pinned', { network: m.pinned.network ? networkName(m.lang, m.pinned.network) : '', token: m.pinned.token ?? '' })}</p>` : html`<p class="muted small">${t('picker.hint')}</p>`}
${
  m.options.length === 0
    ? html`<p>${t('picker.none')}</p>`
    : m.options.map(
        (
          o,
          i,
        ) => html`<label class="option" for="opt-${i}"><input type="radio" id="opt-${i}" name="choice" value="${o.network}:${o.token}"${o.checked || (i === 0 && !m.options.some((x) => x.checked)) ? raw(' checked') : ''} required>
${networkBadge(o.network)}<span><strong>${o.token} · ${networkName(m.lang, o.network)}${o.amount ? html` · <span class="option-amount">${o.amount}</span>` : ''}</strong><span class="muted small">${networkHint(m.lang, o.network)}</span></span></label>`,
      )
}
</fieldset>
<input type="hidden" name="lang" value="${m.lang}">
${m.options.length ? html`<button type="submit" class="wide">${t('picker.submit')}</button>` : ''}
</form>
</section>`
    : '';

  const p = m.payment;
  const payment =
    p && !m.showPicker
      ? html`<section id="sp-pay" class="card" aria-labelledby="pay-h">
<h2 id="pay-h">${t(p.remainingOnly ? 'pay.remaining_heading' : 'pay.heading')}</h2>
<div class="field"><span class="label" id="amount-l">${t('pay.amount')}</span>
<div class="value"><span class="big" id="sp-amount" aria-labelledby="amount-l">${p.amount} ${p.token}</span><button type="button" class="secondary" data-copy="${p.amount}" aria-label="${t('pay.copy_amount')}">${t('pay.copy')}</button></div></div>
<p class="network-line" id="sp-network">${networkBadge(p.network)}<span>${networkName(m.lang, p.network)}</span></p>
<p class="warning" id="sp-warning">${t('pay.warning', { token: p.token, network: networkName(m.lang, p.network) })}</p>
<div class="field"><span class="label" id="address-l">${t('pay.address', { network: networkName(m.lang, p.network) })}</span>
<div class="value"><span class="mono" id="sp-address" aria-labelledby="address-l">${p.address}</span><button type="button" class="secondary" data-copy="${p.address}" aria-label="${t('pay.copy_address')}">${t('pay.copy')}</button></div></div>
<div class="qr" id="sp-qr" role="img" aria-label="${t('pay.qr_alt', { token: p.token, amount: p.amount, network: networkName(m.lang, p.network) })}">${raw(p.qrSvg)}</div>
<a id="sp-deeplink" class="button wide" href="${p.deepLink}">${t('pay.open_wallet')}</a>
${live.received && live.received !== '0.00' ? html`<p class="row small"><span>${t('pay.received')}</span><span id="sp-received">${live.received} ${p.token}</span></p>` : ''}
<p class="muted small">${t('pay.token_contract')}: <span class="mono" id="sp-contract">${p.contract}</span></p>
${m.canChange ? html`<p class="small"><a href="${pagePath}?change=1&amp;lang=${m.lang}">${t('picker.change')}</a></p>` : ''}
</section>`
      : '';

  const back =
    s.cancel_url && live.state !== 'paid'
      ? html`<p><a id="sp-back" href="${pagePath}/back">${t('page.back_to_merchant', { merchant })}</a></p>`
      : '';

  const body = html`<header class="top">
<div><p class="muted small">${t('page.pay_to')}</p><h1>${merchant}</h1></div>
${languageSwitch(t, m.lang, '')}
</header>
${s.mode === 'test' ? html`<p class="banner">${t('page.test_mode')}</p>` : ''}
${amountTop}
${error}
${status}
${arrived}
${picker}
${payment}
${summary}
${back}
<footer>${t('page.powered')}</footer>`;

  const msgs = Object.fromEntries(SCRIPT_KEYS.map((k) => [k, catalog(m.lang)[k]]));
  const data = {
    statusUrl: `${pagePath}/status`,
    eventsUrl: `${pagePath}/events`,
    expiresAt: live.expires_at,
    serverNow: m.serverNow,
    state: live.state,
    remainingBase: p && !m.showPicker ? p.amountBase : null,
    msgs,
  };
  const script = html`<script type="application/json" id="sp-data">${jsonForScript(data)}</script>
<script src="${m.basePath}/assets/${m.assets.script.name}" defer></script>`;
  return layout(m.lang, t('page.title', { merchant }), m.assets, m.basePath, body, script);
}

export function renderMessagePage(lang: Lang, assets: CheckoutAssets, basePath: string, titleKey: MessageKey, bodyKey: MessageKey): string {
  const t = translator(lang);
  const body = html`<header class="top"><h1>${t(titleKey)}</h1>${languageSwitch(t, lang, '')}</header>
<section class="card"><p>${t(bodyKey)}</p></section>`;
  return layout(lang, t(titleKey), assets, basePath, body, null);
}
