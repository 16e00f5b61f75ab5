import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
});
after(() => t.close());

let seq = 0;
const trunk = (resellerId: string, extra: Record<string, unknown> = {}) => ({
  reseller_id: resellerId,
  name: `carrier-${++seq}`,
  address: 'sip.carrier.example:5060',
  transport: 'udp',
  username: 'dialer',
  password: 'digest-secret',
  codecs: ['PCMA', 'PCMU'],
  max_channels: 2,
  ...extra,
});
const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] };

describe('SIP trunks', () => {
  it('creates, reads, lists, replaces and deletes a trunk; the password is never returned', async () => {
    const created = await w.reseller1.post('/trunks', trunk(w.r1));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.password, undefined);
    assert.equal(created.body.has_password, true);
    assert.deepEqual(created.body.codecs, ['PCMA', 'PCMU']);
    assert.equal(created.body.transfer_method, 'refer', 'transfers by REFER unless told');
    assert.deepEqual((await t.admin.get(`/trunks/${created.body.id}`)).body, created.body);
    assert.ok((await w.reseller1.get('/trunks')).body.data.some((x: { id: string }) => x.id === created.body.id));
    // Another reseller neither sees nor lists it.
    assert.equal((await w.reseller2.get(`/trunks/${created.body.id}`)).status, 404);
    assert.ok(!(await w.reseller2.get('/trunks')).body.data.some((x: { id: string }) => x.id === created.body.id));
    // A replace without the password keeps it.
    const { password: _p, ...noPassword } = trunk(w.r1, { name: created.body.name, max_channels: 5, transfer_method: 'bridge' });
    const replaced = await w.reseller1.put(`/trunks/${created.body.id}`, noPassword);
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.equal(replaced.body.max_channels, 5);
    assert.equal(replaced.body.transfer_method, 'bridge');
    assert.equal(replaced.body.has_password, true);
    const deleted = await w.reseller1.delete(`/trunks/${created.body.id}`);
    assert.deepEqual(deleted.body, { id: created.body.id, deleted: true });
    assert.equal((await w.reseller1.get(`/trunks/${created.body.id}`)).status, 404);
  });

  it('answers 400 for bad input: a refused address (cloud metadata; tests allow loopback), an unknown codec, a negative cap, an unknown transport', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ address: '169.254.169.254' }, '/address'],
      [{ address: 'not a host' }, '/address'],
      [{ codecs: ['G729'] }, '/codecs/0'],
      [{ max_channels: -1 }, '/max_channels'],
      [{ max_calls_per_second: 0 }, '/max_calls_per_second'],
      [{ transport: 'sctp' }, '/transport'],
      [{ password: null }, '/password'],
      [{ transfer_method: 'attended' }, '/transfer_method'],
    ];
    for (const [extra, path] of cases) {
      const res = await w.reseller1.post('/trunks', trunk(w.r1, extra));
      assert.equal(res.status, 400, `${JSON.stringify(extra)}: ${JSON.stringify(res.body)}`);
      assert.ok(JSON.stringify(res.body.errors ?? []).includes(path), `${JSON.stringify(extra)}: ${JSON.stringify(res.body)}`);
    }
    // TCP and TLS are carried as UDP is.
    for (const transport of ['tcp', 'tls']) {
      const res = await w.reseller1.post('/trunks', trunk(w.r1, { transport }));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.transport, transport);
    }
    // Another reseller's trunk is out of scope.
    assert.equal((await w.reseller2.post('/trunks', trunk(w.r1))).status, 403);
  });

  it('a configuration dials SIP through a trunk of its own reseller only', async () => {
    const mine = (await w.reseller1.post('/trunks', trunk(w.r1))).body.id as string;
    const theirs = (await w.reseller2.post('/trunks', trunk(w.r2))).body.id as string;
    const tpl = (await w.reseller1.post('/templates', { name: `sip-tpl-${++seq}`, reseller_id: w.r1, merchant_id: null, flow })).body.id as string;
    const base = { reseller_id: w.r1, template: tpl, call_start_time: '00:00', call_end_time: '00:00', calling_provider: 'SIP' };
    const other = await w.reseller1.post('/configurations', { ...base, trunk_id: theirs });
    assert.equal(other.status, 400);
    assert.equal(other.body.errors[0].path, '/trunk_id');
    assert.equal((await w.reseller1.post('/configurations', base)).status, 400);
    assert.equal((await w.reseller1.post('/configurations', { ...base, calling_provider: 'PROVIDER_A', trunk_id: mine })).status, 400);
    const ok = await w.reseller1.post('/configurations', { ...base, trunk_id: mine });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.trunk_id, mine);
    // A trunk in use cannot be deleted; a SIP caller ID can be added.
    assert.equal((await w.reseller1.delete(`/trunks/${mine}`)).status, 409);
    assert.equal((await t.admin.post('/numbers', { phone_number: '+16465550999', provider: 'SIP' })).status, 200);
  });
});
