/**
 * The flow editor in the real Chromium, against `dialer serve`: a three-node flow is built on the
 * graph and in the node forms alone (nodes added, renamed and deleted, transitions dragged from one
 * node onto another, a parameter, a hook and an action), undone and redone, saved, and seen the
 * same after a reload; a JSON syntax error is shown at its line and column; leaving with unsaved
 * changes asks first (a link of the dashboard, and closing the tab). On a 60-node flow the time a
 * keystroke takes is measured and printed (not asserted). The "Voice and model" card chooses a
 * voice, a model, a temperature and a language, saved with the template and shown after a reload.
 * A function's warm transfer (the briefing, the messages, the callback) is built in its form, refused
 * by the API at its field while wrong, then saved and shown after a reload; a switch_language is
 * checked against the template's languages as the API checks it. An edit made while a save is on its
 * way stays in the editor when the answer comes.
 * Screens are saved at 1280 px and at phone
 * width in test/screenshots/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { API_PREFIX } from '../../src/app.js';
import type { RunningServer } from '../../src/server.js';
import type { Client } from '../helpers/app.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { ADMIN, type DashboardServed, logIn, newContext, serveDashboard, shoot, watchProblems } from '../helpers/dashboard.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';

const { email: EMAIL, password: PASSWORD } = ADMIN;
const skip = chromiumAvailable() ? false : 'Chromium is not installed (apt-get install chromium)';

let server: RunningServer;
let ai: OpenAIServer;
let admin: Client;
let browser: Browser;
let ui: DashboardServed;
let reseller: string;

before(async () => {
  if (skip) return;
  // An LLM and a speech-to-text to choose from in "Voice and model" (no call is placed).
  ai = await startOpenAIServer();
  ui = await serveDashboard('flow-editor', { LLM_BASE_URL: ai.url, STT_BASE_URL: ai.url, LLM_MODELS: 'gpt-4.1-mini' });
  ({ server, admin, browser } = ui);
  reseller = (await admin.post('/resellers', { name: 'Acme' })).body.id;
});

after(async () => {
  await ui?.close();
  await ai?.close();
});

const box = (page: Page, node: string) => page.locator(`#graph g.box[data-node="${node}"]`);
const edges = (page: Page) => page.locator('#graph .edge').evaluateAll((es) => es.map((e) => `${e.getAttribute('data-from')}-${e.getAttribute('data-function')}->${e.getAttribute('data-to')}`).sort());
const nodeForm = (page: Page) => page.locator('#node-editor');

/** Drags from the dot under `from` onto the box of `to`, as a person draws a transition. */
async function drawTransition(page: Page, from: string, to: string) {
  const handle = (await page.locator(`#graph .connector[data-node="${from}"]`).boundingBox())!;
  const target = (await box(page, to).locator('rect').boundingBox())!;
  await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
  await page.mouse.down();
  await page.mouse.move(target.x + target.width / 2, target.y + target.height / 2, { steps: 6 });
  await page.mouse.up();
  await page.locator(`#graph .edge[data-from="${from}"][data-to="${to}"]`).waitFor();
}

async function addNamedNode(page: Page, name: string) {
  await page.locator('#add-node').click();
  const input = nodeForm(page).getByLabel('Node name');
  await input.fill(name);
  await input.press('Enter');
  await box(page, name).waitFor();
}

