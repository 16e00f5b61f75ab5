/**
 * The configuration form's two structured editors: retries by outcome (JSON, checked as typed) and
 * the pre-checks list (one card a check).
 */
import { useState } from 'preact/hooks';
import type { PreCheck } from '../api/types.js';
import { Field } from './ui.js';

const RETRY_EXAMPLE = '{"busy": {"retry": true, "after_seconds": 600}, "voicemail": {"retry": false}}';

/** The retry policy as JSON: per outcome, whether to retry and after how many seconds (empty: every unreached outcome retried after retry_offset). */
export function RetryPolicyField(props: { value: unknown; onChange: (v: unknown) => void; error: string | undefined }) {
  const [text, setText] = useState(props.value ? JSON.stringify(props.value, null, 1) : '');
  return (
    <Field label="Retries by outcome (JSON)" wide error={props.error} hint={`Empty: every unreached outcome is retried after “Retry after”. For example ${RETRY_EXAMPLE}`}>
      <textarea
        name="retry_policy"
        id="f-retry_policy"
        rows={3}
        value={text}
        placeholder={RETRY_EXAMPLE}
        onInput={(e) => {
          const raw = e.currentTarget.value;
          setText(raw);
          if (raw.trim() === '') return (e.currentTarget.setCustomValidity(''), props.onChange(null));
          try {
            props.onChange(JSON.parse(raw));
            e.currentTarget.setCustomValidity('');
          } catch {
            e.currentTarget.setCustomValidity('Not JSON');
          }
        }}
      />
    </Field>
  );
}

const NEW_CHECK: PreCheck = {
  name: 'dnc-check',
  type: 'external_api',
  enabled: true,
  default_on_failure: 'proceed',
  http_request: { url: 'https://crm.example.com/dnc?phone={customer_mobile_number}', method: 'GET' as never, timeout: 5 },
  response_config: { response_field: 'allowed', response_field_value: true },
};

export function PreChecks({ value, onChange, errorAt }: { value: PreCheck[]; onChange: (v: PreCheck[]) => void; errorAt: (i: number) => { path: string; message: string }[] | undefined }) {
  const update = (i: number, change: (c: PreCheck) => PreCheck) => onChange(value.map((c, j) => (j === i ? change(c) : c)));
  return (
    <div class="prechecks">
      <p class="hint">Before each call, Dialer asks an API; the call goes ahead when the response's field equals the value.</p>
      {value.map((c, i) => (
        <div key={i} class="precheck">
          <div class="form-grid">
            <Field label="Name">
              <input value={c.name} onInput={(e) => update(i, (x) => ({ ...x, name: e.currentTarget.value }))} required />
            </Field>
            <Field label="URL" wide hint="{customer_mobile_number} and payload variables are filled in">
              <input value={c.http_request.url} onInput={(e) => update(i, (x) => ({ ...x, http_request: { ...x.http_request, url: e.currentTarget.value } }))} required />
            </Field>
            <Field label="Method">
              <select value={c.http_request.method} onChange={(e) => update(i, (x) => ({ ...x, http_request: { ...x.http_request, method: e.currentTarget.value as PreCheck['http_request']['method'] } }))}>
                {['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => (
                  <option key={m}>{m}</option>
                ))}
              </select>
            </Field>
            <Field label="Response field" hint="A dot path, e.g. data.allowed">
              <input value={c.response_config.response_field} onInput={(e) => update(i, (x) => ({ ...x, response_config: { ...x.response_config, response_field: e.currentTarget.value } }))} required />
            </Field>
            <Field label="Passes when it equals (JSON)" hint="true, 1, &quot;ok&quot;, null">
              <input
                value={JSON.stringify(c.response_config.response_field_value)}
                onInput={(e) => {
                  try {
                    const v = JSON.parse(e.currentTarget.value) as PreCheck['response_config']['response_field_value'];
                    update(i, (x) => ({ ...x, response_config: { ...x.response_config, response_field_value: v } }));
                    e.currentTarget.setCustomValidity('');
                  } catch {
                    e.currentTarget.setCustomValidity('Not a JSON value');
                  }
                }}
              />
            </Field>
            <Field label="When the API fails">
              <select value={c.default_on_failure} onChange={(e) => update(i, (x) => ({ ...x, default_on_failure: e.currentTarget.value as PreCheck['default_on_failure'] }))}>
                <option value="proceed">call anyway (proceed)</option>
                <option value="skip">do not call (skip)</option>
              </select>
            </Field>
            <label class="field check">
              <input type="checkbox" checked={c.enabled} onChange={(e) => update(i, (x) => ({ ...x, enabled: e.currentTarget.checked }))} /> Enabled
            </label>
          </div>
          {errorAt(i)?.map((e) => (
            <p key={e.path} class="error-text">
              <code>{e.path}</code> {e.message}
            </p>
          ))}
          <button type="button" class="danger" onClick={() => onChange(value.filter((_, j) => j !== i))}>
            Remove this check
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...value, { ...NEW_CHECK, name: `check-${value.length + 1}` }])}>
        Add a pre-check
      </button>
    </div>
  );
}

