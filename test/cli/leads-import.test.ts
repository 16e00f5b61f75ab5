import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PREFIX, buildTestApp, type TestApp } from '../helpers/app.js';
import { buildWorld, issueToken, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
let apiUrl: string;
let token: string;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-import-'));

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  const tpl = await w.reseller1.post('/templates', {
    name: 'import-tpl',
    reseller_id: w.r1,
    flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi {customer_name}' }] }] },
  });
  assert.equal(tpl.status, 200);
  await w.reseller1.post('/blacklist', { phone_numbers: ['+14155550199'] });
  token = await issueToken(t.admin, { role: 'reseller', reseller_id: w.r1 });
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  apiUrl = `${address}${PREFIX}`;
});
after(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'leads', 'import', ...args], {
      env: { ...process.env, DIALER_TOKEN: token, LOG_LEVEL: 'silent', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('dialer leads import', () => {
  it('pushes every row, reports rejected rows with reasons and lines, and writes them to a file', async () => {
    const file = path.join(dir, 'campaign.csv');
    const rows = ['customer_mobile_number,customer_name,request_id,plan'];
    for (let i = 0; i < 2500; i++) rows.push(`+1646555${String(3000 + i).padStart(4, '0')},Name ${i},,gold`);
    rows.push('+14155550199,Blacklisted,,'); // line 2502
    rows.push('not-a-number,Bad,,'); // line 2503
    rows.push('+14155550123,"Smith, Jane",custom-id,"silver"'); // line 2504
    rows.push('+14155550124,,,'); // line 2505: no customer_name
    fs.writeFileSync(file, rows.join('\n') + '\n');
    const res = await run([file, '--template', 'import-tpl', '--reseller-id', w.r1, '--url', apiUrl]);
    assert.equal(res.code, 2, res.stderr + res.stdout);
    assert.match(res.stdout, /2504 rows, 2501 queued, 3 rejected/);
    assert.match(res.stdout, /1 x 403 payload.customer_mobile_number \+14155550199 is blacklisted \(line 2502\)/);
    assert.match(res.stdout, /1 x 422 .*customer_mobile_number.*\(line 2503\)/);
    assert.match(res.stdout, /1 x 422 .*\/payload\/customer_name.*\(line 2505\)/);
    const rejects = fs.readFileSync(`${file}.rejected.csv`, 'utf8').trim().split('\n');
    assert.equal(rejects[0], 'line,status,reason');
    assert.deepEqual(rejects.slice(1).map((l) => l.split(',').slice(0, 2).join(',')), ['2502,403', '2503,422', '2505,422']);

    const { rows: leads } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads WHERE template_name = 'import-tpl'`);
    assert.equal(leads[0]!.n, 2501);
    const smith = await t.db.query<{ request_id: string; payload: Record<string, unknown> }>(
      `SELECT request_id, payload FROM leads WHERE payload->>'customer_mobile_number' = '+14155550123'`,
    );
    assert.equal(smith.rows[0]!.request_id, 'custom-id');
    assert.deepEqual(smith.rows[0]!.payload, { customer_mobile_number: '+14155550123', customer_name: 'Smith, Jane', plan: 'silver' });
    const first = await t.db.query<{ request_id: string }>(`SELECT request_id FROM leads WHERE payload->>'customer_mobile_number' = '+16465553000'`);
    assert.equal(first.rows[0]!.request_id, 'campaign:2');
  });

  it('--campaign: every lead joins the campaign; an unknown campaign rejects every row', async () => {
    const campaign = await w.reseller1.post('/campaigns', { name: 'import campaign', reseller_id: w.r1, template: 'import-tpl', max_concurrent_calls: 2 });
    assert.equal(campaign.status, 201, JSON.stringify(campaign.body));
    const file = path.join(dir, 'joins.csv');
    fs.writeFileSync(file, 'customer_mobile_number,customer_name\n+16465557001,Ann\n+16465557002,Bob\n');
    const res = await run([file, '--template', 'import-tpl', '--reseller-id', w.r1, '--url', apiUrl, '--campaign', campaign.body.id]);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    assert.match(res.stdout, /2 rows, 2 queued, 0 rejected/);
    const progress = (await w.reseller1.get(`/campaigns/${campaign.body.id}`)).body.progress;
    assert.equal(progress.total, 2);
    assert.equal(progress.queued, 2);

    const refused = await run([file, '--template', 'import-tpl', '--reseller-id', w.r1, '--url', apiUrl, '--campaign', 'no-such-campaign']);
    assert.equal(refused.code, 2, refused.stderr + refused.stdout);
    assert.match(refused.stdout, /2 x 404 No campaign no-such-campaign exists/);
  });

  it('--skip-duplicates: numbers repeated in the file or still queued in the campaign are reported and left out', async () => {
    const campaign = await w.reseller1.post('/campaigns', { name: 'dedupe campaign', reseller_id: w.r1, template: 'import-tpl' });
    assert.equal(campaign.status, 201, JSON.stringify(campaign.body));
    const first = path.join(dir, 'first.csv');
    fs.writeFileSync(first, 'customer_mobile_number,customer_name\n+16465557101,Ann\n');
    assert.equal((await run([first, '--template', 'import-tpl', '--reseller-id', w.r1, '--url', apiUrl, '--campaign', campaign.body.id])).code, 0);
    const file = path.join(dir, 'dupes.csv');
    fs.writeFileSync(file, 'customer_mobile_number,customer_name\n+16465557101,Ann\n+16465557102,Bob\n+16465557102,Bob again\n+16465557103,Cy\n');
    const reported = await run([file, '--template', 'import-tpl', '--reseller-id', w.r1, '--url', apiUrl, '--campaign', campaign.body.id, '--dedupe-days', '7', '--rejects', path.join(dir, 'r1.csv')]);
    assert.equal(reported.code, 0, reported.stderr + reported.stdout);
    assert.match(reported.stdout, /4 rows, 4 queued, 0 rejected/);
    assert.match(reported.stdout, /Duplicates \(queued: pass --skip-duplicates to leave them out\): 1 repeated in the file, 1 already queued in the campaign, 0 called recently/);
    const skipping = await run([file, '--template', 'import-tpl', '--reseller-id', w.r1, '--url', apiUrl, '--campaign', campaign.body.id, '--skip-duplicates']);
    assert.equal(skipping.code, 0, skipping.stderr + skipping.stdout);
    // Every number of the file is now queued in the campaign: the repeat is skipped in the file, the rest as queued.
    assert.match(skipping.stdout, /4 rows, 0 queued, 4 duplicates skipped, 0 rejected/);
    assert.equal((await w.reseller1.get(`/campaigns/${campaign.body.id}`)).body.progress.total, 5);
    const bad = await run([file, '--template', 'import-tpl', '--reseller-id', w.r1, '--url', apiUrl, '--dedupe-days', 'many']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--dedupe-days must be a whole number/);
  });

  it('refuses a file without a customer_mobile_number column before sending anything', async () => {
    const file = path.join(dir, 'nophone.csv');
    fs.writeFileSync(file, 'phone,customer_name\n+14155550123,A\n');
    const res = await run([file, '--template', 'import-tpl', '--reseller-id', w.r1, '--url', apiUrl]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /no customer_mobile_number column/);
  });

  it('stops with a clear message on a bad token or an unreachable service', async () => {
    const file = path.join(dir, 'one.csv');
    fs.writeFileSync(file, 'customer_mobile_number,customer_name\n+14155550125,A\n');
    const bad = await run([file, '--template', 'import-tpl', '--reseller-id', w.r1, '--url', apiUrl], { DIALER_TOKEN: 's2s_wrong' });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /refused the import: 401/);
    const none = await run([file, '--template', 'import-tpl', '--reseller-id', w.r1], { DIALER_TOKEN: '' });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /a token is needed/);
    const missing = await run([path.join(dir, 'absent.csv'), '--template', 'import-tpl', '--reseller-id', w.r1, '--url', apiUrl]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read/);
  });
});
