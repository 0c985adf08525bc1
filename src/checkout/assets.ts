import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { networkBadgeCss } from './network-badges.js';

// The page's two static files, read once at start. Their URLs carry a content hash, so they are cached for a year
// and a deploy never serves a stale script with a new page.
export interface Asset {
  name: string;
  body: Buffer;
  contentType: string;
}

const HERE = join(dirname(fileURLToPath(import.meta.url)), 'assets');

function load(file: string, contentType: string, extra = ''): Asset {
  const body = Buffer.concat([readFileSync(join(HERE, file)), Buffer.from(extra, 'utf8')]);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const [stem, ext] = file.split('.');
  return { name: `${stem}.${hash}.${ext}`, body, contentType };
}

export interface CheckoutAssets {
  script: Asset;
  style: Asset;
}

export function loadCheckoutAssets(): CheckoutAssets {
  return {
    script: load('checkout.js', 'text/javascript; charset=utf-8'),
    // The network badges' colours come from the registry (network-badges.ts), appended to the stylesheet.
    style: load('checkout.css', 'text/css; charset=utf-8', networkBadgeCss()),
  };
}
