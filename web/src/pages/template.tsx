/**
 * One template: its flow in a JSON editor checked as you type by the same validator the API runs
 * (problems listed under the node they concern, and that node outlined in the graph), the API's
 * own 400 answers shown the same way on save, the flow as a graph, and "Test in browser".
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError } from '../api/client.js';
import { templates, tenants } from '../api/endpoints.js';
import type { Template } from '../api/types.js';
import { validateFlow } from '../../../src/voice/flow/validate.js';
import { FlowGraph } from '../components/flow-graph.js';
import { TestCall } from '../components/test-call.js';
import { TemplateTests } from '../components/template-tests.js';
import { PushLead } from '../components/push-lead.js';
import { Card, ErrorNote, Field, PageHeader, Spinner, toast } from '../components/ui.js';
import { NamedSelect } from '../components/list-page.js';
import { useLoad } from '../lib/use.js';
import { BASE, can, session } from '../session.js';

const EXAMPLE_FLOW = {
  initial_node: 'greet',
  nodes: [
    {
      node_name: 'greet',
      role_messages: [{ role: 'system', content: 'You are a friendly assistant calling {customer_name} for Acme. Keep answers short.' }],
      task_messages: [{ role: 'system', content: 'Ask {customer_name} to confirm the appointment on {appointment_date}.' }],
      functions: [
        { name: 'confirm', description: 'The customer confirmed', properties: {}, required: [], transition_to: 'goodbye' },
        { name: 'reschedule', description: 'The customer wants another date', properties: { date: { type: 'string' } }, required: ['date'], transition_to: 'goodbye' },
      ],
      respond_immediately: true,
    },
    {
      node_name: 'goodbye',
      task_messages: [{ role: 'system', content: 'Thank the customer and say goodbye.' }],
      pre_actions: [{ type: 'tts_say', text: 'Thank you, goodbye!' }, { type: 'end_conversation', outcome: 'confirmed' }],
    },
  ],
};

interface Problem {
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

function parse(text: string): { flow?: unknown; syntax?: string } {
  try {
    return { flow: JSON.parse(text) };
  } catch (err) {
    return { syntax: (err as Error).message };
  }
}

export default function TemplatePage({ id }: { id: string }) {
  const creating = id === 'new';
  const { query, route } = useLocation();
  const me = session.get()!.me;
  const loaded = useLoad((signal) => (creating ? Promise.resolve(undefined) : templates.get(id, signal)), [id]);
  const resellers = useLoad((signal) => (me.role === 'admin' ? tenants.resellers(signal) : Promise.resolve(undefined)), []);
  const merchants = useLoad((signal) => (can('merchants', 'read') ? tenants.merchants(signal) : Promise.resolve(undefined)), []);
  const writable = can('templates', 'write');

  const [name, setName] = useState('');
  const [resellerId, setResellerId] = useState(me.reseller_id ?? '');
  const [merchantId, setMerchantId] = useState<string>(me.role === 'merchant' ? (me.merchant_id ?? '') : '');
  const [text, setText] = useState(JSON.stringify(EXAMPLE_FLOW, null, 2));
  const [checked, setChecked] = useState(text);
  const [saveError, setSaveError] = useState<ApiError | Error>();
  const [busy, setBusy] = useState(false);
  const [pushing, setPushing] = useState(false);
  // Which template the editor holds: until its flow is in, the page shows a spinner rather than
  // the example flow a new template starts with.
  const [shown, setShown] = useState<string>();
  const editor = useRef<HTMLTextAreaElement>(null);
  const testCard = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const t = loaded.data;
    if (!t) return;
    setName(t.name);
    setResellerId(t.reseller_id);
    setMerchantId(t.merchant_id ?? '');
    const json = JSON.stringify(t.flow, null, 2);
    setText(json);
    setChecked(json);
    setShown(t.id);
  }, [loaded.data]);
  useEffect(() => {
    if (query.test && testCard.current) testCard.current.scrollIntoView({ block: 'start' });
  }, [query.test, loaded.data]);
  // Checked a moment after typing stops, so typing stays smooth.
  useEffect(() => {
    const timer = setTimeout(() => setChecked(text), 200);
    return () => clearTimeout(timer);
  }, [text]);
  useEffect(() => {
    if (creating && !resellerId && resellers.data?.data[0]) setResellerId(resellers.data.data[0].id);
  }, [resellers.data]);

  const parsed = useMemo(() => parse(checked), [checked]);
  const local: Problem[] = useMemo(() => (parsed.syntax ? [] : validateFlow(parsed.flow)), [parsed]);
  const api: Problem[] = saveError instanceof ApiError ? (saveError.problem.errors ?? []) : [];
  const problems = [...local, ...api.filter((a) => !local.some((l) => l.path === a.path && l.message === a.message))];
  const byNode = useMemo(() => {
    const m = new Map<string, number>();
    for (const p of problems) {
      const node = nodeOf(p.path, parsed.flow);
      if (node) m.set(node, (m.get(node) ?? 0) + 1);
    }
    return m;
  }, [JSON.stringify(problems), parsed]);
  const grouped = useMemo(() => {
    const groups = new Map<string, Problem[]>();
    for (const p of problems) {
      const key = nodeOf(p.path, parsed.flow) ?? '';
      groups.set(key, [...(groups.get(key) ?? []), p]);
    }
    return groups;
  }, [JSON.stringify(problems), parsed]);

  /** Puts the cursor on the node's name in the editor. */
  const reveal = (node: string) => {
    const area = editor.current;
    if (!area) return;
    const at = area.value.indexOf(`"node_name": ${JSON.stringify(node)}`);
    if (at < 0) return;
    area.focus();
    area.setSelectionRange(at, at + node.length + 14);
    const line = area.value.slice(0, at).split('\n').length;
    area.scrollTop = Math.max(0, (line - 3) * 19);
  };

  const save = async () => {
    if (parsed.syntax) return;
    setBusy(true);
    setSaveError(undefined);
    try {
      const body = { name: name.trim(), reseller_id: resellerId, merchant_id: merchantId || null, flow: JSON.parse(text) as unknown };
      const saved: Template = creating ? await templates.create(body) : await templates.replace(id, { id, ...body });
      toast('Template saved.');
      if (creating) route(`${BASE}/templates/${saved.id}`, true);
      else loaded.reload();
    } catch (err) {
      setSaveError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    if (!confirm(`Delete the template ${name}? This cannot be undone.`)) return;
    try {
      await templates.delete(id);
      toast('Template deleted.');
      route(`${BASE}/templates`);
    } catch (err) {
      setSaveError(err as Error);
    }
  };

  if (loaded.error) return <ErrorNote error={loaded.error} />;
  if (!creating && (!loaded.data || shown !== id)) return <Spinner />;
  const t = loaded.data;
  const fieldError = (path: string) => (saveError instanceof ApiError ? saveError.at(path) : undefined);
  const otherErrors = saveError && !(saveError instanceof ApiError && (saveError.problem.errors?.length ?? 0) > 0);

  return (
    <div class="template-page">
      <PageHeader
        title={creating ? 'New template' : (t?.name ?? '')}
        subtitle={
          <>
            <a href={`${BASE}/templates`}>Templates</a>
            {t && (
              <>
                {' '}
                · <code>{t.id}</code>
              </>
            )}
          </>
        }
      >
        {!creating && can('leads', 'write') && (
          <button type="button" onClick={() => setPushing(true)}>
            Push a lead
          </button>
        )}
        {!creating && writable && (
          <button type="button" class="danger" onClick={remove}>
            Delete
          </button>
        )}
        {writable && (
          <button type="button" class="primary" id="save-template" onClick={save} disabled={busy || !!parsed.syntax || !name.trim()}>
            {busy ? 'Saving…' : creating ? 'Create template' : 'Save'}
          </button>
        )}
      </PageHeader>
      {writable && (
        <section class="card">
          <div class="form-grid">
            <Field label="Name" error={fieldError('/name')} hint="Unique in the reseller; leads name it when they are pushed">
              <input name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
            </Field>
            {me.role === 'admin' && creating && (
              <Field label="Reseller" error={fieldError('/reseller_id')}>
                <NamedSelect items={resellers.data?.data} value={resellerId} onChange={setResellerId} />
              </Field>
            )}
            {(me.role === 'admin' || me.role === 'reseller') && (
              <Field label="Belongs to" error={fieldError('/merchant_id')}>
                <select value={merchantId} onChange={(e) => setMerchantId(e.currentTarget.value)}>
                  <option value="">The whole reseller</option>
                  {merchants.data?.data
                    .filter((m) => m.reseller_id === resellerId)
                    .map((m) => (
                      <option key={m.id} value={m.id}>
                        merchant {m.name}
                      </option>
                    ))}
                </select>
              </Field>
            )}
          </div>
          {otherErrors && <ErrorNote error={saveError} />}
        </section>
      )}
      <div class="editor-grid">
        <Card title="Flow (JSON)" class="editor-card">
          <textarea
            ref={editor}
            class="json-editor"
            id="flow-editor"
            aria-label="The flow as JSON"
            spellcheck={false}
            readOnly={!writable}
            value={text}
            onInput={(e) => {
              setText(e.currentTarget.value);
              // The API's answer was about the text as it was; the editor checks the new one.
              setSaveError(undefined);
            }}
          />
          <p class="hint">
            Nodes have <code>node_name</code>, <code>task_messages</code>, optional <code>role_messages</code>, <code>functions</code> (with <code>transition_to</code> and{' '}
            <code>hooks</code>), <code>pre_actions</code> and <code>post_actions</code>. <code>{'{variable}'}</code> is filled from the lead's payload.
          </p>
        </Card>
        <div class="editor-side">
          <Card title={parsed.syntax ? 'Not valid JSON' : problems.length ? `${problems.length} problem${problems.length > 1 ? 's' : ''}` : 'No problems'} id="problems">
            {parsed.syntax ? (
              <p class="error-text">{parsed.syntax}</p>
            ) : problems.length === 0 ? (
              <p class="ok-text">The flow is valid{writable ? ': save it when you are ready' : ''}.</p>
            ) : (
              <div class="problems">
                {api.length > 0 && <p class="hint">The API refused the last save for these reasons:</p>}
                {[...grouped].map(([node, list]) => (
                  <div key={node} class="problem-group" data-node={node}>
                    <h3>
                      {node ? (
                        <button type="button" class="link-button" onClick={() => reveal(node)}>
                          Node {node}
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
          <Card title="Graph" id="graph">
            {parsed.syntax ? <p class="muted">Fix the JSON to see the graph.</p> : <FlowGraph flow={parsed.flow} problemsByNode={byNode} />}
          </Card>
        </div>
      </div>
      {t && (
        <div ref={testCard}>
          <Card title="Test in browser" id="test">
            <p class="hint">Talk to this template through your microphone. The call is a WebRTC session with Dialer; the transcript, nodes and function calls appear as they happen.</p>
            <TestCall template={t} />
          </Card>
        </div>
      )}
      {t && (
        <Card title="Tests" id="tests">
          <TemplateTests template={t} />
        </Card>
      )}
      {pushing && t && <PushLead templates={[t]} templateId={t.id} onClose={() => setPushing(false)} onPushed={(leadId) => route(`${BASE}/leads/${leadId}`)} />}
    </div>
  );
}
