/**
 * A template's test suite: its cases (callee steps and expectations), a case added in forms (or as
 * JSON), one drafted from a real call (`?from_lead=` a lead of the template), "Run the suite", and the latest run: each case passed or failed, each expectation with its evidence,
 * the transcript and recording of the call, and the previous run's verdict beside it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { leads, templateTests } from '../api/endpoints.js';
import { caseFromCall } from '../lib/case-from-call.js';
import { CaseForm } from './case-form.js';
import type { Template, TestCaseBody, TestRun } from '../api/types.js';
import { useLoad } from '../lib/use.js';
import { can } from '../session.js';
import { Badge, ErrorNote, Spinner, toast } from './ui.js';
import { RecordingPlayer } from './recording.js';

const EXAMPLE_CASE: TestCaseBody = {
  name: 'agrees',
  variables: { customer_name: 'Ana' },
  callee: { steps: [{ wait_for_agent: true }, { say: 'Yes, that works for me.' }, { wait_for_agent: true }, { hang_up: true }], max_seconds: 60 },
  expectations: [{ kind: 'says', text: 'goodbye' }],
};

type Step = TestCaseBody['callee']['steps'][number];
const stepText = (s: Step) =>
  'say' in s ? `says “${s.say}”` : 'wait_for_agent' in s ? 'waits for the agent' : 'silence_ms' in s ? `silent ${s.silence_ms} ms` : 'keys' in s ? `presses ${s.keys}` : 'hangs up';

export function TemplateTests({ template }: { template: Template }) {
  const writable = can('templates', 'write');
  const cases = useLoad((signal) => templateTests.list(template.id, signal), [template.id]);
  const runs = useLoad((signal) => templateTests.runs(template.id, signal), [template.id]);
  const [run, setRun] = useState<TestRun>();
  const [draft, setDraft] = useState<TestCaseBody>();
  const { query } = useLocation();
  const card = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const latest = run ?? runs.data?.data[0];
  const previous = runs.data?.data.find((r) => r.id !== latest?.id && r.status !== 'running');

  // A running run is followed until it ends.
  useEffect(() => {
    if (latest?.status !== 'running') return;
    const timer = setTimeout(() => void templateTests.getRun(latest.id).then(setRun, setError), 1000);
    return () => clearTimeout(timer);
  }, [latest]);

  // A case drafted from a lead's call, for a person to review and save.
  useEffect(() => {
    const leadId = query.from_lead;
    if (!leadId || !writable) return;
    const ctl = new AbortController();
    leads.get(leadId, ctl.signal).then((lead) => {
      setDraft(caseFromCall(lead as unknown as Parameters<typeof caseFromCall>[0]));
      card.current?.scrollIntoView({ block: 'start' });
    }, (err: Error) => err.name !== 'AbortError' && setError(err));
    return () => ctl.abort();
  }, [query.from_lead]);

  const start = async () => {
    setError(undefined);
    setBusy(true);
    try {
      setRun(await templateTests.run(template.id));
      runs.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const add = async (body: TestCaseBody) => {
    setError(undefined);
    try {
      await templateTests.create(template.id, body);
      setDraft(undefined);
      cases.reload();
      toast(`Added the case ${body.name}.`);
    } catch (err) {
      setError(err);
    }
  };

  const remove = async (id: string, name: string) => {
    if (!confirm(`Delete the case ${name}?`)) return;
    await templateTests.delete(template.id, id).then(cases.reload, setError);
  };

  if (cases.loading && !cases.data) return <Spinner />;
  const list = cases.data?.data ?? [];
  const before = (name: string) => previous?.cases.find((c) => c.name === name)?.status;
  return (
    <div class="template-tests" ref={card}>
      <div class="toolbar">
        <span class="hint">
          Each case is played as a call to the sandbox line's simulated customer, who speaks its lines; the template answers as on a real call. Test leads never count in analytics.
        </span>
        {writable && (
          <>
            <button type="button" onClick={() => setDraft(draft === undefined ? EXAMPLE_CASE : undefined)}>
              {draft === undefined ? 'Add a case' : 'Cancel'}
            </button>
            <button type="button" class="primary" id="run-tests" onClick={start} disabled={busy || list.length === 0 || latest?.status === 'running'}>
              {latest?.status === 'running' ? 'Running…' : 'Run the suite'}
            </button>
          </>
        )}
      </div>
      <ErrorNote error={error ?? cases.error} />
      {draft !== undefined && <CaseForm key={draft.name} initial={draft} onSave={add} onCancel={() => setDraft(undefined)} />}
      {list.length === 0 ? (
        <p class="empty">No test cases yet.</p>
      ) : (
        <table class="table" id="test-cases">
          <thead>
            <tr>
              <th>Case</th>
              <th>The callee</th>
              <th>Expects</th>
              <th>Last run</th>
              {writable && <th />}
            </tr>
          </thead>
          <tbody>
            {list.map((c) => {
              const last = latest?.cases.find((r) => r.test_id === c.id);
              return (
                <tr key={c.id}>
                  <td>
                    <strong>{c.name}</strong>
                  </td>
                  <td class="muted">{c.callee.persona ? `persona: ${c.callee.persona}; goal: ${c.callee.goal ?? ''}` : c.callee.steps.map(stepText).join(', ') || 'stays silent'}</td>
                  <td>
                    {c.expectations.map((e, i) => (
                      <code key={i} class="chip">
                        {e.kind}
                      </code>
                    ))}
                  </td>
                  <td>{last ? <Badge value={last.status} tone={tone(last.status)} /> : <span class="muted">—</span>}</td>
                  {writable && (
                    <td>
                      <button type="button" class="link-button" onClick={() => void remove(c.id, c.name)}>
                        Delete
                      </button>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {latest && (
        <div class="test-run" id="test-run" data-run={latest.id} data-status={latest.status}>
          <h3>
            Run of {new Date(latest.created_at).toLocaleString()}: <Badge value={latest.status} tone={tone(latest.status)} /> {latest.passed} of {latest.total} passed
            {previous && <span class="muted"> · the run before: {previous.passed} of {previous.total}</span>}
          </h3>
          {latest.note && <p class="notice">{latest.note}</p>}
          {latest.cases.map((c, i) => (
            <details key={i} class="test-case" data-case={c.name} data-status={c.status} open={c.status === 'failed' || c.status === 'error'}>
              <summary>
                <Badge value={c.status} tone={tone(c.status)} /> <strong>{c.name}</strong>
                {c.outcome && (
                  <>
                    {' '}
                    <Badge kind="outcome" value={c.outcome} />
                  </>
                )}
                <span class="muted">
                  {c.duration_seconds !== null ? ` · ${c.duration_seconds} s` : ''}
                  {c.node_path.length ? ` · ${c.node_path.join(' → ')}` : ''}
                  {c.turn_latency_ms.length ? ` · slowest turn ${Math.max(...c.turn_latency_ms)} ms` : ''}
                  {c.cost !== null ? ` · cost ${c.cost}` : ''}
                  {before(c.name) && before(c.name) !== c.status ? ` · was ${before(c.name)}` : ''}
                </span>
              </summary>
              {c.error && <p class="error-text">{c.error}</p>}
              <ul class="expectations">
                {c.expectations.map((e, j) => (
                  <li key={j} class={e.passed === false ? 'failed' : e.passed ? 'passed' : 'unjudged'}>
                    <span class="mark">{e.passed === false ? '✗' : e.passed ? '✓' : '–'}</span> <code>{e.kind}</code> {e.detail}
                  </li>
                ))}
              </ul>
              {c.transcript.length > 0 && (
                <ol class="transcript">
                  {c.transcript.map((l, k) => (
                    <li key={k} class={`turn turn-${l.role === 'user' ? 'user' : 'agent'}`}>
                      <span class="turn-who">{l.role === 'user' ? 'Callee' : 'Agent'}</span>
                      <span class="turn-text">{l.content}</span>
                    </li>
                  ))}
                </ol>
              )}
              {c.call_id && c.recording_url && <RecordingPlayer callId={c.call_id} />}
            </details>
          ))}
        </div>
      )}
    </div>
  );
}

function tone(status: string): 'ok' | 'warn' | 'bad' | 'neutral' {
  return status === 'passed' ? 'ok' : status === 'failed' || status === 'error' ? 'bad' : status === 'running' || status === 'calling' ? 'warn' : 'neutral';
}
