/**
 * Edits of a flow made on the graph and in the node forms, as pure functions over the flow's JSON
 * object (each returns a new flow and never touches the one given), and where a JSON syntax error
 * sits in the text. What makes a flow valid is decided by the API's validator alone
 * (src/voice/flow/validate.ts); these functions only change the shape the user asked for.
 */

export type Json = Record<string, unknown>;
export type FlowDoc = Json & { initial_node?: unknown; nodes?: unknown };

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** The flow's nodes, in place (an entry that is not an object is kept and read as an empty node). */
export const nodesOf = (flow: FlowDoc): Json[] => (Array.isArray(flow.nodes) ? (flow.nodes as unknown[]).map((n) => (isObject(n) ? n : {})) : []);
const rawNodes = (flow: FlowDoc): unknown[] => (Array.isArray(flow.nodes) ? (flow.nodes as unknown[]) : (flow.nodes = []));
export const nameOf = (node: Json): string => (typeof node.node_name === 'string' ? node.node_name : '');

/** A deep copy (flows are plain JSON). */
const copy = <T>(v: T): T => structuredClone(v);

/** A name not yet taken: `base`, `base_2`, `base_3`... */
export function freeName(base: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let i = 2; ; i++) if (!used.has(`${base}_${i}`)) return `${base}_${i}`;
}

/** Adds a node (the first node of an empty flow becomes its initial node); returns its name. */
export function addNode(flow: FlowDoc): { flow: FlowDoc; name: string } {
  const next = copy(flow);
  const nodes = nodesOf(next);
  const name = freeName(`node_${nodes.length + 1}`, nodes.map(nameOf));
  rawNodes(next).push({ node_name: name, task_messages: [{ role: 'system', content: 'Say what this step of the conversation should do.' }] });
  if (!next.initial_node) next.initial_node = name;
  return { flow: next, name };
}

/**
 * Renames the node at `index`, and every reference to it (the initial node, each function's
 * transition_to) when its old name was its own alone.
 */
export function renameNode(flow: FlowDoc, index: number, to: string): FlowDoc {
  const next = copy(flow);
  const nodes = nodesOf(next);
  const node = rawNodes(next)[index];
  if (!isObject(node)) return flow;
  const from = nameOf(node);
  node.node_name = to;
  if (!from || nodes.some((n, i) => i !== index && nameOf(n) === from)) return next;
  for (const n of nodes) for (const fn of Array.isArray(n.functions) ? (n.functions as unknown[]).filter(isObject) : []) if (fn.transition_to === from) fn.transition_to = to;
  if (next.initial_node === from) next.initial_node = to;
  return next;
}

/**
 * Deletes the node at `index`; when no other node has its name, the functions that led to it lose
 * their transition (they stay, with their hooks).
 */
export function deleteNode(flow: FlowDoc, index: number): FlowDoc {
  const next = copy(flow);
  const name = nameOf(nodesOf(next)[index] ?? {});
  next.nodes = rawNodes(next).filter((_, i) => i !== index);
  const nodes = nodesOf(next);
  if (nodes.some((n) => nameOf(n) === name)) return next;
  for (const node of nodes) for (const fn of Array.isArray(node.functions) ? (node.functions as unknown[]).filter(isObject) : []) if (fn.transition_to === name) delete fn.transition_to;
  if (next.initial_node === name) next.initial_node = nodes[0] ? nameOf(nodes[0]) : '';
  return next;
}

/** Adds a function to `from` that moves the conversation to `to`; returns the function's name. */
export function addTransition(flow: FlowDoc, from: string, to: string): { flow: FlowDoc; name: string } {
  const next = copy(flow);
  const node = (rawNodes(next) as unknown[]).find((n): n is Json => isObject(n) && nameOf(n) === from);
  if (!node) return { flow, name: '' };
  const functions = Array.isArray(node.functions) ? (node.functions as Json[]) : [];
  const base = `go_to_${to}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 60);
  const name = freeName(base, functions.map((f) => (typeof f.name === 'string' ? f.name : '')));
  functions.push({ name, description: `Move on to ${to} when it is time`, properties: {}, required: [], transition_to: to });
  node.functions = functions;
  return { flow: next, name };
}

/** The flow with a copy of the node at `index` changed by `mutate`. */
export function updateNode(flow: FlowDoc, index: number, mutate: (node: Json) => void): FlowDoc {
  const next = copy(flow);
  const node = rawNodes(next)[index];
  if (isObject(node)) mutate(node);
  return next;
}

/** The 1-based line and column of a character offset in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

export interface SyntaxProblem {
  message: string;
  line: number;
  column: number;
  offset: number;
}

/** Parses the JSON view: the flow, or where and why it is not JSON (line and column, 1-based). */
export function parseFlowText(text: string): { flow?: FlowDoc; syntax?: SyntaxProblem } {
  try {
    const flow = JSON.parse(text) as unknown;
    if (!isObject(flow)) return { flow: flow as FlowDoc };
    return { flow };
  } catch (err) {
    const raw = (err as Error).message;
    // Engines say where in different ways: "at position 42", "(line 3 column 5)", or nothing when
    // the text ends too soon.
    const lc = /line (\d+) column (\d+)/.exec(raw);
    const pos = /position (\d+)/.exec(raw);
    let offset = pos ? Number(pos[1]) : text.length;
    let where = lineColumn(text, offset);
    if (lc) {
      where = { line: Number(lc[1]), column: Number(lc[2]) };
      if (!pos) offset = text.split('\n').slice(0, where.line - 1).reduce((n, l) => n + l.length + 1, 0) + where.column - 1;
    }
    const message = raw.replace(/\s*\(line \d+ column \d+\)/, '').replace(/ in JSON at position \d+/, '').replace(/^JSON\.parse: /, '');
    return { syntax: { message, line: where.line, column: where.column, offset } };
  }
}
