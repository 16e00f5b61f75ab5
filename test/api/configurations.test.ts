import assert from 'node:assert/strict';
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
const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] };
async function template(as: Client, resellerId: string, merchantId: string | null = null): Promise<string> {
  const res = await as.post('/templates', { name: `cfg-tpl-${++seq}`, reseller_id: resellerId, merchant_id: merchantId, flow });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

const FULL = {
  initial_offset: 30,
  retry_offset: 1800,
  call_start_time: '22:00',
  call_end_time: '06:00',
  call_timezone: 'Asia/Kolkata',
  max_retry: 3,
  calling_provider: 'PROVIDER_B',
  enable_calling: false,
  enable_international_call: true,
  enable_inbound: true,
  inbound_call_start_time: '08:00',
  inbound_call_end_time: '18:30',
  inbound_call_timezone: 'Europe/London',
  inbound_block_action: 'REDIRECT',
  inbound_redirect_number: '+442071838750',
  inbound_block_message: 'We are closed',
  enforce_blacklist: false,
  rate_limit_enabled: true,
  rate_limit_max_calls: 10,
  rate_limit_window_seconds: 60,
  rate_limit_whitelist: ['+14155550123'],
  pre_checks: [
    {
      name: 'dnc',
      type: 'external_api',
      enabled: true,
      default_on_failure: 'skip',
      http_request: { url: 'https://crm.example.com/dnc/{customer_mobile_number}', method: 'POST', headers: { 'X-Key': 'k' }, query_params: { a: 1 }, body: { n: '{customer_mobile_number}' }, timeout: 3 },
      response_config: { response_field: 'data.allowed', response_field_value: true },
    },
  ],
  service_callback_url: 'https://crm.example.com/dialer/conversations',
  voicemail_action: 'leave_message',
  voicemail_message: 'Hi {customer_name}, please call us back.',
  opt_out_enabled: false,
  retry_policy: { busy: { retry: true, after_seconds: 300 }, voicemail: { retry: false }, callback_requested: { retry: true } },
  window_timezone: 'recipient',
  max_calls_per_number_per_day: 3,
  max_concurrent_calls: 5,
  require_consent: true,
  dnc_lists: [],
  legal_hours: ['US'],
  local_presence: true,
  disclosure: { text: 'This call is from Acme, uses an automated assistant and is recorded.', languages: { es: 'Esta llamada es de Acme.', 'pt-BR': 'Esta chamada é da Acme.' } },
};

describe('POST /configurations', () => {
  it('stores every field of a configuration plus call_timezone and returns them', async () => {
    const tpl = await template(w.reseller1, w.r1);
    const res = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl, ...FULL });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { id, created_at, updated_at, ...rest } = res.body;
    assert.ok(id && created_at && updated_at);
    assert.deepEqual(rest, { reseller_id: w.r1, template: tpl, merchant_id: null, ...FULL });
    const read = await w.reseller1.get(`/configurations/${id}`);
    assert.deepEqual(read.body, res.body);
  });

  it('fills defaults for omitted optional fields and takes the template merchant', async () => {
    const tpl = await template(w.reseller1, w.r1, w.m1);
    const res = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl, calling_provider: 'PROVIDER_A' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.merchant_id, w.m1);
    assert.equal(res.body.initial_offset, 0);
    assert.equal(res.body.retry_offset, 3600);
    assert.equal(res.body.call_start_time, '09:00');
    assert.equal(res.body.call_end_time, '21:00');
    assert.equal(res.body.call_timezone, 'UTC');
    assert.equal(res.body.max_retry, 2);
    assert.equal(res.body.enable_calling, true);
    assert.equal(res.body.enforce_blacklist, true);
    assert.deepEqual(res.body.rate_limit_whitelist, []);
    assert.deepEqual(res.body.pre_checks, []);
    // The call's edges behave as before these fields existed, but for the opt-out offered in every node.
    assert.equal(res.body.voicemail_action, 'hang_up');
    assert.equal(res.body.voicemail_message, null);
    assert.equal(res.body.opt_out_enabled, true);
    assert.equal(res.body.retry_policy, null);
    assert.equal(res.body.max_calls_per_number_per_day, null);
    assert.equal(res.body.max_concurrent_calls, null);
    assert.equal(res.body.max_calls_per_number_per_day, null);
    assert.ok(!('disclosure' in res.body), 'an extension left unset is not answered');
  });

  it('answers 409 for a second configuration of the same reseller and template', async () => {
    const tpl = await template(w.reseller1, w.r1);
    assert.equal((await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl, calling_provider: 'PROVIDER_A' })).status, 200);
    const dup = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl, calling_provider: 'PROVIDER_C' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.code, 'duplicate_configuration');
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['bad HH:MM', { call_start_time: '9:00' }, '/call_start_time'],
    ['hour 24', { call_end_time: '24:00' }, '/call_end_time'],
    ['unknown time zone', { call_timezone: 'Mars/Olympus' }, '/call_timezone'],
    ['unknown inbound time zone', { inbound_call_timezone: 'Nowhere' }, '/inbound_call_timezone'],
    ['unknown provider', { calling_provider: 'PROVIDER_D' }, '/calling_provider'],
    ['negative offset', { initial_offset: -1 }, '/initial_offset'],
    ['fractional retry', { max_retry: 1.5 }, '/max_retry'],
    ['zero max calls', { rate_limit_max_calls: 0 }, '/rate_limit_max_calls'],
    ['string number', { retry_offset: '60' }, '/retry_offset'],
    ['formatted whitelist number', { rate_limit_whitelist: ['+1 (415) 555-0123'] }, '/rate_limit_whitelist/0'],
    ['invalid redirect number', { inbound_redirect_number: '+12' }, '/inbound_redirect_number'],
    ['redirect without number', { inbound_block_action: 'REDIRECT' }, '/inbound_redirect_number'],
    ['unknown block action', { inbound_block_action: 'EXPLODE' }, '/inbound_block_action'],
    ['rate limit without numbers', { rate_limit_enabled: true }, '/rate_limit_max_calls'],
    ['pre-check of unknown type', { pre_checks: [{ ...FULL.pre_checks[0], type: 'sql' }] }, '/pre_checks/0/type'],
    ['pre-check bad default', { pre_checks: [{ ...FULL.pre_checks[0], default_on_failure: 'explode' }] }, '/pre_checks/0/default_on_failure'],
    ['pre-check bad url', { pre_checks: [{ ...FULL.pre_checks[0], http_request: { url: 'not a url', method: 'GET' } }] }, '/pre_checks/0/http_request/url'],
    ['pre-check without response_config', { pre_checks: [{ name: 'x', type: 'external_api', http_request: { url: 'https://x.example' } }] }, '/pre_checks/0/response_config'],
    ['service callback that is not an http(s) URL', { service_callback_url: 'ftp://crm.example.com/x' }, '/service_callback_url'],
    ['unknown field', { colour: 'blue' }, '/colour'],
    ['unknown voicemail action', { voicemail_action: 'sing' }, '/voicemail_action'],
    ['leave_message without a message', { voicemail_action: 'leave_message' }, '/voicemail_message'],
    ['leave_message with a blank message', { voicemail_action: 'leave_message', voicemail_message: '   ' }, '/voicemail_message'],
    ['opt-out that is not a boolean', { opt_out_enabled: 'yes' }, '/opt_out_enabled'],
    ['retry rule without retry', { retry_policy: { busy: { after_seconds: 60 } } }, '/retry_policy/busy/retry'],
    ['retry rule with a negative delay', { retry_policy: { busy: { retry: true, after_seconds: -5 } } }, '/retry_policy/busy/after_seconds'],
    ['retry rule with an unknown field', { retry_policy: { busy: { retry: true, when: 'later' } } }, '/retry_policy/busy/when'],
    ['retry policy naming no outcome', { retry_policy: { 'not an outcome!': { retry: true } } }, '/retry_policy'],
    ['unknown window zone', { window_timezone: 'callee' }, '/window_timezone'],
    ['zero calls per number per day', { max_calls_per_number_per_day: 0 }, '/max_calls_per_number_per_day'],
    ['a cap of no calls', { max_concurrent_calls: 0 }, '/max_concurrent_calls'],
    ['an empty disclosure', { disclosure: { text: '' } }, '/disclosure/text'],
    ['a disclosure by something not a language', { disclosure: { text: 'Hi', languages: { 'not a language!': 'Hola' } } }, '/disclosure/languages/not a language!'],
  ];
  for (const [what, patch, path] of invalid) {
    it(`answers 400 naming ${path} for ${what}`, async () => {
      const tpl = await template(w.reseller1, w.r1);
      const res = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl, calling_provider: 'PROVIDER_A', ...patch });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.ok(res.body.errors.some((e: { path: string }) => e.path === path), JSON.stringify(res.body.errors));
      const list = await w.reseller1.get(`/configurations?template=${tpl}`);
      assert.equal(list.body.total, 0, 'nothing half-written');
    });
  }

  it('answers 400 for missing required fields', async () => {
    const res = await w.reseller1.post('/configurations', { reseller_id: w.r1 });
    assert.equal(res.status, 400);
    const paths = res.body.errors.map((e: { path: string }) => e.path);
    assert.ok(paths.includes('/template') && paths.includes('/calling_provider'), JSON.stringify(paths));
  });

  it('answers 400 for a template of another reseller or a missing one', async () => {
    const other = await template(w.reseller2, w.r2);
    for (const tpl of [other, 'no-such-template']) {
      const res = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl, calling_provider: 'PROVIDER_A' });
      assert.equal(res.status, 400);
      assert.equal(res.body.errors[0].path, '/template');
    }
  });

  it('refuses a merchant other than the template\'s', async () => {
    const tpl = await template(w.reseller1, w.r1, w.m1);
    const res = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl, merchant_id: w.m1b, calling_provider: 'PROVIDER_A' });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].path, '/merchant_id');
  });

  it('lets only admins and resellers write, in their own reseller', async () => {
    const tpl = await template(w.reseller1, w.r1);
    const body = { reseller_id: w.r1, template: tpl, calling_provider: 'PROVIDER_A' };
    assert.equal((await w.merchant1.post('/configurations', body)).status, 403);
    assert.equal((await w.user1.post('/configurations', body)).status, 403);
    assert.equal((await w.reseller2.post('/configurations', body)).status, 403);
    assert.equal((await t.anon.post('/configurations', body)).status, 401);
    assert.equal((await t.admin.post('/configurations', body)).status, 200);
  });
});

