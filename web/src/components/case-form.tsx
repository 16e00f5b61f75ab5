/**
 * A test case in forms: its name, the lead's variables, the callee's steps (say, wait for the
 * agent, stay silent, press keys, hang up) and the expectations, each kind with its own fields; or
 * the same case as JSON ("Edit as JSON"), for what the forms leave out (a function's arguments, a
 * hook's body). The API checks the case when it is saved; its refusal is shown by the caller.
 */
import { useState } from 'preact/hooks';
import type { Lead, TestCaseBody } from '../api/types.js';
import { BASE, can } from '../session.js';
import { RemoveButton } from './flow-fields.js';
import { Field } from './ui.js';

type Step = TestCaseBody['callee']['steps'][number];
type Expectation = TestCaseBody['expectations'][number];

const STEP_KINDS = { say: 'says', wait_for_agent: 'waits for the agent', silence_ms: 'stays silent (ms)', keys: 'presses keys', hang_up: 'hangs up' } as const;
type StepKind = keyof typeof STEP_KINDS;
const stepKind = (s: Step): StepKind => (Object.keys(STEP_KINDS) as StepKind[]).find((k) => k in s) ?? 'say';
const freshStep = (kind: StepKind): Step =>
  kind === 'say' ? { say: '' } : kind === 'wait_for_agent' ? { wait_for_agent: true } : kind === 'silence_ms' ? { silence_ms: 1000 } : kind === 'keys' ? { keys: '1' } : { hang_up: true };

const EXPECTATION_LABELS: Record<string, string> = {
  outcome: 'the outcome is',
  nodes: 'the nodes visited',
  function_called: 'a function is called',
  hook_request: 'a hook request is made',
  analysis_field: 'an analysis field is',
  says: 'the agent says',
  never_says: 'the agent never says',
  turn_latency: 'every turn starts within',
  judge: 'the LLM judges',
};

function ExpectationFields({ e, set }: { e: Expectation; set: (next: Expectation) => void }) {
  const text = (key: keyof Expectation, label: string, placeholder?: string) => (
    <Field label={label}>
      <input name={`expectation_${key}`} value={typeof e[key] === 'string' ? (e[key] as string) : e[key] === undefined ? '' : JSON.stringify(e[key])} placeholder={placeholder} onInput={(ev) => set({ ...e, [key]: ev.currentTarget.value || undefined })} />
    </Field>
  );
  switch (e.kind) {
    case 'outcome':
      return text('equals', 'Outcome', 'confirmed');
    case 'analysis_field':
      return (
        <>
          {text('field', 'Field')}
          {text('equals', 'Equals')}
        </>
      );
    case 'nodes':
      return (
        <>
          <Field label="Nodes (comma-separated)">
            <input name="expectation_nodes" value={(e.nodes ?? []).join(', ')} onInput={(ev) => set({ ...e, nodes: ev.currentTarget.value.split(',').map((n) => n.trim()).filter(Boolean) })} />
          </Field>
          <Field label="Match">
            <select name="expectation_match" value={e.match ?? 'in_order'} onChange={(ev) => set({ ...e, match: ev.currentTarget.value as Expectation['match'] })}>
              <option value="in_order">in this order</option>
              <option value="exact">exactly this path</option>
              <option value="set">each visited</option>
            </select>
          </Field>
        </>
      );
    case 'function_called':
      return (
        <>
          {text('name', 'Function')}
          <label class="field check">
            <input type="checkbox" name="expectation_called" checked={e.called !== false} onChange={(ev) => set({ ...e, called: ev.currentTarget.checked ? undefined : false })} />
            is called (unchecked: is not)
          </label>
        </>
      );
    case 'hook_request':
      return (
        <>
          {text('function', 'Function')}
          {text('hook', 'Hook')}
          {text('url_contains', 'URL contains')}
        </>
      );
    case 'says':
    case 'never_says':
      return text('text', 'Words');
    case 'turn_latency':
      return (
        <Field label="At most (ms)">
          <input name="expectation_max_ms" type="number" min="1" value={e.max_ms ?? ''} onInput={(ev) => set({ ...e, max_ms: ev.currentTarget.value ? Number(ev.currentTarget.value) : undefined })} />
        </Field>
      );
    case 'judge':
      return (
        <Field label="Criteria (plain words)" wide>
          <textarea name="expectation_criteria" rows={2} value={e.criteria ?? ''} onInput={(ev) => set({ ...e, criteria: ev.currentTarget.value || undefined })} />
        </Field>
      );
    default:
      return <p class="muted">Edit this expectation as JSON.</p>;
  }
}

