import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidRequest } from '../domain/errors.js';
import type { ConsoleDeps } from './deps.js';

// The built single-page app (Vite's output, dist/console-ui): read into memory once at start with a gzip copy of
// each file, served from this origin only. index.html is never cached (it names the current hashed files); files
// under assets/ carry their content hash in the name and are cached for a year. Nothing else is served.

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

interface StaticFile {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
  immutable: boolean;
}

/** Every file under `dir`, keyed by its URL path below the console's base ('' for index.html). */
export function loadUi(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const type = TYPES[extname(name)];
        if (!type) continue;
        const rel = relative(dir, path).split(sep).join('/');
        const body = readFileSync(path);
        const gz = body.length > 1024 && !type.startsWith('image/png') ? gzipSync(body, { level: 9 }) : null;
        files.set(rel, { body, gzip: gz && gz.length < body.length ? gz : null, type, immutable: rel.startsWith('assets/') });
      }
    }
  };
  walk(dir);
  return files;
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><main><h1>The console is not built</h1><p>Run <code>npm run build:console</code> (or <code>npm run build</code>) and restart.</p></main></body></html>`;

export async function registerConsoleStatic(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const dir = deps.settings.uiDir;
  const files = dir && existsSync(join(dir, 'index.html')) ? loadUi(dir) : null;
  if (!files) deps.ops.log.warn({ dir }, 'the console UI is not built: its page says how to build it');
  const send = (req: FastifyRequest, reply: FastifyReply, f: StaticFile) => {
    reply
      .type(f.type)
      .header('Cache-Control', f.immutable ? 'public, max-age=31536000, immutable' : 'no-store')
      .header('Vary', 'Accept-Encoding');
    const accepts = String(req.headers['accept-encoding'] ?? '');
    if (f.gzip && /\bgzip\b/.test(accepts)) return reply.header('Content-Encoding', 'gzip').send(f.gzip);
    return reply.send(f.body);
  };
  const index = (req: FastifyRequest, reply: FastifyReply) => {
    const f = files?.get('index.html');
    if (!f) return reply.code(503).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(NOT_BUILT);
    return send(req, reply, f);
  };
  app.get('/', index);
  app.get('/index.html', index);
  app.get('/*', async (req, reply) => {
    const path = (req.params as { '*': string })['*'];
    if (path === 'api' || path.startsWith('api/')) {
      throw invalidRequest('resource_not_found', `Unrecognized console URL (${req.method} ${req.url.split('?')[0]}).`, undefined, 404);
    }
    const f = files?.get(path);
    if (!f || path === 'index.html') {
      return reply.code(404).type('text/plain; charset=utf-8').header('Cache-Control', 'no-store').send('Not found');
    }
    return send(req, reply, f);
  });
}
