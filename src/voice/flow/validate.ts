/**
 * Checking a flow written through the API: every problem found, each with a JSON pointer. Pure.
 */
import type { FieldError } from '../../lib/errors.js';
import { isE164 } from '../../lib/phone.js';
import { validateAnalysisSpec } from '../analysis.js';
import { ACTION_TYPES, BUILTIN_FUNCTIONS, FUNCTION_NAME, HTTP_METHODS, JSON_TYPES, MAX_HOOK_TIMEOUT_SECONDS, MAX_NODE_NAME_LENGTH, MESSAGE_ROLES } from './schema.js';
import { validateTurnTaking } from './turn-taking.js';

const FLOW_KEYS = ['initial_node', 'nodes', 'turn_taking', 'post_call_analysis'];
const NODE_KEYS = [
  'node_name',
  'role_messages',
  'task_messages',
  'functions',
  'pre_actions',
  'post_actions',
  'respond_immediately',
  'vad',
  'idle_timeout_seconds',
  'idle_prompt',
  'outcome',
  'turn_taking',
];
const MESSAGE_KEYS = ['role', 'content'];
const FUNCTION_KEYS = ['name', 'type', 'description', 'properties', 'required', 'transition_to', 'transfer_to_number', 'warm_transfer', 'hooks'];
const WARM_TRANSFER_KEYS = ['briefing', 'hold_message', 'declined_message', 'no_answer_message', 'callback_after_minutes'];
const BUILTIN_KEYS = ['name', 'type', 'description'];
const HOOK_KEYS = ['name', 'http_request'];
const HTTP_REQUEST_KEYS = ['url', 'method', 'headers', 'query_params', 'body', 'timeout'];
const VAD_KEYS = ['stop_secs'];
const ACTION_KEYS: Record<(typeof ACTION_TYPES)[number], string[]> = {
  tts_say: ['type', 'text'],
  end_conversation: ['type', 'outcome'],
  function: ['type', 'name'],
};

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: Obj, key: string) => Object.prototype.hasOwnProperty.call(o, key) && o[key] !== undefined;

/** JSON pointer segment escaping (RFC 6901). */
const seg = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

/** The offending value, short enough for a message. */
function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const list = (values: readonly string[]) => (values.length > 0 ? values.join(', ') : 'none');

class Report {
  readonly errors: FieldError[] = [];
  /** Why a hook URL may not be called (the outbound URL policy), or undefined. */
  constructor(readonly urlRefusal: (url: string) => string | undefined = () => undefined) {}

  add(path: string, message: string): void {
    this.errors.push({ path, message });
  }

  object(path: string, value: unknown, what = 'an object'): value is Obj {
    if (isObject(value)) return true;
    this.add(path, `must be ${what}, got ${show(value)}`);
    return false;
  }

  array(path: string, value: unknown): value is unknown[] {
    if (Array.isArray(value)) return true;
    this.add(path, `must be an array, got ${show(value)}`);
    return false;
  }

  /** Unknown keys are refused: they are typos more often than not. */
  knownKeys(path: string, o: Obj, known: readonly string[]): void {
    for (const key of Object.keys(o)) {
      if (!known.includes(key)) this.add(`${path}/${seg(key)}`, `is not a known field (known: ${known.join(', ')})`);
    }
  }

  /** A required (or, when present, optional) string; `nonBlank` refuses "" and whitespace. */
  string(path: string, o: Obj, key: string, opts: { required?: boolean; nonBlank?: boolean } = {}): string | undefined {
    const at = `${path}/${seg(key)}`;
    if (!has(o, key)) {
      if (opts.required) this.add(at, 'is required');
      return undefined;
    }
    const value = o[key];
    if (typeof value !== 'string') {
      this.add(at, `must be a string, got ${show(value)}`);
      return undefined;
    }
    if (opts.nonBlank && value.trim() === '') {
      this.add(at, `must not be blank, got ${show(value)}`);
      return undefined;
    }
    return value;
  }

  positiveNumber(path: string, o: Obj, key: string, max?: number): void {
    if (!has(o, key)) return;
    const value = o[key];
    const at = `${path}/${seg(key)}`;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      this.add(at, `must be a positive number, got ${show(value)}`);
    } else if (max !== undefined && value > max) {
      this.add(at, `must be at most ${max}, got ${show(value)}`);
    }
  }
}

/**
 * Checks a template flow. Returns every problem found (empty when the flow is valid), each with a
 * JSON pointer from the request body root, such as `/flow/nodes/2/functions/0/transition_to`.
 */
