/**
 * The dashboard's flow edits and drafts, as pure functions: a rename follows every reference, a
 * deletion drops the transitions into the node, a JSON syntax error is placed at its line and
 * column, and a call's record becomes a test case that plays it again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addNode, addTransition, deleteNode, parseFlowText, renameNode } from '../../web/src/lib/flow-edit.js';
import { caseFromCall } from '../../web/src/lib/case-from-call.js';
import { validateFlow } from '../../src/voice/flow/validate.js';

const flow = {
  initial_node: 'a',
  nodes: [
    { node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }], functions: [{ name: 'on', properties: {}, required: [], transition_to: 'b' }] },
    { node_name: 'b', task_messages: [{ role: 'system', content: 'Bye' }] },
  ],
};

describe('flow edits', () => {
  it('renames a node and every reference to it; a new node and a drawn transition keep the flow valid', () => {
    const renamed = renameNode(renameNode(flow, 0, 'start'), 1, 'end');
    assert.equal(renamed.initial_node, 'start');
    assert.equal((renamed.nodes as { functions?: { transition_to?: string }[] }[])[0]!.functions![0]!.transition_to, 'end');
    assert.equal(flow.initial_node, 'a', 'the flow given is left as it was');
    const added = addNode(renamed);
    const drawn = addTransition(added.flow, 'end', added.name);
    assert.equal(drawn.name, `go_to_${added.name}`);
    assert.deepEqual(validateFlow(drawn.flow), []);
  });

  it('deletes a node: the functions that led to it lose their transition, and the flow stays valid', () => {
    const left = deleteNode(flow, 1);
    assert.deepEqual((left.nodes as { node_name: string }[]).map((n) => n.node_name), ['a']);
    assert.equal('transition_to' in (left.nodes as { functions: object[] }[])[0]!.functions[0]!, false);
    assert.deepEqual(validateFlow(left), []);
  });

  it('places a JSON syntax error at its line and column', () => {
    const text = '{\n  "initial_node": "a"\n  "nodes": []\n}';
    const { syntax } = parseFlowText(text);
    assert.deepEqual([syntax?.line, syntax?.column], [3, 3]);
    assert.equal(parseFlowText('{\n  "nodes": [').syntax?.line, 2);
  });
});

describe('a test case from a call', () => {
  it('says the callee\'s lines between the agent\'s turns, with the lead\'s variables, and expects the same path, functions and outcome', () => {
    const draft = caseFromCall({
      request_id: 'r-1',
      outcome: 'confirmed',
      payload: { customer_mobile_number: '+14155550100', customer_name: 'Ana' },
      metaData: {
        transcription: [
          { role: 'assistant', content: 'Hello Ana, is Monday fine?' },
          { role: 'user', content: 'Yes, Monday works.' },
          { role: 'assistant', content: 'Great.' },
          { role: 'assistant', content: 'Goodbye!' },
        ],
        node_traversal: ['greet', 'goodbye'],
        function_calls: [{ name: 'confirm', node: 'greet', arguments: {} }],
      },
    });
    assert.deepEqual(draft.variables, { customer_name: 'Ana' });
    assert.deepEqual(draft.callee.steps, [{ wait_for_agent: true }, { say: 'Yes, Monday works.' }, { wait_for_agent: true }, { hang_up: true }]);
    assert.deepEqual(draft.expectations, [
      { kind: 'nodes', nodes: ['greet', 'goodbye'], match: 'in_order' },
      { kind: 'function_called', name: 'confirm' },
      { kind: 'outcome', equals: 'confirmed' },
    ]);
  });
});
