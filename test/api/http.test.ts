import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp({ env: { DIALER_BODY_LIMIT_BYTES: '2048' } });
});
after(() => t.close());

describe('service surface', () => {
  it('GET /health answers without a token', async () => {
    const res = await t.anon.get('/health');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ok');
    assert.equal(res.body.database, t.db.kind);
  });

  it('serves an OpenAPI 3.1 document that names every route and the bearer scheme', async () => {
    const res = await t.anon.get('/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    assert.ok(res.body.components.securitySchemes.bearer);
    const paths = Object.keys(res.body.paths);
    for (const p of ['/agent/voice/dialer/login', '/agent/voice/dialer/s2s-token', '/agent/voice/dialer/merchants', '/agent/voice/dialer/merchants/{id}']) {
      assert.ok(paths.includes(p), `${p} is documented`);
    }
    assert.ok(res.body.components.schemas.Problem, 'problem schema is shared');
  });

  it('serves interactive docs', async () => {
    const res = await t.anon.raw({ method: 'GET', path: '/agent/voice/dialer/docs/' });
    assert.equal(res.status, 200);
    assert.match(String(res.body), /swagger/i);
  });

  it('echoes X-Request-Id, or makes one', async () => {
    const mine = await t.anon.raw({ method: 'GET', path: '/health', headers: { 'x-request-id': 'abc-123' } });
    assert.equal(mine.headers['x-request-id'], 'abc-123');
    const made = await t.anon.get('/health');
    assert.match(String(made.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('unknown routes answer a 404 problem', async () => {
    const res = await t.admin.get('/no-such-thing');
    assert.equal(res.status, 404);
    assert.equal(res.body.status, 404);
  });

  it('oversized, mistyped and malformed bodies answer 4xx problems, never 500', async () => {
    const big = await t.admin.post('/resellers', { name: 'x'.repeat(5000) });
    assert.equal(big.status, 413);
    assert.equal(big.body.status, 413);
    const text = await t.admin.raw({ method: 'POST', path: '/resellers', payload: 'name=x', headers: { 'content-type': 'text/plain' } });
    assert.equal(text.status, 415);
    const broken = await t.admin.raw({ method: 'POST', path: '/resellers', payload: '{"name": "x",', headers: { 'content-type': 'application/json' } });
    assert.equal(broken.status, 400);
    const array = await t.admin.post('/resellers', ['x']);
    assert.equal(array.status, 400);
  });
});