describe('configuration fields in OpenAPI', () => {
  it('documents the call-edge fields with their values, defaults and meaning', async () => {
    const doc = (await t.anon.get('/openapi.json')).body;
    const body = doc.paths['/agent/voice/dialer/configurations'].post.requestBody.content['application/json'];
    const text = JSON.stringify(body.schema);
    for (const field of ['voicemail_action', 'voicemail_message', 'opt_out_enabled', 'retry_policy', 'window_timezone', 'max_calls_per_number_per_day']) {
      assert.ok(text.includes(`"${field}"`), `${field} is in the request schema`);
      assert.ok(body.example[field] !== undefined, `${field} is in the example`);
    }
    for (const words of ['leave_message', 'hang_up', 'recipient', 'callback_requested', "recipient's time"]) assert.ok(text.includes(words), `the schema mentions ${words}`);
  });
});

describe('GET /configurations', () => {
  it('filters by reseller_id and template, inside the caller scope', async () => {
    const a = await template(w.reseller1, w.r1);
    const b = await template(w.reseller1, w.r1, w.m1b);
    const c = await template(w.reseller2, w.r2);
    const ca = (await w.reseller1.post('/configurations', { reseller_id: w.r1, template: a, calling_provider: 'PROVIDER_A' })).body;
    const cb = (await w.reseller1.post('/configurations', { reseller_id: w.r1, template: b, calling_provider: 'PROVIDER_A' })).body;
    const cc = (await w.reseller2.post('/configurations', { reseller_id: w.r2, template: c, calling_provider: 'PROVIDER_A' })).body;

    const byTemplate = await w.reseller1.get(`/configurations?template=${a}`);
    assert.deepEqual(byTemplate.body.data.map((x: any) => x.id), [ca.id]);
    const r1 = await w.reseller1.get('/configurations?page_size=1000');
    const r1Ids = r1.body.data.map((x: any) => x.id);
    assert.ok(r1Ids.includes(ca.id) && r1Ids.includes(cb.id) && !r1Ids.includes(cc.id));
    const leak = await w.reseller1.get(`/configurations?reseller_id=${w.r2}`);
    assert.equal(leak.body.total, 0);
    const admin = await t.admin.get(`/configurations?reseller_id=${w.r2}&page_size=1000`);
    assert.ok(admin.body.data.some((x: any) => x.id === cc.id));
    // A merchant sees its own and reseller-level configurations, not its sibling merchant's.
    const m1 = (await w.merchant1.get('/configurations?page_size=1000')).body.data.map((x: any) => x.id);
    assert.ok(m1.includes(ca.id) && !m1.includes(cb.id) && !m1.includes(cc.id));
    assert.equal((await w.reseller1.get(`/configurations/${cc.id}`)).status, 404);
    assert.equal((await w.user1.get('/configurations')).status, 403);
  });

  it('pages with page and page_size', async () => {
    const res = await t.admin.get('/configurations?page=1&page_size=2');
    assert.equal(res.status, 200);
    assert.equal(res.body.data.length, 2);
    assert.ok(res.body.total >= 2);
    assert.equal((await t.admin.get('/configurations?page_size=1001')).status, 400);
  });
});

