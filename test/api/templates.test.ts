import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
});
after(() => t.close());

let seq = 0;
const uniqueName = (prefix = 'tpl') => `${prefix}-${++seq}`;

/** A two-node flow using every node, function, hook and action field. */
function fullFlow(): any {
  return {
    initial_node: 'greet',
    nodes: [
      {
        node_name: 'greet',
        role_messages: [{ role: 'system', content: 'You call for {clinic_name}.' }],
        task_messages: [{ role: 'system', content: 'Ask {customer_name} to confirm {appointment_date}.' }],
        functions: [
          {
            name: 'confirm_appointment',
            description: 'The customer confirmed',
            properties: { note: { type: 'string', description: 'What they said' }, seats: { type: ['integer', 'null'] } },
            required: ['note'],
            transition_to: 'bye',
            hooks: [
              {
                name: 'crm',
                http_request: {
                  url: 'https://crm.example.com/appointments/{appointment_id}',
                  method: 'PATCH',
                  headers: { Authorization: 'Bearer {crm_token}' },
                  query_params: { source: 'dialer', attempt: 1, live: true },
                  body: { status: 'confirmed', nested: { lead: '{lead_id}' } },
                  timeout: 10,
                },
              },
            ],
          },
          { name: 'log_only' },
        ],
        pre_actions: [{ type: 'tts_say', text: 'Hello!' }],
        post_actions: [{ type: 'function', name: 'log_only' }],
        respond_immediately: true,
        vad: { stop_secs: 0.8 },
        idle_timeout_seconds: 8,
        idle_prompt: 'Are you still there?',
      },
      {
        node_name: 'bye',
        task_messages: [{ role: 'system', content: 'Say goodbye.' }],
        post_actions: [{ type: 'end_conversation', outcome: 'confirmed' }],
        outcome: 'confirmed',
      },
    ],
  };
}

const simpleFlow = (): any => ({
  initial_node: 'only',
  nodes: [{ node_name: 'only', task_messages: [{ role: 'system', content: 'Hi' }], post_actions: [{ type: 'end_conversation' }] }],
});