/**
 * `urlRefusal`: the outbound URL policy's write-time check, applied to every hook URL (a literal
 * refused address answers 400 naming the hook's url).
 */
export function validateFlow(flow: unknown, urlRefusal?: (url: string) => string | undefined): FieldError[] {
  const r = new Report(urlRefusal);
  const path = '/flow';
  if (!r.object(path, flow, 'an object with initial_node and nodes')) return r.errors;
  r.knownKeys(path, flow, FLOW_KEYS);
  if (has(flow, 'post_call_analysis')) for (const e of validateAnalysisSpec(flow.post_call_analysis, `${path}/post_call_analysis`)) r.add(e.path, e.message);

  const nodes = has(flow, 'nodes') ? flow.nodes : undefined;
  const nodeNames: string[] = [];
  if (nodes === undefined) r.add(`${path}/nodes`, 'is required');
  else if (r.array(`${path}/nodes`, nodes)) {
    if (nodes.length === 0) r.add(`${path}/nodes`, 'must hold at least one node');
    // Names first, so transitions can be checked against every node, earlier or later.
    nodes.forEach((node, i) => {
      const at = `${path}/nodes/${i}`;
      if (!r.object(at, node)) return;
      const name = r.string(at, node, 'node_name', { required: true, nonBlank: true });
      if (name === undefined) return;
      if (name.length > MAX_NODE_NAME_LENGTH) {
        r.add(`${at}/node_name`, `must be at most ${MAX_NODE_NAME_LENGTH} characters, got ${show(name)}`);
      }
      const earlier = nodeNames.indexOf(name);
      if (earlier >= 0) r.add(`${at}/node_name`, `${show(name)} is already the name of another node (node_name must be unique)`);
      nodeNames.push(name);
    });
    nodes.forEach((node, i) => {
      if (isObject(node)) validateNode(r, `${path}/nodes/${i}`, node, nodeNames);
    });
  }

  if (has(flow, 'turn_taking')) r.errors.push(...validateTurnTaking(`${path}/turn_taking`, flow.turn_taking));
  const initial = r.string(path, flow, 'initial_node', { required: true, nonBlank: true });
  if (initial !== undefined && Array.isArray(nodes) && !nodeNames.includes(initial)) {
    r.add(`${path}/initial_node`, `${show(initial)} is not the name of any node (nodes: ${list(nodeNames)})`);
  }
  return r.errors;
}

function validateNode(r: Report, path: string, node: Obj, nodeNames: string[]): void {
  r.knownKeys(path, node, NODE_KEYS);
  if (has(node, 'role_messages')) validateMessages(r, `${path}/role_messages`, node.role_messages);
  if (!has(node, 'task_messages')) r.add(`${path}/task_messages`, 'is required');
  else validateMessages(r, `${path}/task_messages`, node.task_messages);

  const functions = new Map<string, Obj>();
  if (has(node, 'functions') && r.array(`${path}/functions`, node.functions)) {
    node.functions.forEach((fn, i) => {
      const at = `${path}/functions/${i}`;
      if (!r.object(at, fn)) return;
      const name = validateFunction(r, at, fn, nodeNames);
      if (name === undefined) return;
      if (functions.has(name)) r.add(`${at}/name`, `${show(name)} is already the name of another function of this node`);
      else functions.set(name, fn);
    });
  }
  for (const key of ['pre_actions', 'post_actions']) {
    if (has(node, key) && r.array(`${path}/${key}`, node[key])) {
      (node[key] as unknown[]).forEach((action, i) => validateAction(r, `${path}/${key}/${i}`, action, functions));
    }
  }

  if (has(node, 'respond_immediately') && typeof node.respond_immediately !== 'boolean') {
    r.add(`${path}/respond_immediately`, `must be a boolean, got ${show(node.respond_immediately)}`);
  }
  if (has(node, 'vad') && r.object(`${path}/vad`, node.vad)) {
    r.knownKeys(`${path}/vad`, node.vad, VAD_KEYS);
    r.positiveNumber(`${path}/vad`, node.vad, 'stop_secs');
  }
  r.positiveNumber(path, node, 'idle_timeout_seconds');
  r.string(path, node, 'idle_prompt', { nonBlank: true });
  r.string(path, node, 'outcome', { nonBlank: true });
  if (has(node, 'turn_taking')) r.errors.push(...validateTurnTaking(`${path}/turn_taking`, node.turn_taking));
}