type Disclosure = { text: string; languages?: Record<string, string> };
const LANGUAGES_EXAMPLE = '{"es": "Esta llamada es de Acme, usa un asistente automático y se graba."}';

/**
 * The disclosure spoken before the agent's first line: its text (empty: none) and the same words in
 * other languages as JSON, picked by the lead's payload.language.
 */
export function DisclosureField(props: { value: unknown; onChange: (v: Disclosure | null) => void; errorAt: (path: string) => string | undefined }) {
  const given = (props.value ?? null) as Disclosure | null;
  const [text, setText] = useState(given?.text ?? '');
  const [languages, setLanguages] = useState(given?.languages ? JSON.stringify(given.languages, null, 1) : '');
  const emit = (nextText: string, nextLanguages: Record<string, string> | undefined) =>
    props.onChange(nextText.trim() === '' ? null : { text: nextText, ...(nextLanguages && Object.keys(nextLanguages).length ? { languages: nextLanguages } : {}) });
  const parsed = (raw: string): Record<string, string> | undefined => (raw.trim() === '' ? undefined : (JSON.parse(raw) as Record<string, string>));
  return (
    <div class="form-grid">
      <Field label="Disclosure spoken first" wide error={props.errorAt('/disclosure/text') ?? props.errorAt('/disclosure')} hint="Said whole before the agent's first line, on every outbound call; the callee cannot talk over it. Empty: no disclosure. {variable} placeholders come from the lead's payload.">
        <textarea
          name="disclosure"
          id="f-disclosure"
          rows={2}
          maxLength={1000}
          value={text}
          placeholder="This call is from Acme, uses an automated assistant and is recorded."
          onInput={(e) => {
            const raw = e.currentTarget.value;
            setText(raw);
            try {
              emit(raw, parsed(languages));
            } catch {
              emit(raw, undefined);
            }
          }}
        />
      </Field>
      <Field label="The disclosure in other languages (JSON)" wide error={props.errorAt('/disclosure/languages')} hint={`By language code; the lead's payload.language picks one (es-MX, then es), else the text above is spoken. For example ${LANGUAGES_EXAMPLE}`}>
        <textarea
          name="disclosure_languages"
          id="f-disclosure_languages"
          rows={Math.min(8, Math.max(2, languages.split('\n').length))}
          value={languages}
          placeholder={LANGUAGES_EXAMPLE}
          disabled={text.trim() === ''}
          onInput={(e) => {
            const raw = e.currentTarget.value;
            setLanguages(raw);
            try {
              emit(text, parsed(raw));
              e.currentTarget.setCustomValidity('');
            } catch {
              e.currentTarget.setCustomValidity('Not JSON');
            }
          }}
        />
      </Field>
    </div>
  );
}
