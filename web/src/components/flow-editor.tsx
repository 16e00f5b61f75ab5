/**
 * The flow editor: the graph (add a node, select one, drag a transition from one node to another),
 * the selected node as forms, and the JSON view, all over one text, the flow's JSON. Every edit,
 * wherever it is made, becomes that text, so the views never disagree; it is checked as you type
 * by the API's own validator (src/voice/flow/validate.ts; with the template's languages, as the API
 * checks the built-in switch_language against them), and kept in an undo history
 * (Ctrl+Z, Ctrl+Shift+Z or Ctrl+Y, and the buttons).
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { AgentChoice } from '../../../src/voice/agent-choice.js';
import { validateFlow } from '../../../src/voice/flow/validate.js';
import { flowLanguageErrors } from '../../../src/voice/language.js';
import { addNode, addTransition, deleteNode, nameOf, nodesOf, parseFlowText, renameNode, updateNode, type FlowDoc, type SyntaxProblem } from '../lib/flow-edit.js';
import type { History } from '../lib/history.js';
import { FlowGraph } from './flow-graph.js';
import { NodeForm } from './node-form.js';
import type { NodeChange } from './flow-fields.js';
import { Card } from './ui.js';

export interface Problem {
  path: string;
  message: string;
}

/** The node a problem's path points into (`/flow/nodes/1/...`), by name when it has one. */
function nodeOf(path: string, flow: unknown): string | undefined {
  const m = /^\/flow\/nodes\/(\d+)/.exec(path);
  if (!m) return undefined;
  const node = (flow as { nodes?: { node_name?: unknown }[] } | undefined)?.nodes?.[Number(m[1])];
  return typeof node?.node_name === 'string' && node.node_name ? node.node_name : `(node ${Number(m[1]) + 1})`;
}

/** "functions[0].transition_to" for "/flow/nodes/1/functions/0/transition_to". */
function fieldOf(path: string): string {
  const rest = path.replace(/^\/flow(\/nodes\/\d+)?\/?/, '');
  return rest.split('/').reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : out ? `${out}.${part}` : part), '') || '(the flow)';
}

/** The paths inside a node that its form shows a problem at; the others are listed atop the form. */
const SHOWN_IN_FORM =
  /^\/(node_name|(role|task)_messages\/\d+(\/(role|content))?|functions\/\d+(\/(name|type|description|transition_to|transfer_to_number|warm_transfer(\/(briefing|hold_message|declined_message|no_answer_message|callback_after_minutes))?|properties\/[^/]+(\/type)?|hooks\/\d+\/(name|http_request(\/(url|method|timeout))?)))?|(pre|post)_actions\/\d+\/(type|text|outcome|name))$/;

/** Where the JSON is not JSON: line, column, the line itself and a caret under the spot. */
function SyntaxNote({ syntax, text, reveal }: { syntax: SyntaxProblem; text: string; reveal: () => void }) {
  const line = text.split('\n')[syntax.line - 1] ?? '';
  const gutter = `${syntax.line} | `;
  return (
    <div id="json-syntax" data-line={syntax.line} data-column={syntax.column}>
      <p class="error-text">
        Line {syntax.line}, column {syntax.column}: {syntax.message}
      </p>
      <pre class="syntax-excerpt">
        {`${gutter}${line.slice(0, 120)}\n${' '.repeat(gutter.length + Math.min(syntax.column - 1, 120))}^`}
      </pre>
      <button type="button" class="link-button" onClick={reveal}>
        Show it in the JSON
      </button>
    </div>
  );
}

