/**
 * Bad input never gets a 500: odd bodies, ids, queries and text the database cannot store (NUL)
 * against every write endpoint of the management API, on both backends.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';
let t: TestApp; let w: World;
before(async () => { t = await buildTestApp(); w = await buildWorld(t); await w.reseller1.post('/templates', { name: 'x', reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } }); });
after(() => t.close());
it('answers odd bodies, paths, queries and NUL characters with 4xx, never 500', async () => {
  const weird: unknown[] = [null, 1, 'x', [], {}, { a: { b: { c: [1, 2, { d: null }] } } }, 'x'.repeat(5000), -1, 1e308, true];
  const paths = ['/configurations', '/numbers', '/blacklist', '/leads', '/leads/batch', '/lead/abort', '/analytics'];
  for (const p of paths) for (const body of weird) {
    for (const m of ['post', 'put', 'delete'] as const) {
      const path = m === 'post' ? p : `${p}/${encodeURIComponent(String(body)).slice(0, 100)}`;
      const res = await (w.reseller1 as any)[m](path, body);
      assert.ok(res.status < 500, `${m} ${path} ${JSON.stringify(body)?.slice(0, 80)} -> ${res.status} ${JSON.stringify(res.body)}`);
    }
  }
  for (const q of ['?page=0', '?page=-1', '?page_size=0', '?page=abc', '?status=x', '?template=' + 'x'.repeat(300), '?reseller_id=' + 'y'.repeat(100)]) {
    for (const p of ['/configurations', '/numbers', '/blacklist', '/leads']) {
      const res = await w.reseller1.get(p + q);
      assert.ok(res.status < 500, `${p}${q} -> ${res.status}`);
    }
  }
  for (const p of ['/leads/' + 'z'.repeat(300), '/leads/recording/' + 'z'.repeat(300), '/configurations/%00', '/leads/%E2%82%AC/webhooks', '/numbers/' + 'n'.repeat(65)]) {
    const res = await w.reseller1.get(p);
    assert.ok(res.status < 500, `${p} -> ${res.status}`);
  }
  const nul = await w.reseller1.post('/leads', { request_id: 'a\u0000b', template: 'x', reseller_id: w.r1, payload: { customer_mobile_number: '+14155550123', k: 'v\u0000' } });
  assert.ok(nul.status < 500, `NUL -> ${nul.status} ${JSON.stringify(nul.body)}`);
  const nulCfg = await w.reseller1.post('/blacklist', { phone_numbers: ['+1415555\u00000123'] });
  assert.ok(nulCfg.status < 500, `NUL blacklist -> ${nulCfg.status}`);
  assert.equal(nul.status, 400, JSON.stringify(nul.body));
  const nulBatch = await w.reseller1.post('/leads/batch', { leads: [{ request_id: 'a', template: 'x', reseller_id: w.r1, payload: { customer_mobile_number: '+14155550123', k: 'v\u0000' } }] });
  // Text is checked for the whole body before any route runs: the batch is refused, naming the item's field.
  assert.equal(nulBatch.status, 400, `NUL batch -> ${nulBatch.status} ${JSON.stringify(nulBatch.body)}`);
  assert.equal(nulBatch.body.errors[0].path, '/leads/0/payload/k');
  const nulTpl = await w.reseller1.post('/templates', { name: 'n\u0000', reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a' }] } });
  assert.ok(nulTpl.status < 500, `NUL template -> ${nulTpl.status}`);
});
