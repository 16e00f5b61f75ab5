/**
 * npm run bench:analytics: POST /analytics over many leads, every query type with no filter, a date
 * range and a payload filter; p50 and p95 per query, and the ratio to the same query written by
 * hand in SQL and run raw through the driver (our overhead: HTTP, auth, validation, SQL building,
 * pagination, serialisation). See docs/analytics.md. The API answers the no-filter and date-range
 * requests from the rollup (migration 006) and the payload filter from the payload terms (migration
 * 007): the raw baseline is the same query hand-written over that source, and the hand-written
 * query over the leads is timed too (a few runs) to show what the source saves.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AnalyticsService, foldAnalytics, QUERY_TYPES, type QueryType } from '../src/analytics/index.js';
import { seedDemoLeads } from '../src/analytics/demo.js';
import { API_PREFIX } from '../src/app.js';
import { composeApp } from '../src/server.js';
import type { Principal } from '../src/auth/index.js';
import { loadConfig } from '../src/config.js';
import { migrate, openPglite, openPostgres, type Db } from '../src/db/index.js';
import type { App } from '../src/http/index.js';
import { tenantsService } from '../src/tenants/index.js';
import { benchPostgres, createDatabase } from './lib/pg.js';

// ---------------------------------------------------------------------------------------------
// The baseline: each query type written by hand in plain SQL over the leads, as one would type it
// into psql. Rows come out in the API's shape, so the run also checks that both answers agree.
// ---------------------------------------------------------------------------------------------

interface RawQuery {
  sql: string;
  params: unknown[];
}

interface RawScope {
  resellerId: string;
  /** Date range as whole UTC days: from inclusive, to exclusive (ISO instants). */
  range?: { from: string; to: string };
  payload?: Record<string, unknown>;
}

const LIVE = "NOT is_playground AND execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST')";
const NOT_REACHED = "('no_answer', 'busy', 'failed', 'voicemail', 'PRECHECK_FAILED', 'BLACKLISTED', 'aborted', 'worker_lost', 'error')";
const REACHED = `(status = 'FINISHED' AND outcome IS NOT NULL AND outcome NOT IN ${NOT_REACHED})`;

/**
 * Over the leads, as the service reads them (a payload filter by containment, over the GIN index);
 * or, `over` 'terms', over the payload terms (migration 037: one row per live lead and payload key
 * with the lead's facts, its owner as a number; the facts of leads pending a fold read from the
 * lead), as the service reads a payload filter.
 */
