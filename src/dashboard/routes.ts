import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { AppError } from '../lib/errors.js';
import type { Asset, Bundle, DashboardBundle } from './bundle.js';

/** Where the dashboard lives under the API prefix; `/` and the old playground lead here. */
export const APP_PATH = '/app';

/**
 * The page's Content-Security-Policy: everything from this origin, nothing inline except the
 * styles a per-page nonce allows (the waveform player's shadow-DOM style sheet), no eval.
 */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "media-src 'self' blob:",
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

function page(bundle: Bundle, base: string, nonce: string): string {
  const asset = (name: string) => `${base}/assets/${name}`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Dialer</title>',
    `<meta name="dialer-base" content="${base}">`,
    `<meta name="dialer-csp-nonce" content="${nonce}">`,
    `<link rel="icon" href="${asset('icon.svg')}" type="image/svg+xml">`,
    ...bundle.entry.styles.map((s) => `<link rel="stylesheet" href="${asset(s)}">`),
    ...bundle.entry.preload.map((s) => `<link rel="modulepreload" href="${asset(s)}">`),
    `<script type="module" src="${asset(bundle.entry.script)}"></script>`,
    '</head>',
    '<body>',
    '<div id="app"></div>',
    '<noscript>Dialer\'s dashboard needs JavaScript. The API is documented at ../docs.</noscript>',
    '</body>',
    '</html>',
  ].join('\n');
}

const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2457c5"/>' +
  '<path d="M11 7c1 0 2 .6 2.4 1.6l1.3 3.2c.3.9 0 1.9-.7 2.5l-1.6 1.2a13 13 0 0 0 5.1 5.1l1.2-1.6c.6-.7 1.6-1 2.5-.7l3.2 1.3c1 .4 1.6 1.4 1.6 2.4V25c0 1.7-1.4 3-3 2.9C14.4 27.3 4.7 17.6 4.1 9 4 7.4 5.3 6 7 6z" fill="#fff"/></svg>';

const ICON_ASSET: Asset = { body: Buffer.from(ICON), gzip: gzipSync(ICON), contentType: 'image/svg+xml' };

function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: Asset, immutable: boolean) {
  const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  reply
    .header('content-type', asset.contentType)
    .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
    .header('x-content-type-options', 'nosniff')
    .header('vary', 'accept-encoding');
  if (gzip) reply.header('content-encoding', 'gzip');
  return reply.send(gzip ? asset.gzip : asset.body);
}

/**
 * The dashboard: GET {prefix}/app/... answers the page (the app routes in the browser), its assets
 * under {prefix}/app/assets/; public, since the page holds nothing and logs in like any client.
 */
export function registerDashboardRoutes(app: App, bundle: DashboardBundle, prefix: string): void {
  const base = `${prefix}${APP_PATH}`;
  const hidden = { config: { public: true }, schema: { hide: true } } as const;
  const index = async (_request: FastifyRequest, reply: FastifyReply) => {
    const built = await bundle.get();
    const nonce = randomBytes(16).toString('base64');
    return reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', contentSecurityPolicy(nonce))
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .send(page(built, base, nonce));
  };
  app.get(APP_PATH, hidden, index);
  app.get(`${APP_PATH}/`, hidden, index);
  app.get(`${APP_PATH}/assets/:file`, {
    ...hidden,
    schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 200 }) }) },
    handler: async (request: FastifyRequest<{ Params: { file: string } }>, reply: FastifyReply) => {
      const file = request.params.file;
      if (file === 'icon.svg') return sendAsset(request, reply, ICON_ASSET, false);
      const asset = (await bundle.get()).assets.get(file);
      if (!asset) throw new AppError(404, 'not_found', `No dashboard file ${file}`);
      return sendAsset(request, reply, asset, true);
    },
  });
  // Any other path inside the app is a screen of it (the browser-side router decides which).
  app.get(`${APP_PATH}/*`, hidden, index);
  // The playground's page moved into the dashboard's Templates screen ("Test in browser").
  app.get('/playground', hidden, async (_request, reply) => reply.redirect(`${base}/templates`, 302));
}

/** GET / (outside the prefix): the dashboard. */
export function registerRootRedirect(app: App, prefix: string): void {
  app.get('/', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => reply.redirect(`${prefix}${APP_PATH}/`, 302));
}
