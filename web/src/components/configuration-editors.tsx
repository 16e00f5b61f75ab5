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
