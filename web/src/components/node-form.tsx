/**
 * The selected node of the flow editor as forms: its name (renaming follows every reference),
 * whether the conversation starts there, its messages, its functions, its pre- and post-actions,
 * a transition to another node, and its deletion. Every change goes through `change`, so that
 * the JSON view, the graph, the validator and the undo history see it at once.
 */
import { ACTION_TYPES, BUILTIN_FUNCTIONS, MESSAGE_ROLES } from '../../../src/voice/flow/schema.js';
import { freeName, type Json } from '../lib/flow-edit.js';
import { CommitInput, Group, Labelled, list, RemoveButton, str, type NodeChange, type ProblemAt } from './flow-fields.js';
import { FunctionForm } from './function-form.js';

export interface NodeFormProps {
  node: Json;
  nodeNames: string[];
  initial: boolean;
  change: NodeChange;
  rename: (to: string) => void;
  remove: () => void;
  makeInitial: () => void;
  connect: (to: string) => void;
  problemAt: ProblemAt;
  /** Problems of the node that no field below shows. */
  otherProblems: { path: string; message: string }[];
}

function Messages({ node, field, change, problemAt }: { node: Json; field: 'role_messages' | 'task_messages'; change: NodeChange; problemAt: ProblemAt }) {
  const messages = list(node[field]);
  return (
    <Group
      title={field === 'role_messages' ? 'Role messages (who the agent is)' : 'Task messages (what to do in this node)'}
      addLabel="Add a message"
      onAdd={() => change((n) => void (n[field] = [...list(n[field]), { role: 'system', content: '' }]))}
    >
      {messages.map((m, i) => (
        <div class="message-row" key={i} data-message={`${field}/${i}`}>
          <Labelled label="Role" problem={problemAt(`/${field}/${i}/role`)}>
            <select name="message_role" value={str(m.role)} onChange={(e) => change((n) => void (list(n[field])[i]!.role = e.currentTarget.value))}>
              {MESSAGE_ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </Labelled>
          <Labelled label="Content ({variable} from the lead)" problem={problemAt(`/${field}/${i}/content`) ?? problemAt(`/${field}/${i}`)}>
            <textarea name="message_content" rows={3} value={str(m.content)} onInput={(e) => change((n) => void (list(n[field])[i]!.content = e.currentTarget.value), `${field}/${i}`)} />
          </Labelled>
          <RemoveButton
            label="Remove the message"
            onClick={() =>
              change((n) => {
                const rest = list(n[field]).filter((_, j) => j !== i);
                // Role messages are optional: none is no field; task messages are required.
                if (rest.length === 0 && field === 'role_messages') delete n[field];
                else n[field] = rest;
              })
            }
          />
        </div>
      ))}
    </Group>
  );
}

function Actions({ node, field, change, problemAt }: { node: Json; field: 'pre_actions' | 'post_actions'; change: NodeChange; problemAt: ProblemAt }) {
  const actions = list(node[field]);
  const functions = list(node.functions)
    .filter((f) => f.type !== 'builtin')
    .map((f) => str(f.name));
  const setType = (i: number, type: string) =>
    change((n) => {
      const fresh: Json = type === 'tts_say' ? { type, text: '' } : type === 'function' ? { type, name: functions[0] ?? '' } : { type };
      list(n[field])[i] = fresh;
    });
  return (
    <Group
      title={field === 'pre_actions' ? 'Pre-actions (on entering the node)' : 'Post-actions (on leaving the node)'}
      addLabel="Add an action"
      onAdd={() => change((n) => void (n[field] = [...list(n[field]), { type: 'tts_say', text: '' }]))}
    >
      {actions.map((a, i) => {
        const at = `/${field}/${i}`;
        return (
          <div class="action-row" key={i} data-action={`${field}/${i}`}>
            <Labelled label="Action" problem={problemAt(`${at}/type`)}>
              <select name="action_type" value={str(a.type)} onChange={(e) => setType(i, e.currentTarget.value)}>
                {ACTION_TYPES.map((t) => (
                  <option key={t} value={t}>
                    {t === 'tts_say' ? 'say' : t === 'end_conversation' ? 'end the call' : 'run a function'}
                  </option>
                ))}
              </select>
            </Labelled>
            {a.type === 'tts_say' && (
              <Labelled label="Text" problem={problemAt(`${at}/text`)}>
                <input name="action_text" value={str(a.text)} onInput={(e) => change((n) => void (list(n[field])[i]!.text = e.currentTarget.value), `${at}/text`)} />
              </Labelled>
            )}
            {a.type === 'end_conversation' && (
              <Labelled label="Outcome (optional)" problem={problemAt(`${at}/outcome`)}>
                <input
                  name="action_outcome"
                  value={str(a.outcome)}
                  onInput={(e) =>
                    change((n) => {
                      const action = list(n[field])[i]!;
                      if (e.currentTarget.value) action.outcome = e.currentTarget.value;
                      else delete action.outcome;
                    }, `${at}/outcome`)
                  }
                />
              </Labelled>
            )}
            {a.type === 'function' && (
              <Labelled label="Function of this node" problem={problemAt(`${at}/name`)}>
                <select name="action_function" value={str(a.name)} onChange={(e) => change((n) => void (list(n[field])[i]!.name = e.currentTarget.value))}>
                  {!functions.includes(str(a.name)) && <option value={str(a.name)}>{str(a.name) || '(choose)'}</option>}
                  {functions.map((f) => (
                    <option key={f}>{f}</option>
                  ))}
                </select>
              </Labelled>
            )}
            <RemoveButton
              label="Remove the action"
              onClick={() =>
                change((n) => {
                  const rest = list(n[field]).filter((_, j) => j !== i);
                  if (rest.length === 0) delete n[field];
                  else n[field] = rest;
                })
              }
            />
          </div>
        );
      })}
    </Group>
  );
}

export function NodeForm({ node, nodeNames, initial, change, rename, remove, makeInitial, connect, problemAt, otherProblems }: NodeFormProps) {
  const name = str(node.node_name);
  const functions = list(node.functions);
  const others = nodeNames.filter((n) => n !== name);
  const fnNames = functions.map((f) => str(f.name));
  return (
    <div class="node-form" data-node={name}>
      <div class="flow-fields">
        <Labelled label="Node name" problem={problemAt('/node_name')}>
          <CommitInput name="node_name" aria-label="Node name" value={name} onCommit={rename} />
        </Labelled>
        <label class="field check">
          <input type="checkbox" name="respond_immediately" checked={node.respond_immediately === true} onChange={(e) => change((n) => void (e.currentTarget.checked ? (n.respond_immediately = true) : delete n.respond_immediately))} />
          The agent speaks first on entering
        </label>
      </div>
      <div class="node-form-actions">
        {initial ? (
          <span class="badge badge-ok">The conversation starts here</span>
        ) : (
          <button type="button" class="small" onClick={makeInitial}>
            Start the conversation here
          </button>
        )}
        <label class="connect">
          <span>Add a transition to</span>
          <select
            name="connect_to"
            aria-label="Add a transition to"
            value=""
            onChange={(e) => {
              if (e.currentTarget.value) connect(e.currentTarget.value);
              e.currentTarget.value = '';
            }}
          >
            <option value="">choose a node…</option>
            {[...others, name].map((n) => (
              <option key={n} value={n}>
                {n === name ? `${n} (itself)` : n}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="small danger" onClick={remove}>
          Delete node
        </button>
      </div>
      {otherProblems.length > 0 && (
        <ul class="node-problems">
          {otherProblems.map((p) => (
            <li key={p.path + p.message}>
              <code>{p.path || '/'}</code> {p.message}
            </li>
          ))}
        </ul>
      )}
      <Messages node={node} field="role_messages" change={change} problemAt={problemAt} />
      <Messages node={node} field="task_messages" change={change} problemAt={problemAt} />
      <Group
        title="Functions"
        addLabel="Add a function"
        onAdd={() => change((n) => void (n.functions = [...list(n.functions), { name: freeName('do_something', fnNames), description: '', properties: {}, required: [] }]))}
        extra={
          <select
            name="add_builtin"
            aria-label="Add a built-in function"
            class="inline-select"
            value=""
            onChange={(e) => {
              const b = e.currentTarget.value;
              e.currentTarget.value = '';
              if (b) change((n) => void (n.functions = [...list(n.functions), { name: b, type: 'builtin' }]));
            }}
          >
            <option value="">Add a built-in…</option>
            {BUILTIN_FUNCTIONS.filter((b) => !fnNames.includes(b)).map((b) => (
              <option key={b}>{b}</option>
            ))}
          </select>
        }
      >
        {functions.map((f, i) => (
          <FunctionForm
            key={i}
            fn={f}
            at={`/functions/${i}`}
            nodeNames={nodeNames}
            problemAt={problemAt}
            change={(mutate, key) => change((n) => mutate(list(n.functions)[i]!), key)}
            remove={() =>
              change((n) => {
                const rest = list(n.functions).filter((_, j) => j !== i);
                if (rest.length === 0) delete n.functions;
                else n.functions = rest;
              })
            }
          />
        ))}
      </Group>
      <Actions node={node} field="pre_actions" change={change} problemAt={problemAt} />
      <Actions node={node} field="post_actions" change={change} problemAt={problemAt} />
    </div>
  );
}
