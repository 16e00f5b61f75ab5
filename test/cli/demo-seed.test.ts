/**
 * `dialer demo seed`: writes realistic finished leads into the configured database (here PGlite in
 * a temporary data directory), which analytics then reads like any other leads.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { AnalyticsService } from '../../src/analytics/index.js';
import type { Principal } from '../../src/auth/index.js';
import { openAndMigrate } from '../../src/db/index.js';
import { migratedDataDir } from '../helpers/db.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-demo-'));
// The migrated database is in the data directory already: the subject is the seeding, not a first start.
await migratedDataDir(dataDir);
after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, DIALER_DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'demo', 'seed', ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const ADMIN: Principal = { kind: 'user', id: 'test', label: 'test', role: 'admin', resellerId: null, merchantId: null };

describe('dialer demo seed', () => {
  it('writes finished leads over the given days, into a demo reseller, again on a second run', async () => {
    const first = await run(['--leads', '400', '--days', '10']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /Seeded 400 finished leads over 10 days into reseller [0-9a-f-]{36} \(2 merchants, 3 templates; pglite\)/);
    const second = await run(['--leads', '100', '--days', '10', '--seed', '2']);
    assert.equal(second.code, 0, second.stderr);

    const db = await openAndMigrate({ databaseUrl: undefined, dataDir });
    try {
      const { rows } = await db.query<{ resellers: number; leads: number; finished: number; oldest: string; newest: string; tests: number }>(
        `SELECT count(DISTINCT reseller_id)::int AS resellers, count(*)::int AS leads, count(*) FILTER (WHERE status = 'FINISHED')::int AS finished,
                min(coalesce(call_initiated_time, created_at))::text AS oldest, max(coalesce(call_initiated_time, created_at))::text AS newest,
                count(*) FILTER (WHERE is_playground OR execution_mode LIKE '%_TEST')::int AS tests
         FROM leads`,
      );
      const r = rows[0]!;
      assert.equal(r.resellers, 1);
      assert.equal(r.leads, 500);
      assert.equal(r.finished, 500);
      const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
      assert.ok(Date.parse(r.newest) < today, `newest ${r.newest} is before today`);
      assert.ok(Date.parse(r.oldest) >= today - 11 * 86_400_000, `oldest ${r.oldest} within the days asked (pushed up to a few hours earlier)`);

      // Analytics reads them: live leads only, every query type answers.
      const analytics = new AnalyticsService(db);
      const count = await analytics.query(ADMIN, { query_type: 'call_count' });
      assert.equal((count.data[0] as { count: number }).count, 500 - r.tests);
      const funnel = await analytics.query(ADMIN, { query_type: 'conversion_funnel' });
      const stages = funnel.data as { stage: string; count: number }[];
      assert.deepEqual(stages.map((s) => s.stage), ['pushed', 'dialled', 'connected', 'completed']);
      for (let i = 1; i < stages.length; i++) assert.ok(stages[i]!.count <= stages[i - 1]!.count && stages[i]!.count > 0, JSON.stringify(stages));
      const outcomes = await analytics.query(ADMIN, { query_type: 'top_outcomes', page_size: 3 });
      assert.equal((outcomes.data[0] as { key: string }).key, 'confirmed');
      const days = await analytics.query(ADMIN, { query_type: 'calls_over_time', granularity: 'day' });
      assert.ok(days.total >= 10 && days.total <= 11, `days: ${days.total}`);
    } finally {
      await db.close();
    }
  });

  it('refuses a bad --leads', async () => {
    const res = await run(['--leads', '0']);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /--leads must be between 1/);
  });
});
