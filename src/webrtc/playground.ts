/**
 * The playground page (web/playground/): plain HTML, CSS and JavaScript served as files, no build
 * step. Public: the page itself holds nothing; it logs in through the API like any client.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from '../http/index.js';

const WEB_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/playground');
const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'playground.js': 'text/javascript; charset=utf-8',
  'playground.css': 'text/css; charset=utf-8',
};

export function registerPlaygroundRoutes(app: App): void {
  const serve = (file: string) => async (_request: unknown, reply: import('fastify').FastifyReply) => {
    const body = await fs.promises.readFile(path.join(WEB_DIR, file));
    return reply.header('content-type', FILES[file]!).header('cache-control', 'no-cache').send(body);
  };
  app.get('/playground', { config: { public: true }, schema: { hide: true } }, serve('index.html'));
  for (const file of Object.keys(FILES)) app.get(`/playground/${file}`, { config: { public: true }, schema: { hide: true } }, serve(file));
}