async function create(client: Client, body: Record<string, unknown>) {
  const res = await client.post('/templates', { name: uniqueName(), flow: simpleFlow(), ...body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

const TEMPLATE_KEYS = ['created_at', 'flow', 'id', 'merchant_id', 'name', 'reseller_id', 'updated_at'];

describe('templates: create, read, list, replace, delete', () => {
  it('POST creates with exactly the template fields; GET returns the same; flow round-trips whole', async () => {
    const flow = fullFlow();
    const res = await t.admin.post('/templates', { name: '  Appointment  ', reseller_id: w.r1, flow });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), TEMPLATE_KEYS);
    assert.equal(res.body.name, 'Appointment');
    assert.equal(res.body.reseller_id, w.r1);
    assert.equal(res.body.merchant_id, null);
    assert.deepEqual(res.body.flow, flow);
    assert.equal(new Date(res.body.created_at).toISOString(), res.body.created_at);
    assert.equal(new Date(res.body.updated_at).toISOString(), res.body.updated_at);
    const read = await t.admin.get(`/templates/${res.body.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, res.body);
  });

  it('creates a merchant template; lists paged with total', async () => {
    const created = await create(w.reseller1, { reseller_id: w.r1, merchant_id: w.m1 });
    assert.equal(created.merchant_id, w.m1);
    const list = await t.admin.get('/templates?page_size=1000');
    assert.equal(list.status, 200);
    assert.deepEqual(Object.keys(list.body).sort(), ['data', 'page', 'page_size', 'total']);
    assert.equal(list.body.total, list.body.data.length);
    const listed = list.body.data.find((x: { id: string }) => x.id === created.id);
    assert.deepEqual(listed, created);
    const page = await t.admin.get('/templates?page=2&page_size=1');
    assert.equal(page.body.page, 2);
    assert.equal(page.body.page_size, 1);
    assert.equal(page.body.data.length, 1);
  });

  it('PUT replaces name, merchant_id and flow; a field dropped from the flow is gone; timestamps in the body are ignored', async () => {
    const created = await create(t.admin, { reseller_id: w.r1, merchant_id: w.m1, flow: fullFlow() });
    const flow = fullFlow();
    delete flow.nodes[0].respond_immediately;
    delete flow.nodes[0].functions[0].hooks;
    const put = await w.reseller1.put(`/templates/${created.id}`, {
      ...created,
      name: 'Renamed',
      merchant_id: w.m1b,
      flow,
      created_at: '1999-01-01T00:00:00.000Z',
      updated_at: '1999-01-01T00:00:00.000Z',
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(Object.keys(put.body).sort(), TEMPLATE_KEYS);
    assert.equal(put.body.id, created.id);
    assert.equal(put.body.name, 'Renamed');
    assert.equal(put.body.merchant_id, w.m1b);
    assert.equal(put.body.created_at, created.created_at);
    assert.ok(put.body.updated_at >= created.updated_at);
    const read = (await t.admin.get(`/templates/${created.id}`)).body;
    assert.deepEqual(read, put.body);
    assert.equal('respond_immediately' in read.flow.nodes[0], false);
    assert.equal('hooks' in read.flow.nodes[0].functions[0], false);
    // merchant_id left out means reseller-level: the whole object is replaced.
    const { merchant_id: _m, ...withoutMerchant } = read;
    const shared = await t.admin.put(`/templates/${created.id}`, withoutMerchant);
    assert.equal(shared.status, 200);
    assert.equal(shared.body.merchant_id, null);
  });

  it('PUT: 400 for a mismatched or missing id, a missing name or flow, a changed reseller_id, an invalid flow', async () => {
    const created = await create(t.admin, { reseller_id: w.r1 });
    const mismatch = await t.admin.put(`/templates/${created.id}`, { ...created, id: randomUUID() });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.errors[0].path, '/id');
    const { id: _id, ...noId } = created;
    assert.deepEqual((await t.admin.put(`/templates/${created.id}`, noId)).body.errors, [{ path: '/id', message: 'is required' }]);
    const { flow: _f, ...noFlow } = created;
    const missingFlow = await t.admin.put(`/templates/${created.id}`, noFlow);
    assert.equal(missingFlow.status, 400);
    assert.deepEqual(missingFlow.body.errors, [{ path: '/flow', message: 'is required' }]);
    const { name: _n, ...noName } = created;
    assert.deepEqual((await t.admin.put(`/templates/${created.id}`, noName)).body.errors, [{ path: '/name', message: 'is required' }]);
    const moved = await t.admin.put(`/templates/${created.id}`, { ...created, reseller_id: w.r2 });
    assert.equal(moved.status, 400);
    assert.equal(moved.body.errors[0].path, '/reseller_id');
    const badFlow = await t.admin.put(`/templates/${created.id}`, { ...created, flow: { ...created.flow, initial_node: 'nowhere' } });
    assert.equal(badFlow.status, 400);
    assert.equal(badFlow.body.errors[0].path, '/flow/initial_node');
    assert.deepEqual((await t.admin.get(`/templates/${created.id}`)).body, created);
  });

  it('PUT: 409 for a name another template of the reseller has; 404 for an unknown id', async () => {
    const a = await create(t.admin, { reseller_id: w.r1 });
    const b = await create(t.admin, { reseller_id: w.r1 });
    const dup = await t.admin.put(`/templates/${b.id}`, { ...b, name: a.name });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.code, 'duplicate_template');
    const unknown = randomUUID();
    assert.equal((await t.admin.put(`/templates/${unknown}`, { ...b, id: unknown })).status, 404);
  });

  it('DELETE answers {id, deleted: true}; the template is gone; unknown ids answer 404', async () => {
    const created = await create(t.admin, { reseller_id: w.r1 });
    const del = await w.reseller1.delete(`/templates/${created.id}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { id: created.id, deleted: true });
    assert.equal((await t.admin.get(`/templates/${created.id}`)).status, 404);
    assert.equal((await t.admin.delete(`/templates/${created.id}`)).status, 404);
    assert.equal((await t.admin.get(`/templates/${randomUUID()}`)).status, 404);
  });

  it('DELETE answers 409 template_in_use while a lead references the template, and keeps it', async () => {
    const created = await create(t.admin, { reseller_id: w.r1, merchant_id: w.m1 });
    await t.db.query(
      `INSERT INTO leads (id, reseller_id, merchant_id, template_id, template_name, request_id, payload)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)`,
      [randomUUID(), w.r1, w.m1, created.id, created.name, 'order-1', JSON.stringify({ customer_mobile_number: '+14155550100' })],
    );
    const del = await w.merchant1.delete(`/templates/${created.id}`);
    assert.equal(del.status, 409);
    assert.equal(del.body.code, 'template_in_use');
    assert.match(del.body.detail, /leads/);
    assert.deepEqual((await t.admin.get(`/templates/${created.id}`)).body, created);
  });

  it('DELETE answers 409 while a configuration references the template', async () => {
    const created = await create(t.admin, { reseller_id: w.r2 });
    await t.db.query(`INSERT INTO configurations (id, reseller_id, template_id, calling_provider) VALUES ($1, $2, $3, 'PROVIDER_A')`, [
      randomUUID(),
      w.r2,
      created.id,
    ]);
    const del = await t.admin.delete(`/templates/${created.id}`);
    assert.equal(del.status, 409);
    assert.equal(del.body.code, 'template_in_use');
    assert.match(del.body.detail, /configurations/);
    assert.equal((await t.admin.get(`/templates/${created.id}`)).status, 200);
  });

  it('needs a token', async () => {
    assert.equal((await t.anon.get('/templates')).status, 401);
  });

  it('is documented in OpenAPI with tags, summaries and a body example', async () => {
    const doc = (await t.anon.get('/openapi.json')).body;
    const list = doc.paths['/agent/voice/dialer/templates'];
    const one = doc.paths['/agent/voice/dialer/templates/{id}'];
    for (const op of [list.post, list.get, one.get, one.put, one.delete]) {
      assert.deepEqual(op.tags, ['templates']);
      assert.ok(op.summary);
    }
    const example = list.post.requestBody.content['application/json'].example;
    assert.equal(example?.flow?.nodes?.length, 2, 'the create body has a two-node example');
    // The documented example is itself a valid template.
    await create(t.admin, { ...example, name: uniqueName('example'), reseller_id: w.r1 });
  });
});

describe('templates: field validation', () => {
  it('400 validation_failed for missing, mistyped or unknown fields', async () => {
    const missing = await t.admin.post('/templates', {});
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'validation_failed');
    assert.deepEqual(missing.body.errors.map((e: { path: string }) => e.path).sort(), ['/flow', '/name', '/reseller_id']);
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '', reseller_id: w.r1, flow: simpleFlow() }, '/name'],
      [{ name: '   ', reseller_id: w.r1, flow: simpleFlow() }, '/name'],
      [{ name: 7, reseller_id: w.r1, flow: simpleFlow() }, '/name'],
      [{ name: 'x', reseller_id: w.r1, flow: [] }, '/flow'],
      [{ name: 'x', reseller_id: w.r1, flow: 'a flow' }, '/flow'],
      [{ name: 'x', reseller_id: w.r1, merchant_id: 5, flow: simpleFlow() }, '/merchant_id'],
      [{ name: 'x', reseller_id: w.r1, flow: simpleFlow(), extra: 1 }, '/extra'],
    ];
    for (const [body, path] of cases) {
      const res = await t.admin.post('/templates', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'validation_failed');
      assert.ok(res.body.errors.some((e: { path: string }) => e.path === path), `${path} in ${JSON.stringify(res.body.errors)}`);
    }
  });

  it('400 for an unknown reseller, an unknown merchant, or a merchant of another reseller', async () => {
    const reseller = await t.admin.post('/templates', { name: 'x', reseller_id: randomUUID(), flow: simpleFlow() });
    assert.equal(reseller.status, 400);
    assert.equal(reseller.body.errors[0].path, '/reseller_id');
    const unknown = await t.admin.post('/templates', { name: 'x', reseller_id: w.r1, merchant_id: randomUUID(), flow: simpleFlow() });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errors[0].path, '/merchant_id');
    const foreign = await w.reseller1.post('/templates', { name: 'x', reseller_id: w.r1, merchant_id: w.m2, flow: simpleFlow() });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.errors[0].path, '/merchant_id');
  });

  it('409 duplicate_template for a name already used in the reseller; another reseller may reuse it', async () => {
    const name = uniqueName('dup');
    await create(t.admin, { name, reseller_id: w.r1 });
    const dup = await w.merchant1.post('/templates', { name, reseller_id: w.r1, flow: simpleFlow() });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.code, 'duplicate_template');
    await create(t.admin, { name, reseller_id: w.r2 });
  });
});

