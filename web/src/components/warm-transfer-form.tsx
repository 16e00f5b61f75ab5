/**
 * A function's warm transfer in the flow editor (its `warm_transfer`, beside `transfer_to_number`):
 * whether the human is briefed before the caller is put through, the briefing (the LLM's summary of
 * the call, or a text of the template's with {variable}s), what the caller hears while waiting, how
 * the human decides, and what follows when they decline or nobody answers. A text left empty is
 * the service's default, shown as the field's placeholder; the defaults and the human's prompt are
 * the voice engine's own (src/voice/flow/briefing.ts, src/voice/warm-transfer.ts).
 */
import { CALLBACK_AFTER_MINUTES, DECLINED_MESSAGE, HOLD_MESSAGE, NO_ANSWER_MESSAGE } from '../../../src/voice/flow/briefing.js';
import { CALL_VARIABLES } from '../../../src/voice/flow/schema.js';
import { DECISION_PROMPT, DECISION_TIMEOUT_MS } from '../../../src/voice/warm-transfer.js';
import type { Json } from '../lib/flow-edit.js';
import { Labelled, str, type ProblemAt } from './flow-fields.js';

type FunctionChange = (mutate: (fn: Json) => void, key?: string) => void;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** The function's warm_transfer, made an object if it is not one (the JSON view may hold anything). */
const warmOf = (fn: Json): Json => (isObject(fn.warm_transfer) ? fn.warm_transfer : (fn.warm_transfer = {}));

const MESSAGES = [
  { key: 'hold_message', label: 'The caller hears while the human is briefed', fallback: HOLD_MESSAGE },
  { key: 'declined_message', label: 'If the human declines, the agent says (then goes on helping the caller)', fallback: DECLINED_MESSAGE },
  { key: 'no_answer_message', label: 'If nobody answers (no answer, busy, failed), the agent says (then ends the call)', fallback: NO_ANSWER_MESSAGE },
] as const;

/** `{a}, {b}` as code. */
function Names({ names }: { names: string[] }) {
  return (
    <>
      {names.map((n, i) => (
        <span key={n}>
          {i > 0 && ', '}
          <code>{`{${n}}`}</code>
        </span>
      ))}
    </>
  );
}

export function WarmTransferForm({ fn, at, change, problemAt }: { fn: Json; at: string; change: FunctionChange; problemAt: ProblemAt }) {
  const on = fn.warm_transfer !== undefined;
  const warm = isObject(fn.warm_transfer) ? fn.warm_transfer : {};
  const wat = `${at}/warm_transfer`;
  const written = typeof warm.briefing === 'string';
  const params = isObject(fn.properties) ? Object.keys(fn.properties) : [];
  const callValues = ['customer_mobile_number', 'lead_id'].filter((v) => CALL_VARIABLES.has(v));
  /** Sets a text of warm_transfer; empty leaves it to the default. */
  const setText = (key: string, value: string) =>
    change((f) => {
      const w = warmOf(f);
      if (value) w[key] = value;
      else delete w[key];
    }, `${wat}/${key}`);
  const minutes = warm.callback_after_minutes;
  const selfProblem = problemAt(wat);
  return (
    <fieldset class="flow-group warm-transfer" data-warm={on ? 'on' : 'off'}>
      <legend>Warm transfer</legend>
      <label class={`field check ${selfProblem ? 'field-error' : ''}`}>
        <input
          type="checkbox"
          name="warm_transfer"
          checked={on}
          onChange={(e) =>
            change((f) => {
              if (e.currentTarget.checked) f.warm_transfer = {};
              else delete f.warm_transfer;
            })
          }
        />
        Brief the human before the caller is put through (they may decline)
      </label>
      {selfProblem && <p class="field-message">{selfProblem}</p>}
      {!on && <p class="hint">Off: the caller is put straight through to the number above.</p>}
      {on && (
        <div class="warm-fields">
          <div class={`field field-wide ${problemAt(`${wat}/briefing`) ? 'field-error' : ''}`} role="radiogroup" aria-label="The briefing">
            <span class="field-label">The briefing the human hears</span>
            <label class="check">
              <input type="radio" name={`briefing_source${at}`} value="llm" checked={!written} onChange={() => change((f) => void delete warmOf(f).briefing)} />
              Summarised by the LLM from the call so far (two sentences)
            </label>
            <label class="check">
              <input type="radio" name={`briefing_source${at}`} value="template" checked={written} onChange={() => change((f) => void (warmOf(f).briefing = str(warmOf(f).briefing)))} />
              This text:
            </label>
            {written && (
              <>
                <textarea name="briefing" rows={2} aria-label="The briefing text" placeholder="{customer_name} asks about order {order_id}." value={str(warm.briefing)} onInput={(e) => change((f) => void (warmOf(f).briefing = e.currentTarget.value), `${wat}/briefing`)} />
                <span class="field-hint">
                  Fill in <code>{'{customer_name}'}</code> or any field of the lead's payload, a call value (<Names names={callValues} />)
                  {params.length > 0 && <>, or this function's parameters (<Names names={params} />)</>}.
                </span>
              </>
            )}
            {problemAt(`${wat}/briefing`) && <span class="field-message">{problemAt(`${wat}/briefing`)}</span>}
          </div>
          <Labelled label={MESSAGES[0].label} problem={problemAt(`${wat}/hold_message`)} wide>
            <textarea name="hold_message" rows={2} value={str(warm.hold_message)} placeholder={MESSAGES[0].fallback} onInput={(e) => setText('hold_message', e.currentTarget.value)} />
          </Labelled>
          <div class="field field-wide warm-decision">
            <span class="field-label">How the human decides</span>
            <span class="small-text">
              After the briefing they hear “{DECISION_PROMPT}” Keys and words count from the moment they answer; {DECISION_TIMEOUT_MS / 1000} seconds of silence after the briefing, or hanging up, declines.
            </span>
          </div>
          {MESSAGES.slice(1).map((m) => (
            <Labelled key={m.key} label={m.label} problem={problemAt(`${wat}/${m.key}`)} wide>
              <textarea name={m.key} rows={2} value={str(warm[m.key])} placeholder={m.fallback} onInput={(e) => setText(m.key, e.currentTarget.value)} />
            </Labelled>
          ))}
          <Labelled label={`Then the lead is called back after (minutes; default ${CALLBACK_AFTER_MINUTES})`} problem={problemAt(`${wat}/callback_after_minutes`)} wide>
            <input
              class="minutes"
              name="callback_after_minutes"
              type="number"
              min="1"
              max="10080"
              step="1"
              placeholder={String(CALLBACK_AFTER_MINUTES)}
              value={typeof minutes === 'number' ? String(minutes) : ''}
              onInput={(e) =>
                change((f) => {
                  const raw = e.currentTarget.value;
                  const w = warmOf(f);
                  if (raw === '') delete w.callback_after_minutes;
                  else w.callback_after_minutes = Number(raw);
                }, `${wat}/callback_after_minutes`)
              }
            />
          </Labelled>
        </div>
      )}
    </fieldset>
  );
}
