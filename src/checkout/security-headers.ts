import type { FastifyReply } from 'fastify';

// Headers of every page response. The CSP allows only this origin's script and stylesheet (no inline script, no
// inline style, no eval), no images or frames from anywhere, and form posts and fetches to this origin only.
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function setPageHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', PAGE_CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY')
    .header('Cross-Origin-Opener-Policy', 'same-origin')
    .header('Cache-Control', 'no-store')
    .header('Vary', 'Accept-Language');
}
