/**
 * A test case drafted from a real call: the callee says again what the person said (waiting for
 * the agent between lines), with the lead's variables; it expects the same path through the nodes,
 * the same functions called and the same outcome. A draft for a person to review before saving.
 */
import type { TestCaseBody } from '../api/types.js';

type Expectation = TestCaseBody['expectations'][number];
type Step = TestCaseBody['callee']['steps'][number];

interface CallRecord {
  request_id: string;
  outcome: string | null;
  payload: Record<string, unknown>;
  metaData: Record<string, unknown>;
}

const list = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

export function caseFromCall(lead: CallRecord): TestCaseBody {
  const steps: Step[] = [];
  for (const turn of list<{ role?: unknown; content?: unknown }>(lead.metaData.transcription)) {
    const content = typeof turn.content === 'string' ? turn.content.trim() : '';
    if (!content) continue;
    if (turn.role === 'user') steps.push({ say: content.slice(0, 1000) });
    else if (!('wait_for_agent' in (steps[steps.length - 1] ?? {}))) steps.push({ wait_for_agent: true });
  }
  steps.push({ hang_up: true });

  const variables: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(lead.payload ?? {})) {
    // The test line calls its own number; only the conversation's values are kept.
    if (k === 'customer_mobile_number' || k === 'callback_url') continue;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') variables[k] = v;
  }

  const expectations: Expectation[] = [];
  const nodes = list<unknown>(lead.metaData.node_traversal).filter((n): n is string => typeof n === 'string' && n.length > 0);
  if (nodes.length) expectations.push({ kind: 'nodes', nodes, match: 'in_order' });
  const called = new Set(list<{ name?: unknown }>(lead.metaData.function_calls).map((c) => c.name).filter((n): n is string => typeof n === 'string'));
  for (const name of called) expectations.push({ kind: 'function_called', name });
  if (lead.outcome) expectations.push({ kind: 'outcome', equals: lead.outcome });

  return { name: `call ${lead.request_id}`.slice(0, 200), variables, callee: { steps, max_seconds: 120 }, expectations };
}
