import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
/** A template of each reseller, for pushes. */
const templates = new Map<string, string>();
before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  for (const [client, resellerId] of [[w.reseller1, w.r1], [w.reseller2, w.r2]] as const) {
    const name = `blacklist-${resellerId}`;
    const res = await client.post('/templates', { name, reseller_id: resellerId, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    templates.set(resellerId, name);
  }
});

let pushes = 0;
/** Whether the reseller's push of a lead to `phone` is refused as blacklisted: the rule as a client meets it. */
async function isBlacklisted(client: Client, resellerId: string, phone: string): Promise<boolean> {
  const res = await client.post('/leads', { request_id: `bl-${++pushes}`, template: templates.get(resellerId), reseller_id: resellerId, payload: { customer_mobile_number: phone } });
  assert.ok(res.status === 201 || (res.status === 403 && res.body.code === 'blacklisted'), JSON.stringify(res.body));
  return res.status === 403;
}
after(() => t.close());

const numbersOf = (body: any): string[] => body.data.map((e: any) => e.phone_number).sort();

describe('blacklist', () => {
  it('adds, lists and removes a reseller\'s numbers; duplicates are reported, not repeated', async () => {
    const add = await w.reseller1.post('/blacklist', { phone_numbers: ['+14155550101', '+14155550102', '+14155550101'] });
    assert.equal(add.status, 200, JSON.stringify(add.body));
    assert.deepEqual(add.body, { reseller_id: w.r1, added: ['+14155550101', '+14155550102'], already_present: [] });
    const again = await w.reseller1.post('/blacklist', { phone_numbers: ['+14155550102', '+14155550103'] });
    assert.deepEqual(again.body, { reseller_id: w.r1, added: ['+14155550103'], already_present: ['+14155550102'] });

    const list = await w.reseller1.get('/blacklist');
    assert.deepEqual(numbersOf(list.body), ['+14155550101', '+14155550102', '+14155550103']);
    assert.equal(list.body.total, 3);
    assert.equal(list.body.data[0].reseller_id, w.r1);
    assert.deepEqual(numbersOf((await w.merchant1.get('/blacklist')).body), ['+14155550101', '+14155550102', '+14155550103']);
    assert.equal((await w.reseller2.get('/blacklist')).body.total, 0, 'another reseller does not see it');
    assert.equal(await isBlacklisted(w.reseller1, w.r1, '+14155550101'), true);
    assert.equal(await isBlacklisted(w.reseller2, w.r2, '+14155550101'), false);

    const del = await w.reseller1.delete('/blacklist', { phone_numbers: ['+14155550101', '+14155550199'] });
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { reseller_id: w.r1, removed: ['+14155550101'], not_found: ['+14155550199'] });
    assert.deepEqual(numbersOf((await w.reseller1.get('/blacklist')).body), ['+14155550102', '+14155550103']);
    assert.equal(await isBlacklisted(w.reseller1, w.r1, '+14155550101'), false);
  });

  it('keeps a platform-wide list that admins write and every reseller sees and is bound by', async () => {
    const add = await t.admin.post('/blacklist', { phone_numbers: ['+14155550150'] });
    assert.deepEqual(add.body, { reseller_id: null, added: ['+14155550150'], already_present: [] });
    assert.ok(numbersOf((await w.reseller2.get('/blacklist')).body).includes('+14155550150'));
    assert.equal(await isBlacklisted(w.reseller2, w.r2, '+14155550150'), true);
    // A reseller cannot remove a platform entry: its delete is against its own list.
    const del = await w.reseller2.delete('/blacklist', { phone_numbers: ['+14155550150'] });
    assert.deepEqual(del.body.not_found, ['+14155550150']);
    assert.equal(await isBlacklisted(w.reseller2, w.r2, '+14155550150'), true);
    const adminForR2 = await t.admin.post('/blacklist', { phone_numbers: ['+14155550151'], reseller_id: w.r2 });
    assert.equal(adminForR2.body.reseller_id, w.r2);
    assert.equal((await t.admin.delete('/blacklist', { phone_numbers: ['+14155550150'] })).body.removed[0], '+14155550150');
  });

  it('answers 400 for invalid numbers (nothing written), empty or missing lists, and unknown resellers', async () => {
    const bad = await w.reseller1.post('/blacklist', { phone_numbers: ['+14155550160', '+1 415 555 0161', 'abc'] });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.errors.map((e: any) => e.path), ['/phone_numbers/1', '/phone_numbers/2']);
    assert.equal(await isBlacklisted(w.reseller1, w.r1, '+14155550160'), false, 'all or nothing');
    assert.equal((await w.reseller1.post('/blacklist', { phone_numbers: [] })).status, 400);
    assert.equal((await w.reseller1.post('/blacklist', {})).status, 400);
    assert.equal((await w.reseller1.delete('/blacklist')).status, 400);
    assert.equal((await w.reseller1.post('/blacklist', { phone_numbers: [5] })).status, 400);
    assert.equal((await t.admin.post('/blacklist', { phone_numbers: ['+14155550160'], reseller_id: 'nope' })).status, 400);
  });

  it('enforces roles and scope', async () => {
    assert.equal((await w.merchant1.post('/blacklist', { phone_numbers: ['+14155550170'] })).status, 403);
    assert.equal((await w.user1.get('/blacklist')).status, 403);
    assert.equal((await w.reseller1.post('/blacklist', { phone_numbers: ['+14155550170'], reseller_id: w.r2 })).status, 403);
    assert.equal((await t.anon.get('/blacklist')).status, 401);
  });
});
