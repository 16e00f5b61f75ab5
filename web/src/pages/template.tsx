/**
 * One template: its name and owner, its flow in the flow editor (the graph, the node forms and the
 * JSON view, checked as you type by the validator the API runs; the API's own 400 answers shown the
 * same way on save), "Test in browser" and its test suite. Leaving with unsaved changes asks first.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError } from '../api/client.js';
import { templates, tenants } from '../api/endpoints.js';
import type { AgentChoice, Template } from '../api/types.js';
import { AgentPanel } from '../components/agent-panel.js';
import { FlowEditor } from '../components/flow-editor.js';
import { TestCall } from '../components/test-call.js';
import { TemplateTests } from '../components/template-tests.js';
import { PushLead } from '../components/push-lead.js';
import { Card, ErrorNote, Field, PageHeader, Spinner, toast } from '../components/ui.js';
import { NamedSelect } from '../components/list-page.js';
import { useLoad } from '../lib/use.js';
import { useHistory } from '../lib/history.js';
import { parseFlowText } from '../lib/flow-edit.js';
import { useUnsavedGuard } from '../lib/unsaved.js';
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
  const [text, setText] = useState(() => JSON.stringify(EXAMPLE_FLOW, null, 2));
  const [agent, setAgent] = useState<AgentChoice>({});
  // What the server holds (or, for a new template, what the page started with): the page is
  // "unsaved" while it differs.
  const [saved, setSaved] = useState(() => ({ name: '', merchantId, text, agent: '{}' }));
  const history = useHistory(text);
  const [saveError, setSaveError] = useState<ApiError | Error>();
  const [busy, setBusy] = useState(false);
  const [pushing, setPushing] = useState(false);
  // Which template the editor holds: until its flow is in, the page shows a spinner rather than
  // the example flow a new template starts with.
  const [shown, setShown] = useState<string>();
  const testCard = useRef<HTMLDivElement>(null);
  // What the last save sent: its answer replaces only the fields nobody has changed since.
  const sent = useRef<{ name: string; merchantId: string; text: string; agent: string } | undefined>(undefined);
  // The editor's values as of the last render, for the effect below.
  const current = useRef({ name, merchantId, text, agent: JSON.stringify(agent) });
  current.current = { name, merchantId, text, agent: JSON.stringify(agent) };

  useEffect(() => {
    const t = loaded.data;
    if (!t) return;
    const json = JSON.stringify(t.flow, null, 2);
    const stored = { name: t.name, merchantId: t.merchant_id ?? '', text: json, agent: JSON.stringify(t.agent ?? {}) };
    // A template opened afresh fills the editor and starts a new history. The answer to a save
    // continues it, but an edit made while the save was on its way stays: it is not saved yet.
    const fresh = shown !== t.id;
    const untouched = (k: keyof typeof stored) => fresh || current.current[k] === sent.current?.[k];
    setResellerId(t.reseller_id);
    if (untouched('name')) setName(t.name);
    if (untouched('merchantId')) setMerchantId(stored.merchantId);
    if (untouched('agent')) setAgent(t.agent ?? {});
    if (fresh) history.reset(json);
    else if (untouched('text')) history.record(json);
    if (untouched('text')) setText(json);
    setSaved(stored);
    setShown(t.id);
  }, [loaded.data]);
  useEffect(() => {
    if (query.test && testCard.current) testCard.current.scrollIntoView({ block: 'start' });
  }, [query.test, loaded.data]);
  useEffect(() => {
    if (creating && !resellerId && resellers.data?.data[0]) setResellerId(resellers.data.data[0].id);
  }, [resellers.data]);

  const dirty = writable && (text !== saved.text || name !== saved.name || merchantId !== saved.merchantId || JSON.stringify(agent) !== saved.agent);
  useUnsavedGuard(dirty, 'This template has unsaved changes. Leave and lose them?');
  const syntax = useMemo(() => !!parseFlowText(text).syntax, [text]);
  const api = useMemo(() => (saveError instanceof ApiError ? (saveError.problem.errors ?? []) : []), [saveError]);
  // The API's answer was about the flow as it was; the editor checks the new one.
  const clearSaveError = useCallback(() => setSaveError(undefined), []);

  const save = async () => {
    if (syntax) return;
    setBusy(true);
    setSaveError(undefined);
    try {
      const body = { name: name.trim(), reseller_id: resellerId, merchant_id: merchantId || null, flow: JSON.parse(text) as unknown, agent: Object.keys(agent).length ? agent : null };
      sent.current = { name, merchantId, text, agent: JSON.stringify(agent) };
      const answer: Template = creating ? await templates.create(body) : await templates.replace(id, { id, ...body });
      setSaved(sent.current);
      toast('Template saved.');
      if (creating) route(`${BASE}/templates/${answer.id}`, true);
      else loaded.replace(answer);
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

  // Typing in the editor re-renders the page; the cards below only change with the template.
  const cards = useMemo(() => {
    const tpl = loaded.data;
    if (!tpl) return null;
    return (
      <>
        <div ref={testCard}>
          <Card title="Test in browser" id="test">
            <p class="hint">Talk to this template through your microphone. The call is a WebRTC session with Dialer; the transcript, nodes and function calls appear as they happen.</p>
            <TestCall template={tpl} />
          </Card>
        </div>
        <Card title="Tests" id="tests">
          <TemplateTests template={tpl} />
        </Card>
      </>
    );
  }, [loaded.data]);

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
        {dirty && (
          <span class="badge badge-warn" id="unsaved" role="status">
            Unsaved changes
          </span>
        )}
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
          <button type="button" class="primary" id="save-template" onClick={save} disabled={busy || syntax || !name.trim()}>
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
      <AgentPanel value={agent} onChange={setAgent} writable={writable} errorAt={(path) => fieldError(path)} />
      <FlowEditor text={text} setText={setText} history={history} writable={writable} apiProblems={api} onEdited={clearSaveError} agent={agent} />
      {cards}
      {pushing && t && <PushLead templates={[t]} templateId={t.id} onClose={() => setPushing(false)} onPushed={(leadId) => route(`${BASE}/leads/${leadId}`)} />}
    </div>
  );
}