export function FlowEditor({ text, setText, history, writable, apiProblems, onEdited, agent }: { text: string; setText: (text: string) => void; history: History; writable: boolean; apiProblems: Problem[]; onEdited: () => void; agent?: AgentChoice }) {
  const [checked, setChecked] = useState(text);
  // What the JSON view shows: the text, except while a form is being typed in, when it follows a
  // moment later (rewriting a large textarea at each key is what would make typing slow).
  const [shown, setShown] = useState(text);
  const latest = useRef(text);
  latest.current = text;
  const typingInForm = useRef(false);
  const [selected, setSelected] = useState<number>();
  const [cursor, setCursor] = useState<{ line: number; column: number }>();
  const editor = useRef<HTMLTextAreaElement>(null);
  // Set by an edit made on the graph or by undo: checked at once rather than after a pause in typing.
  const immediate = useRef(false);

  useEffect(() => {
    const inForm = typingInForm.current;
    typingInForm.current = false;
    if (!inForm) setShown(text);
    if (immediate.current) {
      immediate.current = false;
      setChecked(text);
      return;
    }
    const timer = setTimeout(() => {
      setChecked(text);
      setShown(text);
    }, 200);
    return () => clearTimeout(timer);
  }, [text]);

  // The text as it is now (the forms edit it), and as last checked (the validator and the graph).
  const live = useMemo(() => parseFlowText(text), [text]);
  const parsed = useMemo(() => parseFlowText(checked), [checked]);
  const local: Problem[] = useMemo(() => (parsed.syntax ? [] : [...validateFlow(parsed.flow), ...flowLanguageErrors(parsed.flow, agent)]), [parsed, agent]);
  const problems = useMemo(() => [...local, ...apiProblems.filter((a) => !local.some((l) => l.path === a.path && l.message === a.message))], [local, apiProblems]);
  const problemKey = JSON.stringify(problems);
  const byNode = useMemo(() => {
    const m = new Map<string, number>();
    for (const p of problems) {
      const node = nodeOf(p.path, parsed.flow);
      if (node) m.set(node, (m.get(node) ?? 0) + 1);
    }
    return m;
  }, [problemKey, parsed]);
  const grouped = useMemo(() => {
    const groups = new Map<string, Problem[]>();
    for (const p of problems) {
      const key = nodeOf(p.path, parsed.flow) ?? '';
      groups.set(key, [...(groups.get(key) ?? []), p]);
    }
    return groups;
  }, [problemKey, parsed]);

  const change = (next: string, key?: string) => {
    if (key === undefined) immediate.current = true;
    typingInForm.current = key !== undefined && key !== 'json';
    setText(next);
    history.record(next, key);
    onEdited();
  };
  const emit = (flow: FlowDoc, key?: string) => change(JSON.stringify(flow, null, 2), key);
  const step = (to: string | undefined) => {
    if (to === undefined) return;
    immediate.current = true;
    setText(to);
    onEdited();
  };
  // Undo and redo keys anywhere on the page, but in a field outside the editor (the template's
  // name, a test case), where they are the field's own.
  const keys = useRef<(e: KeyboardEvent) => void>(undefined);
  keys.current = (e: KeyboardEvent) => {
    if (!writable || !(e.ctrlKey || e.metaKey) || e.altKey) return;
    const key = e.key.toLowerCase();
    if (key !== 'z' && key !== 'y') return;
    const target = e.target as HTMLElement | null;
    if (target?.closest?.('input, textarea, select, [contenteditable]') && !target.closest('.flow-editor')) return;
    e.preventDefault();
    step(key === 'y' || e.shiftKey ? history.redo() : history.undo());
  };
  useEffect(() => {
    const listener = (e: KeyboardEvent) => keys.current?.(e);
    document.addEventListener('keydown', listener);
    return () => document.removeEventListener('keydown', listener);
  }, []);

  const flow = live.flow && typeof live.flow === 'object' && !Array.isArray(live.flow) ? live.flow : undefined;
  const nodes = flow ? nodesOf(flow) : [];
  const nodeNames = nodes.map(nameOf);
  const index = selected !== undefined && selected < nodes.length ? selected : undefined;
  const node = index !== undefined ? nodes[index] : undefined;
  const editable = writable && !!flow;

  /** Puts the cursor on a spot of the JSON view and scrolls to it. */
  const revealAt = (offset: number, length: number, line: number) => {
    const area = editor.current;
    if (!area) return;
    area.focus();
    area.setSelectionRange(offset, offset + length);
    area.scrollTop = Math.max(0, (line - 3) * 19);
  };
  const revealNode = (name: string) => {
    const area = editor.current;
    if (!area) return;
    const at = area.value.indexOf(`"node_name": ${JSON.stringify(name)}`);
    if (at >= 0) revealAt(at, name.length + 14, area.value.slice(0, at).split('\n').length);
  };
  const trackCursor = () => {
    const area = editor.current;
    if (!area) return;
    const before = area.value.slice(0, area.selectionStart).split('\n');
    setCursor({ line: before.length, column: before[before.length - 1]!.length + 1 });
  };

  // The graph only changes with the checked text, not at each key typed in the JSON view.
  const graphName = index !== undefined ? nodeNames[index] : undefined;
  const graph = useMemo(
    () =>
      parsed.syntax ? (
        <p class="muted">Fix the JSON to see the graph.</p>
      ) : (
        <FlowGraph
          flow={parsed.flow}
          problemsByNode={byNode}
          selected={graphName}
          onSelect={writable ? (name) => setSelected(nodesOf((parseFlowText(latest.current).flow ?? {}) as FlowDoc).findIndex((n) => nameOf(n) === name)) : undefined}
          onConnect={
            writable
              ? (from, to) => {
                  const current = parseFlowText(latest.current).flow;
                  if (current) emit(addTransition(current, from, to).flow);
                }
              : undefined
          }
        />
      ),
    [parsed, byNode, graphName, writable],
  );

  const nodeChange: NodeChange = (mutate, key) => flow && index !== undefined && emit(updateNode(flow, index, mutate), key === undefined ? undefined : `node${index}${key}`);
  const nodeProblems = index === undefined ? [] : problems.filter((p) => p.path.startsWith(`/flow/nodes/${index}/`) || p.path === `/flow/nodes/${index}`);
  const rel = (p: Problem) => p.path.slice(`/flow/nodes/${index}`.length);

  return (
    <div class="flow-editor">
      <Card
        title="Graph"
        id="graph"
        actions={
          writable && (
            <>
              <button type="button" id="undo" onClick={() => step(history.undo())} disabled={!history.canUndo} title="Undo (Ctrl+Z)">
                ↶ Undo
              </button>
              <button type="button" id="redo" onClick={() => step(history.redo())} disabled={!history.canRedo} title="Redo (Ctrl+Shift+Z)">
                ↷ Redo
              </button>
              <button
                type="button"
                id="add-node"
                disabled={!editable}
                onClick={() => {
                  if (!flow) return;
                  const added = addNode(flow);
                  emit(added.flow);
                  setSelected(nodesOf(added.flow).length - 1);
                }}
              >
                + Add a node
              </button>
            </>
          )
        }
      >
        {graph}
        {writable && !parsed.syntax && <p class="hint">Click a node to edit it below. Drag from the dot under a node onto another node to add a transition.</p>}
      </Card>
      <div class="editor-grid">
        {writable && (
          <Card title={node ? `Node ${nameOf(node) || '(unnamed)'}` : 'Node'} id="node-editor">
            {!flow ? (
              <p class="muted">Fix the JSON to edit the nodes here.</p>
            ) : !node || index === undefined ? (
              <p class="muted">Select a node on the graph, or add one.</p>
            ) : (
              <NodeForm
                key={index}
                node={node}
                nodeNames={nodeNames}
                initial={flow.initial_node === nameOf(node)}
                change={nodeChange}
                rename={(to) => emit(renameNode(flow, index, to))}
                remove={() => {
                  emit(deleteNode(flow, index));
                  setSelected(undefined);
                }}
                makeInitial={() => emit({ ...flow, initial_node: nameOf(node) })}
                connect={(to) => emit(addTransition(flow, nameOf(node), to).flow)}
                problemAt={(path) => nodeProblems.find((p) => rel(p) === path)?.message}
                otherProblems={nodeProblems.filter((p) => !SHOWN_IN_FORM.test(rel(p))).map((p) => ({ path: fieldOf(p.path), message: p.message }))}
              />
            )}
          </Card>
        )}
        <div class="editor-side">
          <Card title={parsed.syntax ? 'Not valid JSON' : problems.length ? `${problems.length} problem${problems.length > 1 ? 's' : ''}` : 'No problems'} id="problems">
            {parsed.syntax ? (
              <SyntaxNote syntax={parsed.syntax} text={checked} reveal={() => revealAt(parsed.syntax!.offset, 1, parsed.syntax!.line)} />
            ) : problems.length === 0 ? (
              <p class="ok-text">The flow is valid{writable ? ': save it when you are ready' : ''}.</p>
            ) : (
              <div class="problems">
                {apiProblems.length > 0 && <p class="hint">The API refused the last save for these reasons:</p>}
                {[...grouped].map(([name, list]) => (
                  <div key={name} class="problem-group" data-node={name}>
                    <h3>
                      {name ? (
                        <button
                          type="button"
                          class="link-button"
                          onClick={() => {
                            revealNode(name);
                            const i = nodeNames.indexOf(name);
                            if (i >= 0) setSelected(i);
                          }}
                        >
                          Node {name}
                        </button>
                      ) : (
                        'The flow'
                      )}
                    </h3>
                    <ul>
                      {list.map((p) => (
                        <li key={p.path + p.message} data-path={p.path}>
                          <code>{fieldOf(p.path)}</code> {p.message}
                        </li>
                      ))}
                    </ul>
                  </div>
                ))}
              </div>
            )}
          </Card>
          <Card title="Flow (JSON)" class="editor-card">
            <textarea
              ref={editor}
              class="json-editor"
              id="flow-editor"
              aria-label="The flow as JSON"
              spellcheck={false}
              readOnly={!writable}
              value={shown}
              onFocus={() => setShown(latest.current)}
              onInput={(e) => change(e.currentTarget.value, 'json')}
              onKeyUp={trackCursor}
              onClick={trackCursor}
            />
            <p class="hint json-status">
              {cursor && (
                <span class="cursor-at">
                  Line {cursor.line}, column {cursor.column}
                </span>
              )}
              Nodes have <code>node_name</code>, <code>task_messages</code>, optional <code>role_messages</code>, <code>functions</code> (with <code>transition_to</code> and <code>hooks</code>),{' '}
              <code>pre_actions</code> and <code>post_actions</code>. <code>{'{variable}'}</code> is filled from the lead's payload.
            </p>
          </Card>
        </div>
      </div>
    </div>
  );
}