function rawQuery(type: QueryType, s: RawScope, over: 'leads' | 'terms' = 'leads'): RawQuery {
  const params: unknown[] = [s.resellerId];
  const at = over === 'leads' ? 'coalesce(call_initiated_time, created_at)' : 'activity_at';
  const [a, b] = [2, 3];
  const range = s.range ? ` AND ${at} >= $${a}::timestamptz AND ${at} < $${b}::timestamptz` : '';
  if (s.range) params.push(s.range.from, s.range.to);
  let where = `reseller_id = $1 AND ${LIVE}${range}`;
  let from = 'leads';
  if (s.payload && over === 'leads') {
    params.push(JSON.stringify(s.payload));
    where += ` AND payload @> $${params.length}::jsonb`;
  }
  if (over === 'terms') {
    const entries = Object.entries(s.payload ?? {});
    if (entries.length !== 1) throw new Error('the hand-written terms query takes one payload key');
    params.push(entries[0]![0], JSON.stringify(entries[0]![1]));
    const term = `key = $${params.length - 1} AND value = $${params.length}::jsonb`;
    const leadsRange = range.replaceAll('activity_at', 'coalesce(call_initiated_time, created_at)');
    from = `(SELECT lead_no, activity_at, attempt_count, duration_seconds, sentiment, status, outcome, provider
             FROM lead_payload_terms
             WHERE ${term} AND owner_no = ANY (ARRAY(SELECT owner_no FROM lead_owners WHERE reseller_id = $1))${range}
               AND lead_no NOT IN (SELECT lead_no FROM lead_terms_pending)
             UNION ALL
             SELECT lead_no, coalesce(call_initiated_time, created_at), attempt_count, duration_seconds, sentiment, status, outcome, provider
             FROM leads
             WHERE lead_no IN (SELECT lead_no FROM lead_terms_pending) AND reseller_id = $1 AND ${LIVE}${leadsRange}
               AND lead_no IN (SELECT lead_no FROM lead_payload_terms WHERE ${term})) AS l`;
    where = 'TRUE';
  }
  // A series spans the date range, or the data when there is none.
  const lo = s.range ? `date_trunc('day', $${a}::timestamptz AT TIME ZONE 'UTC')` : '(SELECT min(day) FROM days)';
  const hi = s.range ? `date_trunc('day', ($${b}::timestamptz - interval '1 ms') AT TIME ZONE 'UTC')` : '(SELECT max(day) FROM days)';
  const share = `coalesce(round(100.0 * count / nullif(sum(count) OVER (), 0), 2), 0)::float8`;
  const sql: Record<QueryType, string> = {
    call_count: `SELECT count(*)::int AS count FROM ${from} WHERE ${where}`,
    call_duration: `SELECT round(avg(duration_seconds), 2)::float8 AS avg, min(duration_seconds) AS min, max(duration_seconds) AS max,
                           coalesce(sum(duration_seconds), 0)::bigint AS total
                    FROM ${from} WHERE ${where}`,
    outcome_distribution: `SELECT outcome AS key, count(*)::int AS count, round(100.0 * count(*) / sum(count(*)) OVER (), 2)::float8 AS percentage
                           FROM ${from} WHERE ${where} AND outcome IS NOT NULL GROUP BY outcome ORDER BY outcome COLLATE "C"`,
    top_outcomes: `SELECT outcome AS key, count(*)::int AS count, round(100.0 * count(*) / sum(count(*)) OVER (), 2)::float8 AS percentage
                   FROM ${from} WHERE ${where} AND outcome IS NOT NULL GROUP BY outcome ORDER BY count DESC, outcome COLLATE "C"`,
    status_distribution: `SELECT key, count, ${share} AS percentage
                          FROM (SELECT s.ord, s.key, coalesce(n.count, 0) AS count
                                FROM (VALUES (1, 'BACKLOG'), (2, 'PROCESSING'), (3, 'RETRY'), (4, 'FINISHED')) s (ord, key)
                                LEFT JOIN (SELECT status, count(*)::int AS count FROM ${from} WHERE ${where} GROUP BY status) n ON n.status = s.key) t
                          ORDER BY ord`,
    sentiment_distribution: `SELECT key, count, ${share} AS percentage
                             FROM (SELECT s.ord, s.key, coalesce(n.count, 0)::int AS count
                                   FROM (VALUES (1, 'negative'), (2, 'neutral'), (3, 'positive')) s (ord, key)
                                   LEFT JOIN (SELECT CASE WHEN sentiment < 0.4::real THEN 'negative' WHEN sentiment <= 0.6::real THEN 'neutral' ELSE 'positive' END AS key,
                                                     count(*) AS count
                                              FROM ${from} WHERE ${where} AND sentiment IS NOT NULL GROUP BY 1) n ON n.key = s.key) t
                             ORDER BY ord`,
    calls_over_time: `WITH days AS (SELECT date_trunc('day', ${at} AT TIME ZONE 'UTC') AS day, count(*)::int AS count FROM ${from} WHERE ${where} GROUP BY 1)
                      SELECT to_char(d, 'YYYY-MM-DD') AS date, coalesce(days.count, 0) AS count
                      FROM generate_series(${lo}, ${hi}, interval '1 day') d
                      LEFT JOIN days ON days.day = d ORDER BY d`,
    avg_duration_over_time: `WITH days AS (SELECT date_trunc('day', ${at} AT TIME ZONE 'UTC') AS day, round(avg(duration_seconds), 2)::float8 AS avg_duration
                                           FROM ${from} WHERE ${where} GROUP BY 1)
                             SELECT to_char(d, 'YYYY-MM-DD') AS date, coalesce(days.avg_duration, 0) AS avg_duration
                             FROM generate_series(${lo}, ${hi}, interval '1 day') d
                             LEFT JOIN days ON days.day = d ORDER BY d`,
    retry_analysis: `SELECT attempt_count AS attempts, count(*)::int AS count,
                            round(avg(CASE WHEN ${REACHED} THEN 1 ELSE 0 END), 4)::float8 AS success_rate
                     FROM ${from} WHERE ${where} AND status = 'FINISHED' AND attempt_count >= 1 GROUP BY attempt_count ORDER BY 1`,
    provider_breakdown: `SELECT provider, count(*)::int AS count, round(avg(duration_seconds), 2)::float8 AS avg_duration
                         FROM ${from} WHERE ${where} AND provider IS NOT NULL GROUP BY provider ORDER BY count DESC, provider COLLATE "C"`,
    hourly_heatmap: `SELECT h AS hour, coalesce(n.count, 0) AS count
                     FROM generate_series(0, 23) h
                     LEFT JOIN (SELECT extract(hour FROM ${at} AT TIME ZONE 'UTC')::int AS hr, count(*)::int AS count FROM ${from} WHERE ${where} GROUP BY 1) n ON n.hr = h
                     ORDER BY h`,
    conversion_funnel: `SELECT stage, count
                        FROM (SELECT count(*)::int AS pushed,
                                     count(*) FILTER (WHERE attempt_count >= 1)::int AS dialled,
                                     count(*) FILTER (WHERE attempt_count >= 1 AND duration_seconds > 0)::int AS connected,
                                     count(*) FILTER (WHERE attempt_count >= 1 AND duration_seconds > 0 AND ${REACHED})::int AS completed
                              FROM ${from} WHERE ${where}) t,
                        LATERAL (VALUES (1, 'pushed', pushed), (2, 'dialled', dialled), (3, 'connected', connected), (4, 'completed', completed)) s (ord, stage, count)
                        ORDER BY ord`,
  };
  return { sql: sql[type], params };
}