describe('PUT /configurations/{id}', () => {
  it('replaces the whole object; omitted optional fields return to their defaults', async () => {
    const tpl = await template(w.reseller1, w.r1);
    const created = (await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl, ...FULL })).body;
    const res = await w.reseller1.put(`/configurations/${created.id}`, {
      id: created.id,
      reseller_id: w.r1,
      template: tpl,
      calling_provider: 'PROVIDER_C',
      max_retry: 0,
      created_at: created.created_at,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.calling_provider, 'PROVIDER_C');
    assert.equal(res.body.max_retry, 0);
    assert.equal(res.body.call_timezone, 'UTC');
    assert.equal(res.body.rate_limit_enabled, false);
    assert.deepEqual(res.body.pre_checks, []);
    assert.equal(res.body.created_at, created.created_at);
    assert.deepEqual((await w.reseller1.get(`/configurations/${created.id}`)).body, res.body);
  });

  it('answers 400 for a mismatched id, a changed reseller or missing fields; 404 for an unknown or foreign id; 409 onto a taken template', async () => {
    const tpl = await template(w.reseller1, w.r1);
    const tpl2 = await template(w.reseller1, w.r1);
    const c1 = (await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl, calling_provider: 'PROVIDER_A' })).body;
    await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl2, calling_provider: 'PROVIDER_A' });
    const base = { id: c1.id, reseller_id: w.r1, template: tpl, calling_provider: 'PROVIDER_A' };
    assert.equal((await w.reseller1.put(`/configurations/${c1.id}`, { ...base, id: 'other' })).status, 400);
    assert.equal((await w.reseller1.put(`/configurations/${c1.id}`, { ...base, reseller_id: w.r2 })).status, 400);
    assert.equal((await t.admin.put(`/configurations/${c1.id}`, { ...base, reseller_id: w.r2 })).status, 400);
    const { calling_provider: _p, ...missing } = base;
    assert.equal((await w.reseller1.put(`/configurations/${c1.id}`, missing)).status, 400);
    assert.equal((await w.reseller1.put('/configurations/nope', { ...base, id: 'nope' })).status, 404);
    assert.equal((await w.reseller2.put(`/configurations/${c1.id}`, { ...base, reseller_id: w.r2 })).status, 404);
    const taken = await w.reseller1.put(`/configurations/${c1.id}`, { ...base, template: tpl2 });
    assert.equal(taken.status, 409);
    assert.equal((await w.reseller1.get(`/configurations/${c1.id}`)).body.template, tpl, 'unchanged after refusals');
  });

  it('deletes, and a deleted id answers 404', async () => {
    const tpl = await template(w.reseller1, w.r1);
    const c = (await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl, calling_provider: 'PROVIDER_A' })).body;
    assert.equal((await w.reseller2.delete(`/configurations/${c.id}`)).status, 404);
    assert.equal((await w.reseller1.delete(`/configurations/${c.id}`)).status, 200);
    assert.equal((await w.reseller1.get(`/configurations/${c.id}`)).status, 404);
    assert.equal((await w.reseller1.delete(`/configurations/${c.id}`)).status, 404);
  });
});