/** Each case breaks one rule of a valid flow; the 400 must point at `path`, naming `mentions` when given. */
type FlowCase = [label: string, mutate: (f: any) => void, path: string, mentions?: string];

const fn0 = (f: any) => f.nodes[0].functions[0];
const req0 = (f: any) => fn0(f).hooks[0].http_request;

const FLOW_CASES: FlowCase[] = [
  ['unknown flow field', (f) => (f.start = 'greet'), '/flow/start', 'is not a known field'],
  ['missing initial_node', (f) => delete f.initial_node, '/flow/initial_node', 'is required'],
  ['initial_node not a string', (f) => (f.initial_node = 3), '/flow/initial_node', '3'],
  ['initial_node names no node', (f) => (f.initial_node = 'gret'), '/flow/initial_node', '"gret"'],
  ['missing nodes', (f) => delete f.nodes, '/flow/nodes', 'is required'],
  ['nodes not an array', (f) => (f.nodes = { greet: {} }), '/flow/nodes', 'array'],
  ['nodes empty', (f) => (f.nodes = []), '/flow/nodes', 'at least one'],
  ['node not an object', (f) => f.nodes.push('node'), '/flow/nodes/2', '"node"'],
  ['node_name missing', (f) => delete f.nodes[1].node_name, '/flow/nodes/1/node_name', 'is required'],
  ['node_name blank', (f) => (f.nodes[1].node_name = ' '), '/flow/nodes/1/node_name', 'blank'],
  ['node_name duplicated', (f) => (f.nodes[1].node_name = 'greet'), '/flow/nodes/1/node_name', '"greet"'],
  ['unknown node field (typo)', (f) => (f.nodes[0].task_message = []), '/flow/nodes/0/task_message', 'is not a known field'],
  ['task_messages missing', (f) => delete f.nodes[1].task_messages, '/flow/nodes/1/task_messages', 'is required'],
  ['task_messages not an array', (f) => (f.nodes[1].task_messages = 'hi'), '/flow/nodes/1/task_messages', '"hi"'],
  ['message role unknown', (f) => (f.nodes[0].task_messages[0].role = 'robot'), '/flow/nodes/0/task_messages/0/role', '"robot"'],
  ['message content missing', (f) => delete f.nodes[0].task_messages[0].content, '/flow/nodes/0/task_messages/0/content', 'is required'],
  ['message content not a string', (f) => (f.nodes[0].task_messages[0].content = ['x']), '/flow/nodes/0/task_messages/0/content', '["x"]'],
  ['role_messages item has an unknown field', (f) => (f.nodes[0].role_messages[0].name = 'x'), '/flow/nodes/0/role_messages/0/name', 'is not a known field'],
  ['functions not an array', (f) => (f.nodes[1].functions = {}), '/flow/nodes/1/functions', 'array'],
  ['function name missing', (f) => delete fn0(f).name, '/flow/nodes/0/functions/0/name', 'is required'],
  ['function name not identifier-like', (f) => (fn0(f).name = 'confirm it'), '/flow/nodes/0/functions/0/name', '"confirm it"'],
  ['function name duplicated in the node', (f) => (f.nodes[0].functions[1].name = 'confirm_appointment'), '/flow/nodes/0/functions/1/name', '"confirm_appointment"'],
  ['unknown function field', (f) => (fn0(f).transitionTo = 'bye'), '/flow/nodes/0/functions/0/transitionTo', 'is not a known field'],
  ['transition_to names no node', (f) => (fn0(f).transition_to = 'by'), '/flow/nodes/0/functions/0/transition_to', '"by"'],
  ['properties not an object', (f) => (fn0(f).properties = ['note']), '/flow/nodes/0/functions/0/properties', 'object'],
  ['property without a type', (f) => (fn0(f).properties.note = { description: 'x' }), '/flow/nodes/0/functions/0/properties/note/type', 'is required'],
  ['property with an unknown type', (f) => (fn0(f).properties.note.type = 'text'), '/flow/nodes/0/functions/0/properties/note/type', '"text"'],
  ['property not an object', (f) => (fn0(f).properties.note = 'string'), '/flow/nodes/0/functions/0/properties/note', '"string"'],
  ['required names no property', (f) => (fn0(f).required = ['notes']), '/flow/nodes/0/functions/0/required/0', '"notes"'],
  ['required not an array', (f) => (fn0(f).required = 'note'), '/flow/nodes/0/functions/0/required', '"note"'],
  ['hooks not an array', (f) => (fn0(f).hooks = {}), '/flow/nodes/0/functions/0/hooks', 'array'],
  ['hook name missing', (f) => delete fn0(f).hooks[0].name, '/flow/nodes/0/functions/0/hooks/0/name', 'is required'],
  ['hook name duplicated', (f) => fn0(f).hooks.push(structuredClone(fn0(f).hooks[0])), '/flow/nodes/0/functions/0/hooks/1/name', '"crm"'],
  ['hook without http_request', (f) => delete fn0(f).hooks[0].http_request, '/flow/nodes/0/functions/0/hooks/0/http_request', 'is required'],
  ['unknown hook field', (f) => (fn0(f).hooks[0].retries = 3), '/flow/nodes/0/functions/0/hooks/0/retries', 'is not a known field'],
  ['url missing', (f) => delete req0(f).url, '/flow/nodes/0/functions/0/hooks/0/http_request/url', 'is required'],
  ['url relative', (f) => (req0(f).url = '/appointments/{id}'), '/flow/nodes/0/functions/0/hooks/0/http_request/url', '"/appointments/{id}"'],
  ['url not http(s)', (f) => (req0(f).url = 'ftp://crm.example.com/x'), '/flow/nodes/0/functions/0/hooks/0/http_request/url', '"ftp://crm.example.com/x"'],
  ['method unknown', (f) => (req0(f).method = 'FETCH'), '/flow/nodes/0/functions/0/hooks/0/http_request/method', '"FETCH"'],
  ['header value not a string', (f) => (req0(f).headers['X-Count'] = 5), '/flow/nodes/0/functions/0/hooks/0/http_request/headers/X-Count', '5'],
  ['headers not an object', (f) => (req0(f).headers = ['a']), '/flow/nodes/0/functions/0/hooks/0/http_request/headers', '["a"]'],
  ['query param nested', (f) => (req0(f).query_params.filter = { a: 1 }), '/flow/nodes/0/functions/0/hooks/0/http_request/query_params/filter', '{"a":1}'],
  ['body not an object', (f) => (req0(f).body = 'status=ok'), '/flow/nodes/0/functions/0/hooks/0/http_request/body', '"status=ok"'],
  ['timeout zero', (f) => (req0(f).timeout = 0), '/flow/nodes/0/functions/0/hooks/0/http_request/timeout', '0'],
  ['timeout over 60 seconds', (f) => (req0(f).timeout = 61), '/flow/nodes/0/functions/0/hooks/0/http_request/timeout', '61'],
  ['timeout not a number', (f) => (req0(f).timeout = '10'), '/flow/nodes/0/functions/0/hooks/0/http_request/timeout', '"10"'],
  ['unknown http_request field', (f) => (req0(f).params = {}), '/flow/nodes/0/functions/0/hooks/0/http_request/params', 'is not a known field'],
  ['pre_actions not an array', (f) => (f.nodes[0].pre_actions = { type: 'tts_say' }), '/flow/nodes/0/pre_actions', 'array'],
  ['action without type', (f) => delete f.nodes[0].pre_actions[0].type, '/flow/nodes/0/pre_actions/0/type', 'is required'],
  ['action type unknown', (f) => (f.nodes[0].pre_actions[0].type = 'say'), '/flow/nodes/0/pre_actions/0/type', '"say"'],
  ['tts_say without text', (f) => delete f.nodes[0].pre_actions[0].text, '/flow/nodes/0/pre_actions/0/text', 'is required'],
  ['tts_say with a field of another action', (f) => (f.nodes[0].pre_actions[0].outcome = 'x'), '/flow/nodes/0/pre_actions/0/outcome', 'is not a known field'],
  ['end_conversation outcome not a string', (f) => (f.nodes[1].post_actions[0].outcome = 1), '/flow/nodes/1/post_actions/0/outcome', '1'],
  ['function action naming no function of the node', (f) => (f.nodes[0].post_actions[0].name = 'log'), '/flow/nodes/0/post_actions/0/name', '"log"'],
  ['function action naming a function with required arguments', (f) => (f.nodes[0].post_actions[0].name = 'confirm_appointment'), '/flow/nodes/0/post_actions/0/name', 'required'],
  ['respond_immediately not a boolean', (f) => (f.nodes[0].respond_immediately = 'yes'), '/flow/nodes/0/respond_immediately', '"yes"'],
  ['vad not an object', (f) => (f.nodes[0].vad = 0.8), '/flow/nodes/0/vad', '0.8'],
  ['vad stop_secs negative', (f) => (f.nodes[0].vad.stop_secs = -1), '/flow/nodes/0/vad/stop_secs', '-1'],
  ['unknown vad field', (f) => (f.nodes[0].vad.start_secs = 1), '/flow/nodes/0/vad/start_secs', 'is not a known field'],
  ['idle_timeout_seconds zero', (f) => (f.nodes[0].idle_timeout_seconds = 0), '/flow/nodes/0/idle_timeout_seconds', '0'],
  ['idle_prompt not a string', (f) => (f.nodes[0].idle_prompt = 5), '/flow/nodes/0/idle_prompt', '5'],
  ['node outcome blank', (f) => (f.nodes[1].outcome = ''), '/flow/nodes/1/outcome', 'blank'],
  ['built-in function unknown', (f) => (f.nodes[1].functions = [{ name: 'press_keys', type: 'builtin' }]), '/flow/nodes/1/functions/0/name', 'send_dtmf, opt_out, schedule_callback'],
  ['built-in function with a field of its own', (f) => (f.nodes[1].functions = [{ name: 'send_dtmf', type: 'builtin', transition_to: 'bye' }]), '/flow/nodes/1/functions/0/transition_to', 'is not a known field'],
  ['function type unknown', (f) => (fn0(f).type = 'webhook'), '/flow/nodes/0/functions/0/type', '"webhook"'],
  ['action naming a built-in', (f) => (f.nodes[0].functions.push({ name: 'opt_out', type: 'builtin' }), (f.nodes[0].post_actions[0].name = 'opt_out')), '/flow/nodes/0/post_actions/0/name', 'built-in'],
  ['post_call_analysis not an object', (f) => (f.post_call_analysis = true), '/flow/post_call_analysis', 'must be an object'],
  ['post_call_analysis asking for nothing', (f) => (f.post_call_analysis = {}), '/flow/post_call_analysis', 'asks for nothing'],
  ['post_call_analysis unknown field', (f) => (f.post_call_analysis = { summary: true, score: true }), '/flow/post_call_analysis/score', 'is not a known field'],
  ['analysis field without a description', (f) => (f.post_call_analysis = { fields: { interested: { type: 'boolean' } } }), '/flow/post_call_analysis/fields/interested/description', 'is required'],
  ['analysis field that is not a JSON schema', (f) => (f.post_call_analysis = { fields: { when: { type: 'date', description: 'x' } } }), '/flow/post_call_analysis/fields/when', 'not a valid JSON schema'],
  ['success_criteria blank', (f) => (f.post_call_analysis = { success_criteria: ' ' }), '/flow/post_call_analysis/success_criteria', 'not blank'],
  ['turn_taking not an object', (f) => (f.turn_taking = 'fast'), '/flow/turn_taking', '"fast"'],
  ['turn_taking mode unknown', (f) => (f.turn_taking = { mode: 'smart' }), '/flow/turn_taking/mode', '"smart"'],
  ['turn_taking unknown field', (f) => (f.nodes[0].turn_taking = { barge: {} }), '/flow/nodes/0/turn_taking/barge', 'is not a known field'],
  ['turn_taking language not a code', (f) => (f.turn_taking = { language: 'English' }), '/flow/turn_taking/language', '"English"'],
  ['turn_taking backchannel blank', (f) => (f.turn_taking = { backchannels: ['ok', ' '] }), '/flow/turn_taking/backchannels/1', '" "'],
  ['barge_in min_words zero', (f) => (f.nodes[0].turn_taking = { barge_in: { min_words: 0 } }), '/flow/nodes/0/turn_taking/barge_in/min_words', '0'],
  ['barge_in max_speech_ms too short', (f) => (f.nodes[0].turn_taking = { barge_in: { max_speech_ms: 50 } }), '/flow/nodes/0/turn_taking/barge_in/max_speech_ms', '50'],
  ['barge_in on_speech unknown', (f) => (f.nodes[0].turn_taking = { barge_in: { on_speech: 'stop' } }), '/flow/nodes/0/turn_taking/barge_in/on_speech', '"stop"'],
  ['barge_in duck_level above 1', (f) => (f.nodes[0].turn_taking = { barge_in: { duck_level: 2 } }), '/flow/nodes/0/turn_taking/barge_in/duck_level', '2'],
  ['end_of_turn max_wait_ms below min_wait_ms', (f) => (f.nodes[0].turn_taking = { end_of_turn: { min_wait_ms: 800, max_wait_ms: 400 } }), '/flow/nodes/0/turn_taking/end_of_turn/max_wait_ms', '400'],
  ['end_of_turn min_wait_ms not whole', (f) => (f.turn_taking = { end_of_turn: { min_wait_ms: 0.5 } }), '/flow/turn_taking/end_of_turn/min_wait_ms', '0.5'],
  ['end_of_turn speculative not a boolean', (f) => (f.turn_taking = { end_of_turn: { speculative: 'yes' } }), '/flow/turn_taking/end_of_turn/speculative', '"yes"'],
  ['end_of_turn expect unknown', (f) => (f.nodes[0].turn_taking = { end_of_turn: { expect: 'date' } }), '/flow/nodes/0/turn_taking/end_of_turn/expect', '"date"'],
  ['first_clause not a boolean', (f) => (f.turn_taking = { first_clause: 1 }), '/flow/turn_taking/first_clause', '1'],
];

