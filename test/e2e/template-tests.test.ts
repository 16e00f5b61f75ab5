/**
 * Template test suites end to end: `dialer serve` with the sandbox line (no telephony credentials)
 * and the voice engine on a local OpenAI-compatible server. A run plays each case as a real call:
 * the emulator's callee speaks its lines with the local voice, Dialer's VAD and speech-to-text hear
 * them, the template's flow answers (the LLM's answers are scripted from the request: the lead's
 * name in the prompt picks them, so cases can run at once). One case passes; the other fails naming
 * the function that was not called. `dialer test` prints the same verdicts, writes JUnit and exits
 * 0 or 1. In Chromium, the template page's Tests card runs the suite and opens the failed case.
 * The template chooses its voice, model, temperature and language: its calls' requests to the
 * local server carry them.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { API_PREFIX } from '../../src/app.js';
import type { RunningServer } from '../../src/server.js';
import { client, type Client } from '../helpers/app.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { freePort } from '../helpers/net.js';
import { serveDialer } from '../helpers/serve.js';
import { callee, FLOW } from '../fixtures/booking.js';
import { issueToken } from '../helpers/world.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { launchDashboardBrowser, logIn, newContext, shoot, watchProblems } from '../helpers/dashboard.js';

let server: RunningServer;
let ai: OpenAIServer;
let admin: Client;
let dataDir: string;
let reseller: string;
let templateId: string;

const BOOKS = {
  name: 'books a visit',
  variables: { customer_name: 'Ana' },
  callee: callee('Yes, Tuesday works for me.'),
  expectations: [
    { kind: 'outcome', equals: 'booked' },
    { kind: 'nodes', nodes: ['greet', 'booked'], match: 'exact' },
    { kind: 'function_called', name: 'book_visit', arguments: { day: 'Tuesday' } },
    { kind: 'says', text: 'your visit is booked' },
    { kind: 'never_says', text: 'sorry' },
    { kind: 'turn_latency', max_ms: 30_000 },
    { kind: 'judge', criteria: 'The agent books the visit the customer agreed to.' },
  ],
};
const DECLINES = {
  name: 'declines',
  variables: { customer_name: 'Ben' },
  callee: callee('No, thank you.'),
  expectations: [
    { kind: 'function_called', name: 'book_visit' },
    { kind: 'says', text: 'no problem' },
  ],
};

before(async () => {
  ai = await startOpenAIServer();
  // Scripted from the request: the judge's verdict, else the lead's name and whether the callee spoke yet.
  ai.respond = (body: any) => {
    // The persona: its first line agrees, its next (it has spoken before) says goodbye and hangs up.
    if (String(body.messages[0]?.content).startsWith('You are playing a customer')) {
      return { text: body.messages.some((m: any) => m.role === 'assistant') ? 'Thank you, goodbye. [hang up]' : 'Yes, Tuesday works for me.' };
    }
    if (body.tools?.some((t: any) => t.function?.name === 'record_analysis')) {
      return { tools: [{ name: 'record_analysis', arguments: { success: true, reason: 'The customer agreed and the agent booked Tuesday.' } }] };
    }
    const prompt = JSON.stringify(body.messages);
    const spoke = body.messages.some((m: any) => m.role === 'user');
    if (prompt.includes('Ana')) return spoke ? { tools: [{ name: 'book_visit', arguments: { day: 'Tuesday' } }] } : { text: 'Hi Ana, shall I book your visit for Tuesday?' };
    return spoke ? { text: 'No problem, goodbye.' } : { text: 'Hi Ben, shall I book your visit for Tuesday?' };
  };
  ai.transcribe = () => 'Okay.';
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-template-tests-'));
  const port = await freePort();
  ({ server, admin } = await serveDialer({
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'template-tests-secret-template-tests-01',
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    DIALER_SANDBOX: 'true',
    LOG_LEVEL: 'silent',
    LLM_BASE_URL: ai.url,
    STT_BASE_URL: ai.url,
    TTS_BASE_URL: ai.url,
    LLM_MODELS: 'gpt-4.1-mini',
  }));
  reseller = (await admin.post('/resellers', { name: 'Clinic' })).body.id;
  const tpl = await admin.post('/templates', { name: 'booking', reseller_id: reseller, flow: FLOW });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  templateId = tpl.body.id;
});

after(async () => {
  await server?.close();
  await ai?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function finished(runId: string): Promise<any> {
  for (;;) {
    const run = (await admin.get(`/test-runs/${runId}`)).body;
    if (run.status !== 'running') return run;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'test', '--template', 'booking', '--reseller-id', reseller, '--url', `${server.url}${API_PREFIX}`, ...args], {
      env: { ...process.env, DIALER_TOKEN: admin.token, LOG_LEVEL: 'silent' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('template test suites', { timeout: 240_000 }, () => {
  it('cases are stored with the template; an unknown expectation kind or a missing field is a 422 naming it', async () => {
    for (const c of [BOOKS, DECLINES]) assert.equal((await admin.post(`/templates/${templateId}/tests`, c)).status, 201);
    const bad = await admin.post(`/templates/${templateId}/tests`, { ...BOOKS, name: 'bad', expectations: [{ kind: 'sounds_happy' }, { kind: 'says' }] });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors.map((e: any) => e.path), ['/expectations/0/kind', '/expectations/1/text']);
    assert.match(bad.body.detail, /unknown expectation kind "sounds_happy"; known kinds: outcome, nodes/);
    assert.equal((await admin.post(`/templates/${templateId}/tests`, BOOKS)).status, 409);
    const list = (await admin.get(`/templates/${templateId}/tests`)).body.data;
    assert.deepEqual(list.map((c: any) => c.name), ['books a visit', 'declines']);
    const patched = await admin.raw({
      method: 'PATCH',
      path: `/templates/${templateId}/tests/${list[1].id}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ expectations: [{ kind: 'bogus' }] }),
    });
    assert.equal(patched.status, 422);
    // Another reseller sees none of it and cannot run it.
    const other = (await admin.post('/resellers', { name: 'Other' })).body.id;
    const stranger = client(server.app, await issueToken(admin, { role: 'reseller', reseller_id: other }));
    assert.equal((await stranger.get(`/templates/${templateId}/tests`)).status, 404);
    assert.equal((await stranger.post(`/templates/${templateId}/tests/run`, {})).status, 404);
  });

  it("the template's voice, model, temperature and language are chosen from the options the service lists", async () => {
    const options = (await admin.get('/agent-options')).body;
    assert.deepEqual(options.llm_models.map((m: any) => [m.id, m.default]), [['gpt-4o-mini', true], ['gpt-4.1-mini', false]]);
    assert.deepEqual(options.voices.filter((v: any) => v.default).map((v: any) => v.id), ['openai:alloy']);
    assert.ok(options.voices.some((v: any) => v.id === 'local:kal') && options.stt_languages.some((l: any) => l.id === 'es'), JSON.stringify(options));
    const tpl = (await admin.get(`/templates/${templateId}`)).body;
    const put = (agent: unknown) => admin.put(`/templates/${templateId}`, { id: templateId, name: tpl.name, flow: tpl.flow, agent });
    const refused = await put({ llm_model: 'gpt-5-huge', stt_language: 'xx' });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body.errors.map((e: any) => e.path), ['/agent/llm_model', '/agent/stt_language']);
    const agent = { voice: 'openai:nova', llm_model: 'gpt-4.1-mini', temperature: 0.3, stt_language: 'es-ES' };
    const saved = await put(agent);
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.deepEqual(saved.body.agent, agent);
  });

  it('a run plays both cases as calls at once: one passes with its evidence, the other fails naming the function not called; no lead counts in analytics', async () => {
    const started = await admin.post(`/templates/${templateId}/tests/run`, {});
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.agent, 'flow');
    const run = await finished(started.body.id);
    assert.equal(run.status, 'failed', JSON.stringify(run, null, 1));
    const [books, declines] = run.cases;
    assert.equal(books.status, 'passed', JSON.stringify(books, null, 1));
    assert.deepEqual(books.expectations.map((e: any) => [e.kind, e.passed]), BOOKS.expectations.map((e) => [e.kind, true]));
    assert.equal(books.outcome, 'booked');
    assert.deepEqual(books.node_path, ['greet', 'booked']);
    assert.match(books.expectations[6].detail, /agreed/);
    assert.ok(books.transcript.length >= 3 && books.turn_latency_ms.length >= 1 && books.cost > 0, JSON.stringify(books));
    const rec = await admin.raw({ method: 'GET', path: books.recording_url.slice(books.recording_url.indexOf(API_PREFIX) + API_PREFIX.length) });
    assert.equal(rec.status, 200);
    assert.equal(declines.status, 'failed');
    assert.deepEqual(declines.expectations.map((e: any) => e.passed), [false, true]);
    assert.equal(declines.expectations[0].detail, 'book_visit was not called (functions called: none)');
    // Both calls were live together (one per sandbox provider).
    const leads = await Promise.all(run.cases.map(async (c: any) => (await admin.get(`/leads/${c.lead_id}`)).body));
    assert.deepEqual(leads.map((l) => [l.execution_mode, l.is_playground]), [['TELEPHONY_TEST', true], ['TELEPHONY_TEST', true]]);
    const attempts = await Promise.all(run.cases.map(async (c: any) => (await admin.get(`/leads/${c.lead_id}/attempts`)).body.data[0]));
    assert.ok(Date.parse(attempts[0].started_at) < Date.parse(attempts[1].ended_at) && Date.parse(attempts[1].started_at) < Date.parse(attempts[0].ended_at), JSON.stringify(attempts));
    const analytics = await admin.post('/analytics', { query_type: 'call_count', filters: { reseller_id: reseller } });
    assert.equal(analytics.status, 200, JSON.stringify(analytics.body));
    assert.deepEqual(analytics.body.data, [{ count: 0 }]);
    assert.equal((await admin.get(`/templates/${templateId}/test-runs`)).body.data[0].id, run.id);    // The calls ran with the template's choices: the flow's chat requests (those offering book_visit)
    // with its model and temperature, the agent's speech in its voice, the callee heard in Spanish
    // (transcription takes the language part of es-ES).
    const flowChats = ai.chatRequests.filter((r) => r.body.tools?.some((t: any) => t.function?.name === 'book_visit'));
    assert.ok(flowChats.length >= 2);
    assert.deepEqual([...new Set(flowChats.map((r) => `${r.body.model} ${r.body.temperature}`))], ['gpt-4.1-mini 0.3']);
    assert.ok(ai.speechRequests.length >= 2);
    assert.deepEqual([...new Set(ai.speechRequests.map((r) => r.voice))], ['nova']);
    assert.ok(ai.transcriptionRequests.length >= 2);
    assert.deepEqual([...new Set(ai.transcriptionRequests.map((r) => r.language))], ['es']);
  });

  it('a persona callee is played by the LLM from the transcript so far, and judged like a scripted one', async () => {
    const PERSONA = {
      name: 'persona books',
      variables: { customer_name: 'Ana' },
      callee: { persona: 'Ana, a patient of Acme Clinic, free on Tuesdays', goal: 'book the visit for Tuesday', max_turns: 3, max_seconds: 40 },
      expectations: [
        { kind: 'function_called', name: 'book_visit', arguments: { day: 'Tuesday' } },
        { kind: 'outcome', equals: 'booked' },
      ],
    };
    const bad = await admin.post(`/templates/${templateId}/tests`, { ...PERSONA, name: 'no goal', callee: { persona: 'Ana' } });
    assert.equal(bad.status, 422);
    assert.deepEqual([bad.body.code, bad.body.errors.map((e: any) => e.path)], ['invalid_callee', ['/callee/goal']]);
    const before = ai.chatRequests.length;
    const started = await admin.post(`/templates/${templateId}/tests/run`, { cases: [PERSONA] });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const run = await finished(started.body.id);
    assert.equal(run.status, 'passed', JSON.stringify(run.cases[0], null, 1));
    const asked = ai.chatRequests.slice(before).filter((r) => String(r.body.messages[0]?.content).startsWith('You are playing a customer'));
    assert.ok(asked.length >= 1);
    assert.match(asked[0]!.body.messages[0].content, /Who you are: Ana, a patient of Acme Clinic[\s\S]*Your goal on this call: book the visit for Tuesday/);
    // The agent's greeting reached the persona as the other party's line.
    assert.ok(asked[0]!.body.messages.some((m: any) => m.role === 'user' && /Hi Ana, shall I book/.test(m.content)), JSON.stringify(asked[0]!.body.messages));
    assert.deepEqual(run.cases[0].node_path, ['greet', 'booked']);
  });

  it('dialer test: exit 0 on a passing suite, 1 on a failing one with JUnit; a suite file that is not JSON is named', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-suite-'));
    try {
      fs.writeFileSync(path.join(dir, 'pass.json'), JSON.stringify([BOOKS]));
      fs.writeFileSync(path.join(dir, 'fail.json'), JSON.stringify({ cases: [DECLINES] }));
      fs.writeFileSync(path.join(dir, 'broken.json'), '{"cases": [');
      const junitFile = path.join(dir, 'junit.xml');
      const [pass, fail, broken] = await Promise.all([
        cli(['--suite', path.join(dir, 'pass.json')]),
        cli(['--suite', path.join(dir, 'fail.json'), '--junit', junitFile]),
        cli(['--suite', path.join(dir, 'broken.json')]),
      ]);
      assert.equal(pass.code, 0, pass.stdout + pass.stderr);
      assert.match(pass.stdout, /PASS books a visit/);
      assert.match(pass.stdout, /PASSED: 1 of 1/);
      assert.equal(fail.code, 1, fail.stdout + fail.stderr);
      assert.match(fail.stdout, /FAIL declines \(.+\)\n {4}function_called: book_visit was not called/);
      const xml = fs.readFileSync(junitFile, 'utf8');
      assert.match(xml, /<testsuite name="booking" tests="1" failures="1" errors="0"/);
      assert.match(xml, /<failure message="function_called: book_visit was not called \(functions called: none\)">/);
      assert.equal(broken.code, 1);
      assert.match(broken.stderr, /--suite .*broken\.json is not JSON/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the Tests card of the template page', { skip: chromiumAvailable() ? false : 'Chromium is not installed', timeout: 180_000 }, () => {
  it('lists the cases, runs the suite, and shows the failed case with the expectation that failed and its transcript', async () => {
    const browser = await launchDashboardBrowser();
    try {
      const page = await (await newContext(browser)).newPage();
      const problems = watchProblems(page);
      await logIn(page, server.url, 'admin@example.com', 'admin-password-1', `/templates/${templateId}`);
      const card = page.locator('#tests');
      await card.locator('#test-cases tbody tr').nth(1).waitFor();
      assert.deepEqual(await card.locator('#test-cases tbody tr td:first-child').allInnerTexts(), ['books a visit', 'declines']);
      // The run before (the command line's) may be on show: wait for this run's end, not that one's.
      const before = (await card.locator('#test-run').count()) > 0 ? await card.locator('#test-run').getAttribute('data-run') : null;
      await card.locator('#run-tests').click();
      const thisRun = before ? `#test-run[data-status="failed"]:not([data-run="${before}"])` : '#test-run[data-status="failed"]';
      await card.locator(thisRun).waitFor({ timeout: 120_000 });
      const failed = card.locator('details.test-case[data-case="declines"]');
      assert.equal(await failed.getAttribute('open'), '');
      assert.match(await failed.locator('.expectations .failed').innerText(), /book_visit was not called/);
      assert.match(await failed.locator('.transcript').innerText(), /No problem, goodbye/);
      assert.equal(await card.locator('details.test-case[data-case="books a visit"]').getAttribute('data-status'), 'passed');
      await card.scrollIntoViewIfNeeded();
      await shoot(page, 'template-tests');
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
    }
  });
});
