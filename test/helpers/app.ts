/**
 * buildTestApp: the real Fastify app over a fresh database, driven with inject(); plus `api`, a
 * small client that sends JSON with a bearer token and hands back status and parsed body.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_PREFIX } from '../../src/app.js';
import { composeApp } from '../../src/server.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Db } from '../../src/db/index.js';
import type { App } from '../../src/http/index.js';
import { OutboundClient } from '../../src/lib/outbound/index.js';
import { tenantsService } from '../../src/tenants/index.js';
import { createTestDb } from './db.js';

export const PREFIX = API_PREFIX;
export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'admin-password-1';

export interface Response<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
}

export interface Client {
  token: string | undefined;
  get<T = any>(path: string): Promise<Response<T>>;
  post<T = any>(path: string, body?: unknown): Promise<Response<T>>;
  put<T = any>(path: string, body?: unknown): Promise<Response<T>>;
  delete<T = any>(path: string, body?: unknown): Promise<Response<T>>;
  /** Any request, raw: for malformed bodies and odd headers. */
  raw(options: { method: string; path: string; payload?: string | Buffer; headers?: Record<string, string> }): Promise<Response>;
}

export function client(app: App, token?: string): Client {
  const send = async (method: string, url: string, body?: unknown, extra: Record<string, string> = {}, rawPayload?: string | Buffer) => {
    const headers: Record<string, string> = { ...extra };
    if (token) headers.authorization = `Bearer ${token}`;
    let payload: string | Buffer | undefined = rawPayload;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await app.inject({ method: method as 'GET', url: url.startsWith('/') && !url.startsWith(PREFIX) ? `${PREFIX}${url}` : url, headers, payload });
    let parsed: unknown = res.body;
    const type = String(res.headers['content-type'] ?? '');
    if (type.includes('json') && res.body.length > 0) parsed = JSON.parse(res.body);
    return { status: res.statusCode, body: parsed as any, headers: res.headers };
  };
  return {
    token,
    get: (p) => send('GET', p),
    post: (p, b) => send('POST', p, b ?? {}),
    put: (p, b) => send('PUT', p, b ?? {}),
    delete: (p, b) => send('DELETE', p, b),
    raw: (o) => send(o.method, o.path, undefined, o.headers, o.payload),
  };
}

export interface TestApp {
  app: App;
  db: Db;
  config: Config;
  /** An outbound URL policy client like the app's (hand it to dispatchers and schedulers the test builds). */
  outbound: OutboundClient;
  /** Client with the bootstrap admin's login token. */
  admin: Client;
  /** Client with no token. */
  anon: Client;
  as(token: string): Client;
  close(): Promise<void>;
}

/**
 * The tests' receivers listen on 127.0.0.1, so the outbound URL policy allows loopback here
 * (DIALER_OUTBOUND_ALLOW=127.0.0.0/8) unless a test sets DIALER_OUTBOUND_ALLOW itself ('' for none).
 */
export const TEST_OUTBOUND_ALLOW = '127.0.0.0/8';

export async function buildTestApp(options: { db?: Db; env?: NodeJS.ProcessEnv } = {}): Promise<TestApp> {
  const db = options.db ?? (await createTestDb());
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-test-'));
  const config = loadConfig({
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
    LOG_LEVEL: 'silent',
    DIALER_OUTBOUND_ALLOW: TEST_OUTBOUND_ALLOW,
    ...options.env,
  });
  const outbound = new OutboundClient(config.outboundAllow);
  await tenantsService(db).ensureAdmin(ADMIN_EMAIL, ADMIN_PASSWORD);
  const app = await composeApp({ config, db });
  await app.ready();
  const anon = client(app);
  const login = await anon.post('/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  if (login.status !== 200) throw new Error(`admin login failed: ${JSON.stringify(login.body)}`);
  return {
    app,
    db,
    config,
    outbound,
    admin: client(app, login.body.access_token),
    anon,
    as: (token) => client(app, token),
    async close() {
      await app.close();
      await outbound.close();
      if (!options.db) await db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
