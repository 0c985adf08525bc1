import { networkEntry } from '../../../chains/registry.js';

// Server-rendered authorization page. No inline script (CSP script-src 'self'); data travels in data- attributes.
// Network names come from the registry ("USDT on Ethereum (ERC-20)").
export interface AuthorizePageModel {
  id: string;
  product: string;
  status: string;
  pricePerPeriod: string;
  interval: string;
  periods: number;
  allowance: string;
  trialEnd: Date | null;
  options: Array<{ network: string; token: string; family: string }>;
  paymentMethodId: string | null;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const networkLabel = (id: string): string => {
  const e = networkEntry(id);
  return e ? `${e.label.en} (${e.standard})` : id;
};

export function renderAuthorizePage(m: AuthorizePageModel): string {
  const opts = m.options
    .map(
      (o) =>
        `<option value="${esc(`${o.network}:${o.token}`)}" data-family="${esc(o.family)}">${esc(o.token)} on ${esc(networkLabel(o.network))}</option>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Authorize ${esc(m.product)}</title>
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}button{font-size:1rem;padding:.6rem 1rem}#msg{margin-top:1rem}</style>
</head><body>
<main id="app" data-id="${esc(m.id)}" data-status="${esc(m.status)}" data-payment-method="${esc(m.paymentMethodId ?? '')}">
<h1>${esc(m.product)}</h1>
<p><strong>${esc(m.pricePerPeriod)} USD</strong> per ${esc(m.interval)}${m.trialEnd ? `, first charge after the trial (${esc(m.trialEnd.toISOString().slice(0, 10))})` : ''}.</p>
<p id="sizing">You approve a spending allowance of <strong>${esc(m.allowance)}</strong> (${esc(m.pricePerPeriod)} × ${m.periods} periods) to this merchant's charging address.
It can only take the price of each period when it is due; you can revoke the allowance at any time in your wallet.</p>
${
  m.options.some((o) => o.family === 'solana')
    ? `<p id="solana-delegate">On Solana, a token account has a single delegate: approving this merchant <strong>replaces any other delegate</strong> of your token account (another subscription, an open order), and approving anyone else later ends this authorization.</p>
`
    : ''
}<label>Pay with <select id="choice">${opts}</select></label>
<p><button id="authorize" type="button">Connect wallet and authorize</button></p>
<p id="msg" role="status">${m.status === 'incomplete' ? '' : m.status === 'past_due' ? 'A payment failed: authorize again to settle it.' : `This subscription is ${esc(m.status)}.`}</p>
</main>
<script src="/subscribe/assets/authorize.js"></script>
</body></html>`;
}