function validateWarmTransfer(r: Report, path: string, warm: unknown, hasNumber: boolean): void {
  if (!hasNumber) r.add(path, 'needs transfer_to_number (the human to brief) beside it');
  if (!r.object(path, warm, 'an object (briefing, hold_message, declined_message, no_answer_message, callback_after_minutes)')) return;
  r.knownKeys(path, warm, WARM_TRANSFER_KEYS);
  for (const key of WARM_TRANSFER_KEYS.slice(0, 4)) r.string(path, warm, key, { nonBlank: true });
  if (has(warm, 'callback_after_minutes')) {
    const minutes = warm.callback_after_minutes;
    if (typeof minutes !== 'number' || !Number.isInteger(minutes) || minutes < 1 || minutes > 10080) {
      r.add(`${path}/callback_after_minutes`, `must be a whole number of minutes from 1 to 10080 (a week), got ${show(minutes)}`);
    }
  }
}

function validateMessages(r: Report, path: string, messages: unknown): void {
  if (!r.array(path, messages)) return;
  messages.forEach((message, i) => {
    const at = `${path}/${i}`;
    if (!r.object(at, message, 'an object with role and content')) return;
    r.knownKeys(at, message, MESSAGE_KEYS);
    const role = r.string(at, message, 'role', { required: true });
    if (role !== undefined && !(MESSAGE_ROLES as readonly string[]).includes(role)) {
      r.add(`${at}/role`, `${show(role)} is not one of ${MESSAGE_ROLES.join(', ')}`);
    }
    r.string(at, message, 'content', { required: true });
  });
}

/** Returns the function's name when it is valid, for the uniqueness check. */
function validateFunction(r: Report, path: string, fn: Obj, nodeNames: string[]): string | undefined {
  const type = r.string(path, fn, 'type');
  if (type !== undefined && type !== 'builtin') r.add(`${path}/type`, `${show(type)} is not a function type (the one type is builtin; leave it out for your own function)`);
  if (type === 'builtin') {
    r.knownKeys(path, fn, BUILTIN_KEYS);
    const name = r.string(path, fn, 'name', { required: true });
    r.string(path, fn, 'description');
    if (name === undefined) return undefined;
    if (!(BUILTIN_FUNCTIONS as readonly string[]).includes(name)) {
      r.add(`${path}/name`, `${show(name)} is not a built-in function (${BUILTIN_FUNCTIONS.join(', ')})`);
      return undefined;
    }
    return name;
  }
  r.knownKeys(path, fn, FUNCTION_KEYS);
  let name = r.string(path, fn, 'name', { required: true });
  if (name !== undefined && !FUNCTION_NAME.test(name)) {
    r.add(`${path}/name`, `${show(name)} is not a valid function name: use letters, digits, _ and -, start with a letter or _, at most 64 characters`);
    name = undefined;
  }
  r.string(path, fn, 'description');

  const propertyNames: string[] = [];
  if (has(fn, 'properties') && r.object(`${path}/properties`, fn.properties, 'an object of JSON-schema properties')) {
    for (const [key, schema] of Object.entries(fn.properties)) {
      const at = `${path}/properties/${seg(key)}`;
      propertyNames.push(key);
      if (!r.object(at, schema, 'a JSON-schema object with a type')) continue;
      if (!has(schema, 'type')) {
        r.add(`${at}/type`, 'is required');
        continue;
      }
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      if (types.length === 0 || !types.every((t) => typeof t === 'string' && JSON_TYPES.includes(t))) {
        r.add(`${at}/type`, `${show(schema.type)} is not a JSON-schema type (${JSON_TYPES.join(', ')})`);
      }
    }
  }
  if (has(fn, 'required') && r.array(`${path}/required`, fn.required)) {
    fn.required.forEach((key, i) => {
      if (typeof key !== 'string') r.add(`${path}/required/${i}`, `must be a string, got ${show(key)}`);
      else if (!propertyNames.includes(key)) r.add(`${path}/required/${i}`, `${show(key)} is not a key of properties (${list(propertyNames)})`);
    });
  }

  const target = r.string(path, fn, 'transition_to', { nonBlank: true });
  if (target !== undefined && !nodeNames.includes(target)) {
    r.add(`${path}/transition_to`, `${show(target)} is not the name of any node (nodes: ${list(nodeNames)})`);
  }

  const transfer = r.string(path, fn, 'transfer_to_number', { nonBlank: true });
  if (transfer !== undefined && !isE164(transfer) && !/^\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(transfer)) {
    r.add(`${path}/transfer_to_number`, `must be an E.164 number or one {variable}, got ${show(transfer)}`);
  }
  if (has(fn, 'warm_transfer')) validateWarmTransfer(r, `${path}/warm_transfer`, fn.warm_transfer, has(fn, 'transfer_to_number'));

  if (has(fn, 'hooks') && r.array(`${path}/hooks`, fn.hooks)) {
    const hookNames = new Set<string>();
    fn.hooks.forEach((hook, i) => {
      const at = `${path}/hooks/${i}`;
      if (!r.object(at, hook, 'an object with name and http_request')) return;
      r.knownKeys(at, hook, HOOK_KEYS);
      const hookName = r.string(at, hook, 'name', { required: true, nonBlank: true });
      if (hookName !== undefined) {
        if (hookNames.has(hookName)) r.add(`${at}/name`, `${show(hookName)} is already the name of another hook of this function`);
        hookNames.add(hookName);
      }
      if (!has(hook, 'http_request')) r.add(`${at}/http_request`, 'is required');
      else if (r.object(`${at}/http_request`, hook.http_request)) validateHttpRequest(r, `${at}/http_request`, hook.http_request);
    });
  }
  return name;
}

