import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

// The error reference every `error.doc_url` points at, served by the service itself: GET /docs/errors renders
// docs/errors.md (each code's row carries `<a id="code">`, the fragment of its doc_url), GET /docs/errors.md gives the
// file as it is. DOCS_URL defaults to PUBLIC_BASE_URL/docs/errors (src/config.ts), so the link works on any install.

/** Where the file lives in a checkout and in the Docker image (both copy docs/ beside src/). */
export const ERROR_DOCS_FILE = new URL('../../docs/errors.md', import.meta.url);
export const ERROR_DOCS_PATH = '/docs/errors';

const DOC_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'";

export function registerErrorDocs(app: FastifyInstance, file: URL = ERROR_DOCS_FILE): void {
  const markdown = readFileSync(file, 'utf8');
  const html = renderPage(markdown);
  app.get(ERROR_DOCS_PATH, async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('Content-Security-Policy', DOC_CSP)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Cache-Control', 'public, max-age=300')
      .send(html),
  );
  app.get(`${ERROR_DOCS_PATH}.md`, async (_req, reply) =>
    reply.type('text/markdown; charset=utf-8').header('X-Content-Type-Options', 'nosniff').send(markdown),
  );
}

function renderPage(markdown: string): string {
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Error codes</title>',
    '<style>body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem}',
    'table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .5rem;vertical-align:top}',
    'tr:target{background:#fff3b0}code{background:#f3f3f3;padding:0 .2rem}</style></head><body>',
    renderMarkdown(markdown),
    '</body></html>',
  ].join('\n');
}

/** The subset of Markdown docs/errors.md uses: headings, paragraphs, lists, tables, code, links, bold, anchors. */
export function renderMarkdown(md: string): string {
  const out: string[] = [];
  const lines = md.split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const heading = /^(#{1,4}) (.*)$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      out.push(`<h${level} id="${slug(heading[2]!)}">${inline(heading[2]!)}</h${level}>`);
      i++;
    } else if (line.startsWith('|')) {
      const rows: string[][] = [];
      while (i < lines.length && lines[i]!.startsWith('|')) rows.push(cells(lines[i++]!));
      out.push(table(rows));
    } else if (line.startsWith('- ')) {
      const items: string[] = [];
      while (i < lines.length && (lines[i]!.startsWith('- ') || lines[i]!.startsWith('  '))) {
        if (lines[i]!.startsWith('- ')) items.push(lines[i]!.slice(2));
        else items[items.length - 1] += ` ${lines[i]!.trim()}`;
        i++;
      }
      out.push(`<ul>${items.map((t) => `<li>${inline(t)}</li>`).join('')}</ul>`);
    } else if (line.trim() === '') {
      i++;
    } else {
      const para: string[] = [];
      while (i < lines.length && lines[i]!.trim() !== '' && !/^(#|\||- )/.test(lines[i]!)) para.push(lines[i++]!);
      out.push(`<p>${inline(para.join(' '))}</p>`);
    }
  }
  return out.join('\n');
}

function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|'));
}

/** A row whose first cell holds `<a id="x">` gets that id itself, so `#x` highlights the whole row (`tr:target`). */
function table(rows: string[][]): string {
  const [head, , ...body] = rows;
  const th = (head ?? []).map((c) => `<th>${inline(c)}</th>`).join('');
  const trs = body.map((r) => {
    const anchor = /^<a id="([a-z0-9_]+)"><\/a>/.exec(r[0] ?? '');
    const first = anchor ? [r[0]!.slice(anchor[0].length), ...r.slice(1)] : r;
    return `<tr${anchor ? ` id="${anchor[1]}"` : ''}>${first.map((c) => `<td>${inline(c)}</td>`).join('')}</tr>`;
  });
  return `<table><thead><tr>${th}</tr></thead><tbody>${trs.join('')}</tbody></table>`;
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function inline(text: string): string {
  // Code spans first (their content is literal), then links, bold and explicit anchors in the escaped rest.
  return text
    .split(/(`[^`]*`)/)
    .map((part) => {
      if (part.startsWith('`') && part.endsWith('`') && part.length > 1) return `<code>${escapeHtml(part.slice(1, -1))}</code>`;
      return (
        escapeHtml(part)
          .replace(/&lt;a id=&quot;([a-z0-9_]+)&quot;&gt;&lt;\/a&gt;/g, '<a id="$1"></a>')
          // Links to other files of the repository are not served here: their label stays, as text.
          .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_m, label: string, href: string) =>
            /^(https?:|#)/.test(href) ? `<a href="${href}">${label}</a>` : label,
          )
          .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
      );
    })
    .join('');
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .trim()
    .replace(/ +/g, '-');
}