describe('the flow editor', { skip }, () => {
  it('builds a three-node flow on the graph, saves it, and shows the same flow after a reload; undo; syntax errors; unsaved changes', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const problems = watchProblems(page);
    await logIn(page, server.url, EMAIL, PASSWORD, '/templates/new');
    await page.locator('input[name="name"]').fill('Built on the graph');

    // The example flow a new template starts with goes, node by node, from the graph.
    for (const name of ['greet', 'goodbye']) {
      await box(page, name).click();
      await nodeForm(page).getByRole('button', { name: 'Delete node' }).click();
      await box(page, name).waitFor({ state: 'detached' });
    }
    await page.locator('#graph .flow-graph.empty').waitFor();

    await addNamedNode(page, 'welcome');
    await addNamedNode(page, 'ask_date');
    await addNamedNode(page, 'bye');
    await drawTransition(page, 'welcome', 'ask_date');
    await drawTransition(page, 'ask_date', 'bye');

    // Undo takes the last transition back (Ctrl+Z), redo puts it back (the button).
    await page.locator('#graph').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Control+z');
    await page.locator('#graph .edge[data-from="ask_date"]').waitFor({ state: 'detached' });
    await page.locator('#redo').click();
    await page.locator('#graph .edge[data-from="ask_date"][data-to="bye"]').waitFor();

    // The welcome node's message, and a parameter and a hook on its function, in the forms.
    await box(page, 'welcome').click();
    await nodeForm(page).locator('[data-message="task_messages/0"] textarea').fill('Greet {customer_name} and ask when suits them.');
    const fn = nodeForm(page).locator('.function-form[data-function="go_to_ask_date"]');
    await fn.getByRole('button', { name: 'Add a parameter' }).click();
    const param = fn.locator('.param-row').first();
    await param.locator('input[name="parameter_name"]').fill('date');
    await param.locator('input[name="parameter_name"]').press('Enter');
    await fn.locator('.param-row[data-parameter="date"] input[name="parameter_required"]').check();
    await fn.getByRole('button', { name: 'Add a hook' }).click();
    await fn.locator('input[name="hook_url"]').fill('https://crm.example.com/dates');
    // A pre-action on the last node: the call ends there.
    await box(page, 'bye').click();
    await nodeForm(page).locator('fieldset', { hasText: 'Pre-actions' }).getByRole('button', { name: 'Add an action' }).click();
    await nodeForm(page).locator('select[name="action_type"]').selectOption('end_conversation');
    await nodeForm(page).locator('input[name="action_outcome"]').fill('scheduled');
    await page.getByText('The flow is valid').waitFor();
    await page.locator('#unsaved').waitFor();
    await shoot(page, 'flow-editor-built');

    await page.locator('#save-template').click();
    await page.waitForURL(/\/templates\/(?!new)[^/]+$/);
    await page.locator('#unsaved').waitFor({ state: 'detached' });
    const id = page.url().split('/').pop()!;
    const stored = (await admin.get(`/templates/${id}`)).body;
    assert.equal(stored.flow.initial_node, 'welcome');
    assert.deepEqual(
      stored.flow.nodes.map((n: { node_name: string }) => n.node_name),
      ['welcome', 'ask_date', 'bye'],
    );
    const welcomeFn = stored.flow.nodes[0].functions[0];
    assert.equal(welcomeFn.transition_to, 'ask_date');
    assert.deepEqual(welcomeFn.required, ['date']);
    assert.equal(welcomeFn.hooks[0].http_request.url, 'https://crm.example.com/dates');
    assert.equal(stored.flow.nodes[0].task_messages[0].content, 'Greet {customer_name} and ask when suits them.');
    assert.deepEqual(stored.flow.nodes[2].pre_actions, [{ type: 'end_conversation', outcome: 'scheduled' }]);

    await page.reload();
    await page.locator('#graph .edge').first().waitFor();
    assert.deepEqual(await edges(page), ['ask_date-go_to_bye->bye', 'welcome-go_to_ask_date->ask_date']);
    assert.equal(await box(page, 'welcome').getAttribute('class').then((c) => c?.includes('box-initial')), true);
    assert.equal(await page.locator('#unsaved').count(), 0);

    // A test case written in the Tests card's forms.
    const tests = page.locator('#tests');
    await tests.getByRole('button', { name: 'Add a case' }).click();
    const form = tests.locator('#case-form');
    await form.locator('input[name="case_name"]').fill('reaches the end');
    await form.locator('.expectation-row').first().locator('select[name="expectation_kind"]').selectOption('nodes');
    await form.locator('input[name="expectation_nodes"]').fill('welcome, ask_date, bye');
    await form.getByRole('button', { name: 'Add an expectation' }).click();
    await form.locator('.expectation-row').nth(1).locator('select[name="expectation_kind"]').selectOption('outcome');
    await form.locator('.expectation-row').nth(1).locator('input[name="expectation_equals"]').fill('scheduled');
    await form.locator('.case-row[data-step="1"] input[name="step_say"]').fill('Tuesday at ten, please.');
    await form.scrollIntoViewIfNeeded();
    await shoot(page, 'test-case-form');
    await form.getByRole('button', { name: 'Save the case' }).click();
    await tests.locator('#test-cases td', { hasText: 'reaches the end' }).waitFor();
    const cases = (await admin.get(`/templates/${id}/tests`)).body.data;
    assert.deepEqual(cases[0].expectations, [
      { kind: 'nodes', nodes: ['welcome', 'ask_date', 'bye'], match: 'in_order' },
      { kind: 'outcome', equals: 'scheduled' },
    ]);
    assert.equal(cases[0].callee.steps[1].say, 'Tuesday at ten, please.');
    // A case whose callee is a persona played by the LLM, in the same forms.
    await tests.getByRole('button', { name: 'Add a case' }).click();
    await form.locator('input[name="case_name"]').fill('a persona in a hurry');
    await form.locator('select[name="callee_kind"]').selectOption('persona');
    await form.locator('textarea[name="persona"]').fill('Sam, short of time, answers in few words');
    await form.locator('input[name="goal"]').fill('get a date booked quickly');
    await form.locator('input[name="max_turns"]').fill('3');
    await form.locator('.expectation-row').first().locator('select[name="expectation_kind"]').selectOption('outcome');
    await form.locator('.expectation-row').first().locator('input[name="expectation_equals"]').fill('scheduled');
    await form.scrollIntoViewIfNeeded();
    await shoot(page, 'test-case-persona-form');
    await form.getByRole('button', { name: 'Save the case' }).click();
    await tests.locator('#test-cases td', { hasText: 'persona: Sam, short of time' }).waitFor();
    const persona = (await admin.get(`/templates/${id}/tests`)).body.data.find((c: any) => c.name === 'a persona in a hurry');
    assert.deepEqual(persona.callee, { steps: [], answer: 'person', persona: 'Sam, short of time, answers in few words', goal: 'get a date booked quickly', max_turns: 3, max_seconds: 60 });

    // A JSON syntax error: its line and column, and the line itself.
    const json = await page.locator('#flow-editor').inputValue();
    const broken = json.replace('"initial_node": "welcome",', '"initial_node": "welcome"');
    const expectedLine = broken.split('\n').findIndex((l) => l.includes('"initial_node"')) + 2;
    await page.locator('#flow-editor').fill(broken);
    const syntax = page.locator('#json-syntax');
    await syntax.waitFor();
    assert.equal(await syntax.getAttribute('data-line'), String(expectedLine));
    assert.match(await syntax.innerText(), new RegExp(`Line ${expectedLine}, column \\d+`));
    assert.equal(await page.locator('#save-template').isDisabled(), true);
    await shoot(page, 'flow-editor-syntax');

    // Unsaved changes: a link of the dashboard asks first (refused: the page stays).
    const asked: string[] = [];
    page.on('dialog', (d) => {
      asked.push(`${d.type()}: ${d.message()}`);
      void (d.type() === 'beforeunload' ? d.accept() : d.dismiss());
    });
    await page.locator('nav a', { hasText: 'Campaigns' }).first().click();
    assert.ok(asked.some((a) => /^confirm: This template has unsaved changes/.test(a)), asked.join('; '));
    assert.match(page.url(), new RegExp(`/templates/${id}$`));
    await page.locator('#json-syntax').waitFor();
    // Closing the tab asks too (the browser's own question).
    const closed = page.waitForEvent('close');
    await page.close({ runBeforeUnload: true });
    await closed;
    assert.ok(asked.some((a) => a.startsWith('beforeunload')), asked.join('; '));
    assert.deepEqual(problems, [], 'no CSP refusal and no page error');
    await context.close();
  });

  it('"Voice and model": a voice, model, temperature and language chosen from the options, saved, and shown after a reload', async () => {
    const flow = { initial_node: 'only', nodes: [{ node_name: 'only', task_messages: [{ role: 'system', content: 'Say hello.' }], post_actions: [{ type: 'end_conversation' }] }] };
    const created = await admin.post('/templates', { name: 'Spoken in Spanish', reseller_id: reseller, flow });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const context = await newContext(browser);
    const page = await context.newPage();
    const problems = watchProblems(page);
    await logIn(page, server.url, EMAIL, PASSWORD, `/templates/${created.body.id}`);
    const card = page.locator('#agent-choice');
    await card.locator('select[name="llm_model"]:not([disabled])').waitFor();
    assert.match(await card.locator('select[name="voice"] option').first().innerText(), /^Default: slt$/);
    await card.locator('select[name="voice"]').selectOption('local:kal');
    await card.locator('select[name="llm_model"]').selectOption('gpt-4.1-mini');
    await card.locator('input[name="temperature"]').fill('0.6');
    await card.locator('select[name="stt_language"]').selectOption('es');
    await page.locator('#unsaved').waitFor();
    await page.locator('#save-template').click();
    await page.locator('#unsaved').waitFor({ state: 'detached' });
    const agent = { voice: 'local:kal', llm_model: 'gpt-4.1-mini', temperature: 0.6, stt_language: 'es' };
    assert.deepEqual((await admin.get(`/templates/${created.body.id}`)).body.agent, agent);
    await page.reload();
    await card.locator('select[name="llm_model"]:not([disabled])').waitFor();
    assert.deepEqual(
      await Promise.all([card.locator('select[name="voice"]').inputValue(), card.locator('select[name="llm_model"]').inputValue(), card.locator('input[name="temperature"]').inputValue(), card.locator('select[name="stt_language"]').inputValue()]),
      ['local:kal', 'gpt-4.1-mini', '0.6', 'es'],
    );
    assert.equal(await page.locator('#unsaved').count(), 0);
    await card.scrollIntoViewIfNeeded();
    await shoot(page, 'template-voice-and-model');
    // Languages: the call's own first, a voice for the other, detection; a voice for a language taken out goes with it.
    await card.locator('input[name="languages"]').fill('es, en-US, fr');
    await card.locator('select[name="voice-fr"]').selectOption('local:awb');
    await card.locator('select[name="voice-en-US"]').selectOption('local:rms');
    await card.locator('input[name="detect_language"]').check();
    await card.locator('input[name="languages"]').fill('es, en-US');
    await page.locator('#save-template').click();
    await page.locator('#unsaved').waitFor({ state: 'detached' });
    const spoken = { languages: ['es', 'en-US'], language_voices: { 'en-US': 'local:rms' }, detect_language: true };
    assert.deepEqual((await admin.get(`/templates/${created.body.id}`)).body.agent, { ...agent, ...spoken });
    await page.reload();
    await card.locator('select[name="voice-en-US"]').waitFor();
    assert.deepEqual(
      await Promise.all([card.locator('input[name="languages"]').inputValue(), card.locator('select[name="voice-en-US"]').inputValue(), card.locator('input[name="detect_language"]').isChecked()]),
      ['es, en-US', 'local:rms', true],
    );
    await card.scrollIntoViewIfNeeded();
    await shoot(page, 'template-languages');
    // A language the speech-to-text does not take is refused, named at its field.
    await card.locator('input[name="languages"]').fill('es, en-US, xx');
    await page.locator('#save-template').click();
    await card.getByText('"xx" is not a language the speech-to-text takes').waitFor();
    await card.locator('input[name="languages"]').fill('');
    // Back to the service defaults: the template has no choice left.
    await card.locator('select[name="voice"]').selectOption('');
    await card.locator('select[name="llm_model"]').selectOption('');
    await card.locator('input[name="temperature"]').fill('');
    await card.locator('select[name="stt_language"]').selectOption('');
    await page.locator('#save-template').click();
    await page.locator('#unsaved').waitFor({ state: 'detached' });
    assert.equal((await admin.get(`/templates/${created.body.id}`)).body.agent, undefined);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('a warm transfer built in the function form: refused by the API at its field, saved, and shown after a reload; switch_language needs two languages', async () => {
    const flow = {
      initial_node: 'help',
      nodes: [
        {
          node_name: 'help',
          task_messages: [{ role: 'system', content: 'Help {customer_name}; offer a person when asked.' }],
          functions: [{ name: 'talk_to_human', description: 'Put the caller through to a person', properties: { topic: { type: 'string' } } }],
        },
      ],
    };
    const created = await admin.post('/templates', { name: 'Briefs the human', reseller_id: reseller, flow });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id;
    const context = await newContext(browser);
    const page = await context.newPage();
    const problems = watchProblems(page);
    await logIn(page, server.url, EMAIL, PASSWORD, `/templates/${id}`);
    await box(page, 'help').click();
    const fn = nodeForm(page).locator('.function-form[data-function="talk_to_human"]');
    // The warm transfer appears with a number to call, off until asked for.
    assert.equal(await fn.locator('.warm-transfer').count(), 0);
    await fn.locator('input[name="transfer_to_number"]').fill('{agent_number}');
    const warm = fn.locator('.warm-transfer');
    await warm.locator('input[name="warm_transfer"]').check();
    await warm.locator('input[value="template"]').check();
    await warm.locator('textarea[name="briefing"]').fill('{customer_name} asks about {topic}.');
    await warm.locator('textarea[name="declined_message"]').fill('My colleague is busy; let me help you myself.');
    await warm.locator('textarea[name="no_answer_message"]').fill('Nobody is free; we will call you back. Goodbye!');
    // Zero minutes: the page's check and, on save, the API's 400 name the field.
    await warm.locator('input[name="callback_after_minutes"]').fill('0');
    const minutesProblem = warm.locator('.field-error', { has: page.locator('input[name="callback_after_minutes"]') }).locator('.field-message');
    await minutesProblem.getByText('must be a whole number of minutes from 1 to 10080').waitFor();
    await page.locator('#save-template').click();
    await page.getByText('The API refused the last save').waitFor();
    assert.match(await minutesProblem.innerText(), /from 1 to 10080/);
    assert.equal((await admin.get(`/templates/${id}`)).body.flow.nodes[0].functions[0].warm_transfer, undefined);
    await warm.scrollIntoViewIfNeeded();
    await shoot(page, 'flow-editor-warm-transfer-refused');
    await warm.locator('input[name="callback_after_minutes"]').fill('30');
    await page.getByText('The flow is valid').waitFor();
    await page.locator('#save-template').click();
    await page.locator('#unsaved').waitFor({ state: 'detached' });
    const stored = (await admin.get(`/templates/${id}`)).body.flow.nodes[0].functions[0];
    assert.equal(stored.transfer_to_number, '{agent_number}');
    assert.deepEqual(stored.warm_transfer, {
      briefing: '{customer_name} asks about {topic}.',
      declined_message: 'My colleague is busy; let me help you myself.',
      no_answer_message: 'Nobody is free; we will call you back. Goodbye!',
      callback_after_minutes: 30,
    });

    await page.reload();
    await box(page, 'help').click();
    await warm.locator('textarea[name="briefing"]').waitFor();
    assert.deepEqual(
      await Promise.all([
        warm.locator('input[name="warm_transfer"]').isChecked(),
        warm.locator('input[value="template"]').isChecked(),
        warm.locator('textarea[name="briefing"]').inputValue(),
        warm.locator('textarea[name="hold_message"]').inputValue(),
        warm.locator('textarea[name="declined_message"]').inputValue(),
        warm.locator('input[name="callback_after_minutes"]').inputValue(),
      ]),
      [true, true, '{customer_name} asks about {topic}.', '', 'My colleague is busy; let me help you myself.', '30'],
    );
    await warm.scrollIntoViewIfNeeded();
    await shoot(page, 'flow-editor-warm-transfer');
    // The LLM's summary instead of the text: the briefing leaves the flow.
    await warm.locator('input[value="llm"]').check();
    await page.locator('#save-template').click();
    await page.locator('#unsaved').waitFor({ state: 'detached' });
    assert.equal((await admin.get(`/templates/${id}`)).body.flow.nodes[0].functions[0].warm_transfer.briefing, undefined);
    // The built-in switch_language is checked against the template's languages, as the API does.
    await nodeForm(page).locator('select[name="add_builtin"]').selectOption('switch_language');
    const switcher = nodeForm(page).locator('.function-form[data-function="switch_language"]');
    await switcher.getByText('switch_language needs at least two languages').waitFor();
    await page.locator('#agent-choice input[name="languages"]').fill('es, en-US');
    await switcher.locator('.field-message').waitFor({ state: 'detached' });
    await page.getByText('The flow is valid').waitFor();
    await page.locator('#save-template').click();
    await page.locator('#unsaved').waitFor({ state: 'detached' });
    const saved = (await admin.get(`/templates/${id}`)).body;
    assert.deepEqual(saved.agent, { languages: ['es', 'en-US'] });
    assert.deepEqual(saved.flow.nodes[0].functions[1], { name: 'switch_language', type: 'builtin' });
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('an edit made while a save is on its way stays in the editor, unsaved, after the answer comes', async () => {
    const flow = { initial_node: 'hello', nodes: [{ node_name: 'hello', task_messages: [{ role: 'system', content: 'Say hello.' }], functions: [] }] };
    const created = await admin.post('/templates', { name: 'Saved while typing', reseller_id: reseller, flow });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id;
    const context = await newContext(browser);
    const page = await context.newPage();
    const problems = watchProblems(page);
    await logIn(page, server.url, EMAIL, PASSWORD, `/templates/${id}`);
    await box(page, 'hello').click();
    // The API's answer to the save is held until the next edit is made.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let answered!: () => void;
    const answeredSave = new Promise<void>((resolve) => (answered = resolve));
    await page.route(`**${API_PREFIX}/templates/${id}`, async (route) => {
      if (route.request().method() !== 'PUT') return route.continue();
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
      answered();
    });
    const message = nodeForm(page).locator('textarea[name="message_content"]');
    await message.fill('Say hello and ask how they are.');
    await page.locator('#save-template').click();
    await page.locator('select[name="add_builtin"]').selectOption('opt_out');
    release();
    await answeredSave;
    await page.getByText('Template saved.').waitFor();
    // Preact runs effects after the next frame: two frames and a task later the answer is in.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 0)))));
    await page.locator('#unsaved').waitFor();
    await nodeForm(page).locator('.function-form[data-function="opt_out"]').waitFor();
    assert.equal(await message.inputValue(), 'Say hello and ask how they are.');
    const stored = (await admin.get(`/templates/${id}`)).body.flow.nodes[0];
    assert.equal(stored.task_messages[0].content, 'Say hello and ask how they are.');
    assert.deepEqual(stored.functions, []);
    await page.unroute(`**${API_PREFIX}/templates/${id}`);
    await page.locator('#save-template').click();
    await page.locator('#unsaved').waitFor({ state: 'detached' });
    assert.deepEqual((await admin.get(`/templates/${id}`)).body.flow.nodes[0].functions, [{ name: 'opt_out', type: 'builtin' }]);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('stays responsive on a 60-node flow: the time per keystroke is measured and printed', async (t) => {
    const nodes = Array.from({ length: 60 }, (_, i) => ({
      node_name: `step_${i}`,
      task_messages: [{ role: 'system', content: `Step ${i}: ask the customer about item ${i} and note the answer.` }],
      functions: i < 59 ? [{ name: 'next', description: 'The customer answered', properties: { answer: { type: 'string' } }, required: ['answer'], transition_to: `step_${i + 1}` }] : [],
      ...(i === 59 ? { pre_actions: [{ type: 'end_conversation', outcome: 'done' }] } : {}),
    }));
    const created = await admin.post('/templates', { name: 'Sixty nodes', reseller_id: reseller, flow: { initial_node: 'step_0', nodes } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const context = await newContext(browser);
    const page = await context.newPage();
    await logIn(page, server.url, EMAIL, PASSWORD, `/templates/${created.body.id}`);
    await box(page, 'step_59').waitFor();
    // Fit: every node is inside the drawing (none cut off), which the frame scrolls.
    const inside = await page.locator('#graph svg').evaluate((svg) => {
      const vb = (svg as SVGSVGElement).viewBox.baseVal;
      return [...svg.querySelectorAll('g.box')].every((g) => {
        const b = (g as SVGGElement).getBBox();
        const m = (g as SVGGElement).transform.baseVal.consolidate()?.matrix;
        return m !== null && m !== undefined && m.e >= 0 && m.f >= 0 && m.e + b.width <= vb.width && m.f + b.height <= vb.height;
      });
    });
    assert.equal(inside, true);
    await box(page, 'step_30').click();
    await shoot(page, 'flow-editor-60-nodes');

    /**
     * Types `count` characters into the control, timing each from the input event until the page
     * has rendered it (Preact renders in a microtask of the event) and the browser has laid it out.
     */
    const typeTimed = (selector: string, count: number) =>
      page.evaluate(
        async ({ selector, count }) => {
          const el = document.querySelector(selector) as HTMLTextAreaElement;
          el.focus();
          const times: number[] = [];
          for (let i = 0; i < count; i++) {
            const at = Math.max(0, el.value.indexOf('Step 30'));
            const t0 = performance.now();
            el.setRangeText('x', at, at, 'end');
            el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText', data: 'x' }));
            await Promise.resolve();
            await Promise.resolve();
            void document.body.offsetHeight;
            times.push(performance.now() - t0);
            // The next key a moment later, as a person types.
            await new Promise((resolve) => setTimeout(resolve, 30));
          }
          times.sort((a, b) => a - b);
          return { median: times[Math.floor(times.length / 2)]!, p95: times[Math.floor(times.length * 0.95)]!, max: times[times.length - 1]! };
        },
        { selector, count },
      );
    const json = await typeTimed('#flow-editor', 30);
    const form = await typeTimed('#node-editor [data-message="task_messages/0"] textarea', 30);
    // The browser's own floor: a bare textarea of the same look holding the same JSON, no page code.
    await page.evaluate(() => {
      const bare = document.createElement('textarea');
      bare.id = 'bare';
      bare.className = 'json-editor';
      bare.value = (document.querySelector('#flow-editor') as HTMLTextAreaElement).value;
      document.querySelector('#problems')!.append(bare);
    });
    const bare = await typeTimed('#bare', 30);
    const fmt = (r: { median: number; p95: number; max: number }) => `median ${r.median.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms, max ${r.max.toFixed(1)} ms`;
    t.diagnostic(`60-node flow, a keystroke in the JSON view: ${fmt(json)}`);
    t.diagnostic(`60-node flow, a keystroke in the node form: ${fmt(form)}`);
    t.diagnostic(`the same JSON in a bare textarea (the browser's own layout, no page code): ${fmt(bare)}`);
    // The typing reached the flow: the form's edits are in the JSON view.
    assert.match(await page.locator('#flow-editor').inputValue(), /x+Step 30/);
    await context.close();
  });
});