/** A URL is checked with its `{variable}` placeholders stood in for by a plain word. */
function isHttpUrl(url: string): boolean {
  if (!/^https?:\/\//i.test(url)) return false;
  try {
    const parsed = new URL(url.replace(/\{[^{}]*\}/g, 'x'));
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '';
  } catch {
    return false;
  }
}

function validateHttpRequest(r: Report, path: string, req: Obj): void {
  r.knownKeys(path, req, HTTP_REQUEST_KEYS);
  const url = r.string(path, req, 'url', { required: true });
  if (url !== undefined && !isHttpUrl(url)) r.add(`${path}/url`, `${show(url)} is not an absolute http(s) URL`);
  else if (url !== undefined) {
    const refusal = r.urlRefusal(url);
    if (refusal) r.add(`${path}/url`, refusal);
  }
  const method = r.string(path, req, 'method');
  if (method !== undefined && !(HTTP_METHODS as readonly string[]).includes(method)) {
    r.add(`${path}/method`, `${show(method)} is not one of ${HTTP_METHODS.join(', ')}`);
  }
  if (has(req, 'headers') && r.object(`${path}/headers`, req.headers, 'an object of strings')) {
    for (const [key, value] of Object.entries(req.headers)) {
      if (typeof value !== 'string') r.add(`${path}/headers/${seg(key)}`, `must be a string, got ${show(value)}`);
    }
  }
  if (has(req, 'query_params') && r.object(`${path}/query_params`, req.query_params)) {
    for (const [key, value] of Object.entries(req.query_params)) {
      if (!['string', 'number', 'boolean'].includes(typeof value)) {
        r.add(`${path}/query_params/${seg(key)}`, `must be a string, number or boolean, got ${show(value)}`);
      }
    }
  }
  if (has(req, 'body')) r.object(`${path}/body`, req.body);
  r.positiveNumber(path, req, 'timeout', MAX_HOOK_TIMEOUT_SECONDS);
}

function validateAction(r: Report, path: string, action: unknown, functions: Map<string, Obj>): void {
  if (!r.object(path, action, 'an object with a type')) return;
  const type = r.string(path, action, 'type', { required: true });
  if (type === undefined) return;
  if (!(ACTION_TYPES as readonly string[]).includes(type)) {
    r.add(`${path}/type`, `${show(type)} is not one of ${ACTION_TYPES.join(', ')}`);
    return;
  }
  const kind = type as (typeof ACTION_TYPES)[number];
  r.knownKeys(path, action, ACTION_KEYS[kind]);
  if (kind === 'tts_say') r.string(path, action, 'text', { required: true, nonBlank: true });
  if (kind === 'end_conversation') r.string(path, action, 'outcome', { nonBlank: true });
  if (kind === 'function') {
    const name = r.string(path, action, 'name', { required: true, nonBlank: true });
    if (name === undefined) return;
    const fn = functions.get(name);
    if (!fn) {
      r.add(`${path}/name`, `${show(name)} is not the name of a function of this node (functions: ${list([...functions.keys()])})`);
    } else if (fn.type === 'builtin') {
      r.add(`${path}/name`, `${show(name)} is a built-in function, which only the LLM calls (an action cannot)`);
    } else if (Array.isArray(fn.required) && fn.required.length > 0) {
      r.add(`${path}/name`, `${show(name)} has required arguments (${fn.required.map(String).join(', ')}), which an action cannot supply`);
    }
  }
}