describe("templates: the agent's voice, model, temperature and language", () => {
  // This app has no LLM and no speech-to-text configured: only the local voices may be chosen
  // (test/e2e/template-tests.test.ts chooses a model, a voice and a language with them configured).
  it('GET /agent-options lists what this service offers, with the defaults; it is documented', async () => {
    const res = await t.admin.get('/agent-options');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.voices.filter((v: any) => v.default).map((v: any) => v.id), ['local:slt']);
    assert.ok(res.body.voices.some((v: any) => v.id === 'local:kal' && v.provider === 'local'));
    assert.deepEqual([res.body.llm_models, res.body.stt_languages, res.body.temperature], [[], [], null]);
    assert.match(res.body.note, /no LLM is configured/);
    assert.equal((await t.anon.get('/agent-options')).status, 401);
    const op = (await t.anon.get('/openapi.json')).body.paths['/agent/voice/dialer/agent-options'].get;
    assert.deepEqual(op.tags, ['templates']);
    assert.ok(op.responses['200'].content['application/json'].schema.properties.voices);
  });

  it('a choice is stored and read back; a PUT without it returns to the defaults (no agent field)', async () => {
    const agent = { voice: 'local:kal', temperature: 0.4 };
    const made = await create(t.admin, { reseller_id: w.r1, agent });
    assert.deepEqual(made.agent, agent);
    assert.deepEqual((await t.admin.get(`/templates/${made.id}`)).body.agent, agent);
    const replaced = await t.admin.put(`/templates/${made.id}`, { id: made.id, name: made.name, flow: made.flow });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.deepEqual(Object.keys(replaced.body).sort(), TEMPLATE_KEYS);
    const cleared = await t.admin.put(`/templates/${made.id}`, { id: made.id, name: made.name, flow: made.flow, agent: null });
    assert.deepEqual(Object.keys(cleared.body).sort(), TEMPLATE_KEYS);
  });

  it('a value out of range, malformed, unknown or not offered is a 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ temperature: 2.5 }, '/agent/temperature', /2/],
      [{ temperature: 'warm' }, '/agent/temperature', /number/],
      [{ stt_language: 'english!' }, '/agent/stt_language', /pattern|match/],
      [{ speed: 2 }, '/agent/speed', /./],
      [{ voice: 'openai:nova' }, '/agent/voice', /"openai:nova" is not a voice this service offers; choose one of local:slt, local:kal/],
      [{ llm_model: 'gpt-4o' }, '/agent/llm_model', /"gpt-4o" is not an LLM model this service offers; choose one of none \(no LLM is configured/],
      [{ stt_language: 'es' }, '/agent/stt_language', /"es" is not a language the speech-to-text takes/],
      [{ languages: [] }, '/agent/languages', /./],
      [{ languages: ['en-US', 'en-US'] }, '/agent/languages', /./],
      [{ languages: ['en-US'] }, '/agent/languages/0', /"en-US" is not a language the speech-to-text takes/],
      [{ language_voices: { 'fr-FR': 'local:kal' } }, '/agent/language_voices/fr-FR', /"fr-FR" is not one of the template's languages \(none declared\)/],
      [{ detect_language: true }, '/agent/detect_language', /at least two languages/],
    ];
    for (const [agent, path, message] of cases) {
      const res = await t.admin.post('/templates', { name: uniqueName('agent'), reseller_id: w.r1, flow: simpleFlow(), agent });
      assert.equal(res.status, 400, JSON.stringify(agent));
      const hit = res.body.errors?.find((e: { path: string }) => e.path === path);
      assert.ok(hit, `expected an error at ${path}, got ${JSON.stringify(res.body)}`);
      assert.match(hit.message, message);
    }
    // A flow that offers switch_language in a template that declares no languages to switch between.
    const flow = simpleFlow();
    flow.nodes[0].functions = [{ name: 'switch_language', type: 'builtin' }];
    const res = await t.admin.post('/templates', { name: uniqueName('agent'), reseller_id: w.r1, flow });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.code, 'invalid_flow');
    assert.match(res.body.detail, /\/flow\/nodes\/0\/functions\/0 switch_language needs at least two languages in the template's agent.languages/);
    const ok = (await t.admin.get(`/templates?reseller_id=${w.r1}&page_size=1000`)).body.data;
    assert.ok(!ok.some((x: any) => x.name.startsWith('agent-')), 'nothing of a refused write is stored');
  });
});