/**
 * Over the rollup (migration 006), as the API reads it when the filters allow: the folded rows plus
 * the deltas not yet folded, whole UTC hours (the benchmark's date range is whole UTC days).
 */
function rawRollupQuery(type: QueryType, s: RawScope): RawQuery {
  const params: unknown[] = [s.resellerId];
  let where = 'reseller_id = $1';
  if (s.range) {
    params.push(s.range.from, s.range.to);
    where += ' AND hour >= $2::timestamptz AND hour < $3::timestamptz';
  }
  if (s.payload) throw new Error('the rollup has no payload');
  const totalsColumns = 'hour, status, leads, dialled, connected, completed, with_duration, duration_sum, duration_min, duration_max, negative, neutral, positive';
  const totals = `(SELECT ${totalsColumns}, NULL::int AS removed_min, NULL::int AS removed_max FROM lead_stats WHERE ${where}
                   UNION ALL SELECT ${totalsColumns}, removed_min, removed_max FROM lead_stats_delta WHERE ${where}) AS t`;
  // The benchmark's range is whole UTC days: breakdowns read the daily rows (and the pending hourly deltas).
  const whereDays = where.replace(/\bhour\b/g, 'day');
  const breakdown = (dimension: string) =>
    `(SELECT value, leads, reached, with_duration, duration_sum FROM lead_stats_breakdown_daily WHERE ${whereDays} AND dimension = '${dimension}'
      UNION ALL SELECT value, leads, reached, with_duration, duration_sum FROM lead_stats_breakdown_delta WHERE ${where} AND dimension = '${dimension}') AS b`;
  const lo = s.range ? "date_trunc('day', $2::timestamptz AT TIME ZONE 'UTC')" : '(SELECT min(day) FROM days)';
  const hi = s.range ? "date_trunc('day', ($3::timestamptz - interval '1 ms') AT TIME ZONE 'UTC')" : '(SELECT max(day) FROM days)';
  const share = `coalesce(round(100.0 * count / nullif(sum(count) OVER (), 0), 2), 0)::float8`;
  const avg = (sum: string, n: string) => `round(sum(${sum})::numeric / nullif(sum(${n}), 0), 2)::float8`;
  const sql: Record<QueryType, string> = {
    call_count: `SELECT coalesce(sum(leads), 0)::int AS count FROM ${totals}`,
    call_duration: `SELECT ${avg('duration_sum', 'with_duration')} AS avg, min(duration_min) AS min, max(duration_max) AS max,
                           coalesce(sum(duration_sum), 0)::bigint AS total
                    FROM ${totals}`,
    outcome_distribution: `SELECT value AS key, sum(leads)::int AS count, round(100.0 * sum(leads) / sum(sum(leads)) OVER (), 2)::float8 AS percentage
                           FROM ${breakdown('outcome')} GROUP BY value HAVING sum(leads) <> 0 ORDER BY value COLLATE "C"`,
    top_outcomes: `SELECT value AS key, sum(leads)::int AS count, round(100.0 * sum(leads) / sum(sum(leads)) OVER (), 2)::float8 AS percentage
                   FROM ${breakdown('outcome')} GROUP BY value HAVING sum(leads) <> 0 ORDER BY count DESC, value COLLATE "C"`,
    status_distribution: `SELECT key, count, ${share} AS percentage
                          FROM (SELECT s.ord, s.key, coalesce(n.count, 0) AS count
                                FROM (VALUES (1, 'BACKLOG'), (2, 'PROCESSING'), (3, 'RETRY'), (4, 'FINISHED')) s (ord, key)
                                LEFT JOIN (SELECT status, sum(leads)::int AS count FROM ${totals} GROUP BY status) n ON n.status = s.key) x
                          ORDER BY ord`,
    sentiment_distribution: `SELECT key, count, ${share} AS percentage
                             FROM (SELECT coalesce(sum(negative), 0)::int AS negative, coalesce(sum(neutral), 0)::int AS neutral,
                                          coalesce(sum(positive), 0)::int AS positive FROM ${totals}) x,
                             LATERAL (VALUES (1, 'negative', negative), (2, 'neutral', neutral), (3, 'positive', positive)) s (ord, key, count)
                             ORDER BY ord`,
    calls_over_time: `WITH days AS (SELECT date_trunc('day', hour AT TIME ZONE 'UTC') AS day, sum(leads)::int AS count FROM ${totals}
                                    GROUP BY 1 HAVING sum(leads) <> 0)
                      SELECT to_char(d, 'YYYY-MM-DD') AS date, coalesce(days.count, 0) AS count
                      FROM generate_series(${lo}, ${hi}, interval '1 day') d
                      LEFT JOIN days ON days.day = d ORDER BY d`,
    avg_duration_over_time: `WITH days AS (SELECT date_trunc('day', hour AT TIME ZONE 'UTC') AS day, ${avg('duration_sum', 'with_duration')} AS avg_duration
                                           FROM ${totals} GROUP BY 1 HAVING sum(leads) <> 0)
                             SELECT to_char(d, 'YYYY-MM-DD') AS date, coalesce(days.avg_duration, 0) AS avg_duration
                             FROM generate_series(${lo}, ${hi}, interval '1 day') d
                             LEFT JOIN days ON days.day = d ORDER BY d`,
    retry_analysis: `SELECT value::int AS attempts, sum(leads)::int AS count, round(sum(reached)::numeric / sum(leads), 4)::float8 AS success_rate
                     FROM ${breakdown('attempts')} GROUP BY value HAVING sum(leads) <> 0 ORDER BY 1`,
    provider_breakdown: `SELECT value AS provider, sum(leads)::int AS count, ${avg('duration_sum', 'with_duration')} AS avg_duration
                         FROM ${breakdown('provider')} GROUP BY value HAVING sum(leads) <> 0 ORDER BY count DESC, value COLLATE "C"`,
    hourly_heatmap: `SELECT h AS hour, coalesce(n.count, 0) AS count
                     FROM generate_series(0, 23) h
                     LEFT JOIN (SELECT extract(hour FROM hour AT TIME ZONE 'UTC')::int AS hr, sum(leads)::int AS count FROM ${totals} GROUP BY 1) n ON n.hr = h
                     ORDER BY h`,
    conversion_funnel: `SELECT stage, count
                        FROM (SELECT coalesce(sum(leads), 0)::int AS pushed, coalesce(sum(dialled), 0)::int AS dialled,
                                     coalesce(sum(connected), 0)::int AS connected, coalesce(sum(completed), 0)::int AS completed
                              FROM ${totals}) x,
                        LATERAL (VALUES (1, 'pushed', pushed), (2, 'dialled', dialled), (3, 'connected', connected), (4, 'completed', completed)) s (ord, stage, count)
                        ORDER BY ord`,
  };
  return { sql: sql[type], params };
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

const USAGE = `npm run bench:analytics -- [--leads N] [--pglite-leads N] [--backend both|postgres|pglite] [--iterations N] [--keep]

  --leads N          leads on PostgreSQL (default 1000000; env ANALYTICS_BENCH_LEADS, e.g. 20000 for a quick run)
  --pglite-leads N   leads on PGlite (default 200000, or a fifth of --leads when --leads is given)
  --backend B        which to run (default both)
  --iterations N     timed runs per query and variant, each for the API and the raw SQL (default 10; 8 on PGlite)
  --keep             keep the PostgreSQL database (dialer_bench_<leads>) and reuse it next time
  --pg NAME=VALUE    a server setting of the throwaway PostgreSQL (repeatable), e.g. --pg shared_buffers=1GB
DATABASE_URL         use this PostgreSQL server (it must allow CREATE DATABASE) instead of a throwaway one`;

interface Args {
  leads: number;
  pgliteLeads: number;
  backends: ('postgres' | 'pglite')[];
  iterations?: number;
  keep: boolean;
  pgSettings: Record<string, string>;
}

function parseArguments(): Args {
  const { values } = parseArgs({
    options: {
      leads: { type: 'string' },
      'pglite-leads': { type: 'string' },
      backend: { type: 'string', default: 'both' },
      iterations: { type: 'string' },
      keep: { type: 'boolean', default: false },
      pg: { type: 'string', multiple: true },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const count = (name: string, raw: string | undefined, fallback: number) => {
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`--${name} must be a positive whole number\n${USAGE}`);
    return Number(raw);
  };
  const leadsArg = values.leads ?? process.env.ANALYTICS_BENCH_LEADS?.trim();
  const leads = count('leads', leadsArg, 1_000_000);
  const backend = values.backend;
  if (backend !== 'both' && backend !== 'postgres' && backend !== 'pglite') throw new Error(`--backend must be both, postgres or pglite\n${USAGE}`);
  return {
    leads,
    pgliteLeads: count('pglite-leads', values['pglite-leads'], leadsArg === undefined ? 200_000 : Math.max(1, Math.round(leads / 5))),
    backends: backend === 'both' ? ['postgres', 'pglite'] : [backend],
    ...(values.iterations === undefined ? {} : { iterations: count('iterations', values.iterations, 20) }),
    keep: values.keep ?? false,
    pgSettings: Object.fromEntries(
      (values.pg ?? []).map((setting) => {
        const m = /^([a-z_.]+)=(.+)$/.exec(setting);
        if (!m) throw new Error(`--pg takes NAME=VALUE, got ${setting}\n${USAGE}`);
        return [m[1]!, m[2]!];
      }),
    ),
  };
}

const DAY_MS = 86_400_000;
const PAYLOAD_FILTER = { campaign: 'reactivation' };
/** Runs of the hand-written query over the leads beside the baseline: only to show the speed-up. */
const LEADS_RUNS = 3;
const ADMIN: Principal = { kind: 'user', id: 'bench', label: 'bench', role: 'admin', resellerId: null, merchantId: null };

interface Measured {
  backend: string;
  query: QueryType;
  variant: string;
  api: number[];
  /** The hand-written baseline of the same answer: over the rollup when the API answers from it, else over the leads. */
  raw: number[];
  /** The hand-written query over the leads (fewer runs: it is the slow one). */
  leads: number[];
  /** Per API request, the time its statements took in the database (the rest is the service's own). */
  inDb: number[];
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
};
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const result = await fn();
  return [performance.now() - started, result];
}

/** The payload terms' storage (table and indexes) against the leads table's, as the aim states it. */
async function printStorage(db: Db, label: string): Promise<void> {
  const { rows } = await db.query<{ leads: string; terms: string }>(
    "SELECT pg_total_relation_size('leads')::text AS leads, pg_total_relation_size('lead_payload_terms')::text AS terms",
  );
  const mb = (bytes: string) => (Number(bytes) / 1024 / 1024).toFixed(0);
  const { leads, terms } = rows[0]!;
  process.stdout.write(`${label}: storage: leads ${mb(leads)} MB, payload terms ${mb(terms)} MB (${(Number(terms) / Number(leads)).toFixed(2)}x the leads), tables with their indexes\n`);
}

/** A database with `leads` demo leads in one reseller; seeded unless a kept one already has them. */
async function prepare(db: Db, leads: number, label: string): Promise<string> {
  const existing = await db.query<{ id: string; n: number }>(
    "SELECT r.id, (SELECT count(*) FROM leads l WHERE l.reseller_id = r.id)::int AS n FROM resellers r WHERE r.name = 'Demo Reseller'",
  );
  if (existing.rows[0]?.n === leads) {
    process.stdout.write(`${label}: reusing ${leads} leads\n`);
    // A kept database migrated since: its backfill waits as deltas; leads changed by another
    // benchmark (analytics-write-cost) may be pending. Folded as the service's folder would.
    for (;;) {
      const round = await foldAnalytics(db);
      if (round.moved === 0 && round.terms === 0) break;
    }
    await db.query('VACUUM ANALYZE lead_stats, lead_stats_breakdown, lead_stats_breakdown_daily, lead_payload_terms');
    if (db.kind === 'postgres') await printStorage(db, label);
    return existing.rows[0].id;
  }
  const started = Date.now();
  let last = 0;
  const scope = await seedDemoLeads(db, {
    leads,
    days: 90,
    seed: 7,
    batchSize: 10_000,
    onProgress: (written) => {
      if (written - last >= leads / 10 || written === leads) {
        last = written;
        process.stdout.write(`${label}: seeded ${written}/${leads} leads (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
      }
    },
  });
  // As autovacuum would after the bulk insert: the visibility map lets the terms be read index-only.
  await db.query('VACUUM ANALYZE leads, lead_stats, lead_stats_breakdown, lead_stats_breakdown_daily, lead_payload_terms');
  process.stdout.write(`${label}: ${leads} leads seeded in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  if (db.kind === 'postgres') await printStorage(db, label);
  return scope.resellerId;
}

/**
 * `db` with the time of each statement added to `spent.ms`: a request's statements, timed from the
 * service's side of the driver, are the database's part of it; the rest of the request is the
 * service's own (HTTP, token and user check, validation, SQL building, JSON).
 */
function timedDb(db: Db, spent: { ms: number }): Db {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
      return async (...args: Parameters<Db['query']>) => {
        const started = performance.now();
        try {
          return await target.query(...args);
        } finally {
          spent.ms += performance.now() - started;
        }
      };
    },
  });
}

/** The Dialer app over `db`, and a login token of a reseller user of `resellerId`. */
async function appFor(db: Db, resellerId: string): Promise<{ app: App; token: string; close(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-'));
  const config = loadConfig({ DIALER_DATA_DIR: dataDir, DIALER_JWT_SECRET: 'bench-secret-bench-secret-bench-secret-00', LOG_LEVEL: 'silent' });
  const email = `bench-${resellerId.slice(0, 8)}@example.com`;
  const password = 'bench-password-1';
  const tenants = tenantsService(db);
  await tenants.createUser(ADMIN, { email, password, role: 'reseller', reseller_id: resellerId }).catch((err: unknown) => {
    if (!(err instanceof Error && /already exists/.test(err.message))) throw err;
  });
  const app = await composeApp({ config, db });
  await app.ready();
  const login = await app.inject({ method: 'POST', url: `${API_PREFIX}/login`, payload: { email, password } });
  if (login.statusCode !== 200) throw new Error(`login failed: ${login.body}`);
  return {
    app,
    token: (JSON.parse(login.body) as { access_token: string }).access_token,
    close: async () => {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function runBackend(label: string, db: Db, leads: number, iterations: number): Promise<Measured[]> {
  const resellerId = await prepare(db, leads, label);
  const spent = { ms: 0 };
  const { app, token, close } = await appFor(timedDb(db, spent), resellerId);
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  // `source`: the API answers these from the rollup or the payload terms (checked below), so the
  // baseline is the same query hand-written over that source; the one over the leads is timed too.
  const variants: { name: string; filters: Record<string, unknown>; scope: RawScope; source: 'rollup' | 'terms' }[] = [
    { name: 'none', filters: {}, scope: { resellerId }, source: 'rollup' },
    {
      name: 'date_range',
      filters: { date_from: day(today - 30 * DAY_MS), date_to: day(today - DAY_MS) },
      scope: { resellerId, range: { from: new Date(today - 30 * DAY_MS).toISOString(), to: new Date(today).toISOString() } },
      source: 'rollup',
    },
    { name: 'payload', filters: { payload_filters: PAYLOAD_FILTER }, scope: { resellerId, payload: PAYLOAD_FILTER }, source: 'terms' },
  ];
  const only = { rollup: new AnalyticsService(db, { source: 'rollup' }), terms: new AnalyticsService(db, { source: 'terms' }) };
  const reseller: Principal = { kind: 'user', id: 'bench', label: 'bench', role: 'reseller', resellerId, merchantId: null };
  const selectivity = await db.query<{ share: number }>(
    `SELECT round(100.0 * count(*) FILTER (WHERE payload @> $1::jsonb) / count(*), 1)::float8 AS share FROM leads`,
    [JSON.stringify(PAYLOAD_FILTER)],
  );
  process.stdout.write(`${label}: payload filter ${JSON.stringify(PAYLOAD_FILTER)} matches ${selectivity.rows[0]!.share}% of the leads\n`);

  const out: Measured[] = [];
  for (const query of QUERY_TYPES) {
    for (const variant of variants) {
      const body = { query_type: query, filters: variant.filters, granularity: 'day', page_size: 1000 };
      const api = async () => {
        spent.ms = 0;
        const res = await app.inject({
          method: 'POST',
          url: `${API_PREFIX}/analytics`,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
        if (res.statusCode !== 200) throw new Error(`${query} ${variant.name}: ${res.statusCode} ${res.body}`);
        return JSON.parse(res.body) as { data: unknown[] };
      };
      const leadsSql = rawQuery(query, variant.scope);
      const raw = variant.source === 'rollup' ? rawRollupQuery(query, variant.scope) : rawQuery(query, variant.scope, 'terms');
      const runRaw = async () => (await db.query(raw.sql, raw.params)).rows;
      const runLeads = async () => (await db.query(leadsSql.sql, leadsSql.params)).rows;
      // Same answer every way, or the comparison means nothing; and the source does answer these.
      const [apiAnswer, rawAnswer] = [await api(), await runRaw()];
      assert.deepEqual(apiAnswer.data, rawAnswer, `${label} ${query} ${variant.name}: the API and the raw SQL disagree`);
      assert.deepEqual(await runLeads(), rawAnswer, `${label} ${query} ${variant.name}: the ${variant.source} and the leads disagree`);
      await only[variant.source].query(reseller, body as never); // throws when the source cannot answer it
      const measured: Measured = { backend: label, query, variant: variant.name, api: [], raw: [], leads: [], inDb: [] };
      const timedApi = async () => {
        measured.api.push((await timed(api))[0]);
        measured.inDb.push(spent.ms);
      };
      for (let i = 0; i < iterations; i++) {
        // Alternate which goes first, so neither always runs on a warmer cache.
        if (i % 2 === 0) {
          await timedApi();
          measured.raw.push((await timed(runRaw))[0]);
        } else {
          measured.raw.push((await timed(runRaw))[0]);
          await timedApi();
        }
      }
      for (let i = 0; i < LEADS_RUNS; i++) measured.leads.push((await timed(runLeads))[0]);
      const a = stats(measured.api);
      const r = stats(measured.raw);
      const own = stats(measured.api.map((ms, i) => ms - measured.inDb[i]!));
      const sqlDb = stats(measured.inDb);
      const viaLeads = measured.leads.length > 0 ? stats(measured.leads).p50 : undefined;
      process.stdout.write(
        `${label.padEnd(10)} ${query.padEnd(23)} ${variant.name.padEnd(10)} ` +
          `api p50 ${ms(a.p50).padStart(6)} p95 ${ms(a.p95).padStart(6)} ms | raw ${variant.source.padEnd(6)} p50 ${ms(r.p50).padStart(6)} p95 ${ms(r.p95).padStart(6)} ms | ` +
          `ratio ${(a.p50 / r.p50).toFixed(2)} | own p50 ${ms(own.p50).padStart(5)} ms, its SQL p50 ${ms(sqlDb.p50).padStart(6)} ms` +
          (viaLeads === undefined ? '' : ` | raw leads p50 ${ms(viaLeads).padStart(6)} ms (x${(viaLeads / a.p50).toFixed(0)} the API)`) +
          '\n',
      );
      out.push(measured);
    }
  }
  await close();
  return out;
}

function summary(results: Measured[]): { worst: Measured; worstP95: number; ratio: number; overheadMs: number; ownMs: number; ownOf: Measured } {
  let worst = results[0]!;
  let worstP95 = -1;
  let ratio = 0;
  let overheadMs = 0;
  let ownMs = 0;
  let ownOf = results[0]!;
  for (const m of results) {
    const a = stats(m.api);
    const r = stats(m.raw);
    if (a.p95 > worstP95) [worst, worstP95] = [m, a.p95];
    ratio = Math.max(ratio, a.p50 / r.p50);
    overheadMs = Math.max(overheadMs, a.p50 - r.p50);
    const own = stats(m.api.map((ms, i) => ms - m.inDb[i]!)).p50;
    if (own > ownMs) [ownMs, ownOf] = [own, m];
  }
  return { worst, worstP95, ratio, overheadMs, ownMs, ownOf };
}

async function main(): Promise<void> {
  const args = parseArguments();
  const all: Measured[][] = [];
  process.stdout.write(`analytics benchmark: ${QUERY_TYPES.length} query types x (no filter, last 30 days, payload filter), as a reseller, day granularity\n`);
  if (args.backends.includes('postgres')) {
    const server = await benchPostgres(args.pgSettings);
    // Interrupted: stop a throwaway server rather than leave it running.
    const interrupted = () => void server.stop().finally(() => process.exit(130));
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    const name = args.keep ? `dialer_bench_${args.leads}` : `dialer_bench_${process.pid}`;
    let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
    try {
      database = await createDatabase(server.url, name, { reuse: args.keep });
      const db = await openPostgres(database.url);
      try {
        await migrate(db);
        const settings = Object.entries(args.pgSettings).map(([k, v]) => `${k}=${v}`).join(', ');
        process.stdout.write(`postgres: ${server.label}, database ${name}${settings ? `, ${settings}` : ''}\n`);
        all.push(await runBackend('postgres', db, args.leads, args.iterations ?? 10));
      } finally {
        await db.close();
      }
    } finally {
      if (database && !args.keep) await database.drop();
      await server.stop();
    }
  }
  if (args.backends.includes('pglite')) {
    const db = await openPglite(undefined);
    try {
      await migrate(db);
      process.stdout.write('pglite: in memory\n');
      all.push(await runBackend('pglite', db, args.pgliteLeads, args.iterations ?? 8));
    } finally {
      await db.close();
    }
  }
  const lines = all.map((results) => ({ results, ...summary(results) }));
  for (const { results, worst, worstP95, ratio, overheadMs, ownMs, ownOf } of lines) {
    // The ratio of a 2 ms rollup query is mostly the fixed cost of a request (HTTP, token and user
    // lookup, validation, JSON): the largest overhead in milliseconds says how much that is. Where the
    // query takes hundreds of milliseconds, API p50 - raw p50 is mostly the database's run-to-run
    // spread; the service's own time (the request less its statements' time) is measured directly.
    process.stdout.write(
      `${results[0]!.backend}: worst p95 ${ms(worstP95)} ms (${worst.query}, ${worst.variant}), max overhead ratio ${ratio.toFixed(2)}, ` +
        `max overhead ${ms(overheadMs)} ms (API p50 - raw p50), max own time ${ms(ownMs)} ms (${ownOf.query}, ${ownOf.variant}: API p50 less its statements)\n`,
    );
  }
  // The last line speaks for PostgreSQL when it ran (the target of the aim), else for PGlite.
  const last = lines[0]!;
  process.stdout.write(`analytics: worst p95 ${ms(last.worstP95)} ms (${last.worst.query}), max overhead ratio ${last.ratio.toFixed(2)}\n`);
}

await main();
