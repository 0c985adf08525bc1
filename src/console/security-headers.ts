// The console's Content-Security-Policy: script, style, fonts, images and fetches from this origin only; no inline
// script, no eval, no frames. The SPA's bundle carries no inline style either (Vite emits CSS files).
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