describe('templates: flow validation (400 with a JSON pointer to the bad value)', () => {
  for (const [label, mutate, path, mentions] of FLOW_CASES) {
    it(label, async () => {
      const flow = fullFlow();
      mutate(flow);
      const res = await t.admin.post('/templates', { name: uniqueName('bad'), reseller_id: w.r1, flow });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      const hit = res.body.errors?.find((e: { path: string }) => e.path === path);
      assert.ok(hit, `expected an error at ${path}, got ${JSON.stringify(res.body.errors)}`);
      if (mentions) assert.ok(hit.message.includes(mentions), `"${hit.message}" mentions ${mentions}`);
    });
  }

  it('accepts built-in functions and post_call_analysis, and returns them whole', async () => {
    const flow = fullFlow();
    flow.nodes[0].functions.push({ name: 'send_dtmf', type: 'builtin' }, { name: 'schedule_callback', type: 'builtin', description: 'When the callee wants a call later' });
    flow.post_call_analysis = {
      summary: true,
      fields: { delivery_date: { type: 'string', format: 'date', description: 'The date agreed' }, interested: { type: 'boolean', description: 'Whether they want it' } },
      success_criteria: 'A date was agreed.',
    };
    const created = await create(t.admin, { reseller_id: w.r1, flow });
    assert.deepEqual((await t.admin.get(`/templates/${created.id}`)).body.flow, flow);
  });

  it('documents built-in functions and post_call_analysis in OpenAPI', async () => {
    const doc = JSON.stringify((await t.anon.get('/openapi.json')).body);
    for (const words of ['send_dtmf, opt_out, schedule_callback', 'post_call_analysis', 'success_criteria', 'delivery_date']) assert.ok(doc.includes(words), `OpenAPI mentions ${words}`);
  });

  it('accepts turn_taking settings at the flow and node levels, and keeps them', async () => {
    const flow = fullFlow();
    flow.turn_taking = { mode: 'adaptive', language: 'en-US', backchannels: ['you bet'], barge_in: { min_words: 2, on_speech: 'duck', duck_level: 0.3 } };
    flow.nodes[0].turn_taking = { end_of_turn: { min_wait_ms: 500, max_wait_ms: 1500, speculative: true, expect: 'yes_no' }, first_clause: false };
    flow.nodes[1].turn_taking = { mode: 'vad' };
    const created = await create(t.admin, { reseller_id: w.r1, flow });
    const got = await t.admin.get(`/templates/${created.id}`);
    assert.deepEqual(got.body.flow.turn_taking, flow.turn_taking);
    assert.deepEqual(got.body.flow.nodes[0].turn_taking, flow.nodes[0].turn_taking);
  });

  it('accepts {variable} placeholders in hook URLs', async () => {
    const flow = fullFlow();
    fn0(flow).hooks[0].http_request.url = 'https://{crm_host}/leads/{lead_id}?x={y}';
    await create(t.admin, { reseller_id: w.r1, flow });
  });

  it('reports every problem at once; the detail names the first', async () => {
    const flow = fullFlow();
    flow.initial_node = 'nowhere';
    fn0(flow).transition_to = 'nowhere';
    flow.nodes[1].outcome = 7;
    const res = await t.admin.post('/templates', { name: uniqueName('bad'), reseller_id: w.r1, flow });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'invalid_flow');
    assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path).sort(), [
      '/flow/initial_node',
      '/flow/nodes/0/functions/0/transition_to',
      '/flow/nodes/1/outcome',
    ]);
    assert.ok(res.body.detail.includes(res.body.errors[0].path));
    assert.match(res.body.detail, /and 2 more/);
  });
});

