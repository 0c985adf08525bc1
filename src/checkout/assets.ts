import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The page's two static files, read once at start. Their URLs carry a content hash, so they are cached for a year
// and a deploy never serves a stale script with a new page.
export interface Asset {
  name: string;
  body: Buffer;
  contentType: string;
}

const HERE = join(dirname(fileURLToPath(import.meta.url)), 'assets');

function load(file: string, contentType: string): Asset {
  const body = readFileSync(join(HERE, file));
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
    style: load('checkout.css', 'text/css; charset=utf-8'),
  };
}
