import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateFlow } from '../../src/templates/index.js';

const node = (name: string, extra: Record<string, unknown> = {}) => ({ node_name: name, task_messages: [{ role: 'system', content: 'Hi {name}' }], ...extra });
const paths = (flow: unknown) => validateFlow(flow).map((e) => e.path);

describe('validateFlow', () => {
  it('accepts a minimal flow and a node with empty task_messages', () => {
    assert.deepEqual(validateFlow({ initial_node: 'a', nodes: [node('a')] }), []);
    assert.deepEqual(validateFlow({ initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [], pre_actions: [{ type: 'end_conversation' }] }] }), []);
  });

  it('refuses a non-object flow with one error at /flow', () => {
    for (const flow of [null, undefined, 'flow', 3, []]) {
      const errors = validateFlow(flow);
      assert.equal(errors.length, 1);
      assert.equal(errors[0]!.path, '/flow');
    }
  });

  it('checks transitions against nodes declared later too', () => {
    const flow = { initial_node: 'a', nodes: [node('a', { functions: [{ name: 'next', transition_to: 'b' }] }), node('b')] };
    assert.deepEqual(validateFlow(flow), []);
  });

  it('escapes property keys in JSON pointers (RFC 6901)', () => {
    const flow = { initial_node: 'a', nodes: [node('a', { functions: [{ name: 'f', properties: { 'a/b~c': { type: 'txt' } } }] })] };
    assert.deepEqual(paths(flow), ['/flow/nodes/0/functions/0/properties/a~1b~0c/type']);
  });

  it('allows placeholders in hook URLs but needs a literal http(s) scheme', () => {
    const withUrl = (url: string) => ({
      initial_node: 'a',
      nodes: [node('a', { functions: [{ name: 'f', hooks: [{ name: 'h', http_request: { url } }] }] })],
    });
    assert.deepEqual(validateFlow(withUrl('https://{host}:8443/x/{id}?q={q}')), []);
    assert.deepEqual(validateFlow(withUrl('http://crm.local/x')), []);
    for (const bad of ['{base_url}/x', 'crm.example.com/x', 'https://', 'mailto:a@b.c']) {
      assert.deepEqual(paths(withUrl(bad)), ['/flow/nodes/0/functions/0/hooks/0/http_request/url'], bad);
    }
  });

  it('reports every error, in document order per node', () => {
    const flow = {
      initial_node: 'zz',
      nodes: [node('a', { outcome: '', functions: [{ name: '1bad' }, { name: 'ok', required: ['x'] }] }), node('a'), 'x'],
      extra: true,
    };
    assert.deepEqual(paths(flow).sort(), [
      '/flow/extra',
      '/flow/initial_node',
      '/flow/nodes/0/functions/0/name',
      '/flow/nodes/0/functions/1/required/0',
      '/flow/nodes/0/outcome',
      '/flow/nodes/1/node_name',
      '/flow/nodes/2',
    ]);
  });

  it('names the offending value in messages, shortened when long', () => {
    const long = 'n'.repeat(200);
    const [error] = validateFlow({ initial_node: long, nodes: [node('a')] });
    assert.ok(error!.message.length < 140);
    assert.match(error!.message, /^"nnn.*\.\.\. is not the name of any node \(nodes: a\)$/);
  });
});