describe('templates: tenancy', () => {
  let shared: any; // reseller-level, r1
  let ofM1: any;
  let ofM1b: any;
  let ofR2: any;
  before(async () => {
    shared = await create(w.reseller1, { reseller_id: w.r1 });
    ofM1 = await create(w.reseller1, { reseller_id: w.r1, merchant_id: w.m1 });
    ofM1b = await create(w.reseller1, { reseller_id: w.r1, merchant_id: w.m1b });
    ofR2 = await create(w.reseller2, { reseller_id: w.r2 });
  });
  const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((x) => x.id);

  it('another reseller neither sees nor changes r1 templates (404, never 403)', async () => {
    for (const other of [w.reseller2, w.merchant2, w.user2]) {
      const list = await other.get('/templates?page_size=1000');
      assert.equal(list.status, 200);
      assert.ok(list.body.data.every((x: { reseller_id: string }) => x.reseller_id === w.r2));
      assert.ok(ids(list).includes(ofR2.id));
      assert.equal((await other.get(`/templates/${shared.id}`)).status, 404);
    }
    for (const other of [w.reseller2, w.merchant2]) {
      assert.equal((await other.put(`/templates/${ofM1.id}`, { ...ofM1, name: 'hijack' })).status, 404);
      assert.equal((await other.delete(`/templates/${shared.id}`)).status, 404);
    }
    assert.equal((await t.admin.get(`/templates/${shared.id}`)).body.name, shared.name);
  });

  it('a reseller cannot create for another reseller (403)', async () => {
    const res = await w.reseller2.post('/templates', { name: uniqueName(), reseller_id: w.r1, flow: simpleFlow() });
    assert.equal(res.status, 403);
  });

  it('a merchant sees reseller-level and its own templates, not a sibling merchant\'s', async () => {
    const list = ids(await w.merchant1.get('/templates?page_size=1000'));
    assert.ok(list.includes(shared.id));
    assert.ok(list.includes(ofM1.id));
    assert.ok(!list.includes(ofM1b.id));
    assert.ok(!list.includes(ofR2.id));
    assert.equal((await w.merchant1.get(`/templates/${shared.id}`)).status, 200);
    assert.equal((await w.merchant1.get(`/templates/${ofM1b.id}`)).status, 404);
    assert.equal((await w.merchant1.put(`/templates/${ofM1b.id}`, ofM1b)).status, 404);
    assert.equal((await w.merchant1.delete(`/templates/${ofM1b.id}`)).status, 404);
  });

  it('a merchant creates for its own merchant only, and cannot change reseller-level templates', async () => {
    const own = await w.merchant1.post('/templates', { name: uniqueName(), reseller_id: w.r1, flow: simpleFlow() });
    assert.equal(own.status, 200);
    assert.equal(own.body.merchant_id, w.m1);
    assert.equal((await w.merchant1.post('/templates', { name: uniqueName(), reseller_id: w.r1, merchant_id: w.m1b, flow: simpleFlow() })).status, 403);
    assert.equal((await w.merchant1.post('/templates', { name: uniqueName(), reseller_id: w.r2, flow: simpleFlow() })).status, 403);
    const put = await w.merchant1.put(`/templates/${own.body.id}`, { ...own.body, name: uniqueName('mine') });
    assert.equal(put.status, 200);
    assert.equal(put.body.merchant_id, w.m1);
    assert.equal((await w.merchant1.put(`/templates/${own.body.id}`, { ...own.body, merchant_id: w.m1b })).status, 403);
    assert.equal((await w.merchant1.put(`/templates/${shared.id}`, shared)).status, 403);
    assert.equal((await w.merchant1.delete(`/templates/${shared.id}`)).status, 403);
    assert.equal((await w.merchant1.delete(`/templates/${own.body.id}`)).status, 200);
  });

  it('a user reads in its merchant but cannot write (403)', async () => {
    const list = ids(await w.user1.get('/templates?page_size=1000'));
    assert.ok(list.includes(shared.id) && list.includes(ofM1.id) && !list.includes(ofM1b.id));
    assert.equal((await w.user1.get(`/templates/${ofM1.id}`)).status, 200);
    assert.equal((await w.user1.post('/templates', { name: uniqueName(), reseller_id: w.r1, flow: simpleFlow() })).status, 403);
    assert.equal((await w.user1.put(`/templates/${ofM1.id}`, ofM1)).status, 403);
    assert.equal((await w.user1.delete(`/templates/${ofM1.id}`)).status, 403);
    assert.equal((await t.admin.get(`/templates/${ofM1.id}`)).status, 200);
  });

  it('query filters narrow and never widen', async () => {
    const byMerchant = await w.reseller1.get(`/templates?merchant_id=${w.m1}&page_size=1000`);
    assert.ok(byMerchant.body.data.length > 0);
    assert.ok(byMerchant.body.data.every((x: { merchant_id: string }) => x.merchant_id === w.m1));
    const byName = await w.reseller1.get(`/templates?name=${encodeURIComponent(ofM1b.name)}`);
    assert.deepEqual(ids(byName), [ofM1b.id]);
    assert.equal((await w.reseller1.get(`/templates?reseller_id=${w.r2}`)).body.total, 0);
    assert.equal((await w.merchant1.get(`/templates?merchant_id=${w.m1b}`)).body.total, 0);
    const adminR2 = await t.admin.get(`/templates?reseller_id=${w.r2}&page_size=1000`);
    assert.ok(adminR2.body.data.length > 0);
    assert.ok(adminR2.body.data.every((x: { reseller_id: string }) => x.reseller_id === w.r2));
  });
});