export function CaseForm({ initial, onSave, onCancel }: { initial: TestCaseBody; onSave: (body: TestCaseBody) => void | Promise<void>; onCancel: () => void }) {
  const [c, setC] = useState<TestCaseBody>(initial);
  const [json, setJson] = useState<string>();
  const [jsonError, setJsonError] = useState<string>();
  const steps = c.callee.steps;
  const vars = Object.entries(c.variables ?? {});
  const setSteps = (next: Step[]) => setC({ ...c, callee: { ...c.callee, steps: next } });
  const persona = c.callee.persona !== undefined;
  /** Sets callee fields; an undefined value removes the field. */
  const setCallee = (patch: Partial<TestCaseBody['callee']>) => {
    const next: Record<string, unknown> = { ...c.callee, ...patch };
    for (const [k, v] of Object.entries(next)) if (v === undefined) delete next[k];
    setC({ ...c, callee: next as TestCaseBody['callee'] });
  };
  // A persona replaces the steps (a case has one or the other); back to a script starts afresh.
  const setPersona = (on: boolean) =>
    on ? setCallee({ steps: [], persona: '', goal: '' }) : setCallee({ steps: [freshStep('wait_for_agent'), freshStep('say')], persona: undefined, goal: undefined, max_turns: undefined });
  const setVars = (next: [string, string | number | boolean][]) => setC({ ...c, variables: Object.fromEntries(next) });
  const setExpectation = (i: number, e: Expectation) => setC({ ...c, expectations: c.expectations.map((x, j) => (j === i ? e : x)) });

  const toggleJson = () => {
    if (json === undefined) return setJson(JSON.stringify(c, null, 2));
    try {
      setC(JSON.parse(json) as TestCaseBody);
      setJson(undefined);
      setJsonError(undefined);
    } catch (err) {
      setJsonError((err as Error).message);
    }
  };
  const submit = (event: Event) => {
    event.preventDefault();
    if (json === undefined) return void onSave(c);
    try {
      void onSave(JSON.parse(json) as TestCaseBody);
    } catch (err) {
      setJsonError((err as Error).message);
    }
  };

  return (
    <form class="case-form" id="case-form" onSubmit={submit}>
      {json !== undefined ? (
        <Field label="Test case (JSON)" wide error={jsonError}>
          <textarea class="json-editor small" rows={14} value={json} onInput={(e) => setJson(e.currentTarget.value)} spellcheck={false} />
        </Field>
      ) : (
        <>
          <div class="form-grid">
            <Field label="Case name" hint="Unique within the template">
              <input name="case_name" value={c.name} onInput={(e) => setC({ ...c, name: e.currentTarget.value })} required />
            </Field>
            <Field label="The callee hangs up after (s)">
              <input name="max_seconds" type="number" min="5" max="600" value={c.callee.max_seconds ?? ''} onInput={(e) => setC({ ...c, callee: { ...c.callee, max_seconds: e.currentTarget.value ? Number(e.currentTarget.value) : undefined } })} />
            </Field>
          </div>
          <fieldset class="flow-group">
            <legend>Variables of the lead</legend>
            {vars.map(([k, v], i) => (
              <div class="case-row" key={i}>
                <input aria-label="Variable" name="variable_name" value={k} onInput={(e) => setVars(vars.map((x, j) => (j === i ? [e.currentTarget.value, x[1]] : x)))} />
                <input aria-label="Value" name="variable_value" value={String(v)} onInput={(e) => setVars(vars.map((x, j) => (j === i ? [x[0], e.currentTarget.value] : x)))} />
                <RemoveButton label={`Remove the variable ${k}`} onClick={() => setVars(vars.filter((_, j) => j !== i))} />
              </div>
            ))}
            <div class="flow-group-actions">
              <button type="button" class="small" onClick={() => setVars([...vars, [`variable_${vars.length + 1}`, '']])}>
                Add a variable
              </button>
            </div>
          </fieldset>
          <fieldset class="flow-group">
            <legend>The callee</legend>
            <div class="form-grid">
              <Field label="Played as" hint={persona ? 'The LLM writes each of its lines from the conversation so far' : 'Its lines and actions, in order'}>
                <select name="callee_kind" value={persona ? 'persona' : 'script'} onChange={(e) => setPersona(e.currentTarget.value === 'persona')}>
                  <option value="script">A script, step by step</option>
                  <option value="persona">A persona played by the LLM</option>
                </select>
              </Field>
              {persona && (
                <Field label="Lines at most" hint="Then it hangs up (default 6)">
                  <input name="max_turns" type="number" min="1" max="20" value={c.callee.max_turns ?? ''} onInput={(e) => setCallee({ max_turns: e.currentTarget.value ? Number(e.currentTarget.value) : undefined })} />
                </Field>
              )}
            </div>
            {persona ? (
              <div class="form-grid">
                <Field label="Who the customer is" wide>
                  <textarea name="persona" rows={2} value={c.callee.persona ?? ''} onInput={(e) => setCallee({ persona: e.currentTarget.value })} />
                </Field>
                <Field label="Their goal on the call" wide>
                  <input name="goal" value={c.callee.goal ?? ''} onInput={(e) => setCallee({ goal: e.currentTarget.value })} />
                </Field>
              </div>
            ) : (
              <>
                {steps.map((s, i) => {
                  const kind = stepKind(s);
                  return (
                    <div class="case-row" key={i} data-step={i}>
                      <select aria-label="Step" name="step_kind" value={kind} onChange={(e) => setSteps(steps.map((x, j) => (j === i ? freshStep(e.currentTarget.value as StepKind) : x)))}>
                        {(Object.keys(STEP_KINDS) as StepKind[]).map((k) => (
                          <option key={k} value={k}>
                            {STEP_KINDS[k]}
                          </option>
                        ))}
                      </select>
                      {'say' in s && <input aria-label="Says" name="step_say" value={s.say} onInput={(e) => setSteps(steps.map((x, j) => (j === i ? { say: e.currentTarget.value } : x)))} />}
                      {'silence_ms' in s && <input aria-label="Silent for (ms)" name="step_silence" type="number" min="1" value={s.silence_ms} onInput={(e) => setSteps(steps.map((x, j) => (j === i ? { silence_ms: Number(e.currentTarget.value) } : x)))} />}
                      {'keys' in s && <input aria-label="Keys" name="step_keys" value={s.keys} onInput={(e) => setSteps(steps.map((x, j) => (j === i ? { keys: e.currentTarget.value } : x)))} />}
                      {('wait_for_agent' in s || 'hang_up' in s) && <span />}
                      <RemoveButton label="Remove the step" onClick={() => setSteps(steps.filter((_, j) => j !== i))} />
                    </div>
                  );
                })}
                <div class="flow-group-actions">
                  <button type="button" class="small" onClick={() => setSteps([...steps, freshStep(steps.length && 'say' in steps[steps.length - 1]! ? 'wait_for_agent' : 'say')])}>
                    Add a step
                  </button>
                </div>
              </>
            )}
          </fieldset>
          <fieldset class="flow-group">
            <legend>Expectations</legend>
            {c.expectations.map((e, i) => (
              <div class="expectation-row" key={i} data-expectation={e.kind}>
                <Field label="Expect">
                  <select name="expectation_kind" value={e.kind} onChange={(ev) => setExpectation(i, ev.currentTarget.value === 'nodes' ? { kind: 'nodes', match: 'in_order' } : { kind: ev.currentTarget.value })}>
                    {Object.entries(EXPECTATION_LABELS).map(([k, label]) => (
                      <option key={k} value={k}>
                        {label}
                      </option>
                    ))}
                    {!(e.kind in EXPECTATION_LABELS) && <option value={e.kind}>{e.kind}</option>}
                  </select>
                </Field>
                <ExpectationFields e={e} set={(next) => setExpectation(i, next)} />
                <RemoveButton label="Remove the expectation" onClick={() => setC({ ...c, expectations: c.expectations.filter((_, j) => j !== i) })} />
              </div>
            ))}
            <div class="flow-group-actions">
              <button type="button" class="small" onClick={() => setC({ ...c, expectations: [...c.expectations, { kind: 'says', text: '' }] })}>
                Add an expectation
              </button>
            </div>
          </fieldset>
        </>
      )}
      {jsonError && json === undefined && <p class="error-text">{jsonError}</p>}
      <div class="form-actions">
        <button type="button" onClick={toggleJson}>
          {json === undefined ? 'Edit as JSON' : 'Back to the forms'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="primary">
          Save the case
        </button>
      </div>
    </form>
  );
}

/** On a finished call's page: opens a test case of its template drafted from the call (`?from_lead=`). */
export function MakeTestCase({ lead }: { lead: Lead }) {
  const lines = (lead.metaData as { transcription?: { role?: string }[] }).transcription;
  if (lead.status !== 'FINISHED' || !Array.isArray(lines) || !lines.some((t) => t.role === 'user') || !can('templates', 'write')) return null;
  return (
    <a class="button" id="make-test-case" href={`${BASE}/templates/${lead.template_id}?from_lead=${encodeURIComponent(lead.id)}`} title="A test case of the template that plays this conversation again">
      Make a test case
    </a>
  );
}
