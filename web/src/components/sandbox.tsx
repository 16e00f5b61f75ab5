/**
 * "Call a simulated customer": while the sandbox line is on, one click pushes a lead that dials
 * the simulated customer inside Dialer, and opens its page to watch the call happen. The sandbox
 * template's call goes on the provider chosen beside the button (SIP: through the sandbox trunk).
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { sandbox } from '../api/endpoints.js';
import { useLoad } from '../lib/use.js';
import { BASE, can } from '../session.js';
import { Card, ErrorNote } from './ui.js';

export function SandboxCall({ templateId, compact }: { templateId?: string; compact?: boolean }) {
  const info = useLoad((signal) => sandbox.info(signal), []);
  const { route } = useLocation();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  const [provider, setProvider] = useState<string>();
  const s = info.data;
  if (!s?.enabled || !can('leads', 'write')) return null;
  const call = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const res = await sandbox.call(templateId, templateId ? undefined : provider);
      route(`${BASE}/leads/${res.lead_id}`);
    } catch (err) {
      setError(err as Error);
      setBusy(false);
    }
  };
  const choice = !templateId && s.providers.length > 1 && (
    <label class="sandbox-provider">
      <span class="muted">on</span>{' '}
      <select name="sandbox_provider" aria-label="Sandbox provider" value={provider ?? s.providers[0]} onChange={(e) => setProvider(e.currentTarget.value)}>
        {s.providers.map((p) => (
          <option key={p} value={p}>
            {p === 'SIP' ? 'SIP (sandbox trunk)' : p}
          </option>
        ))}
      </select>
    </label>
  );
  const button = (
    <span class="toolbar">
      <button type="button" class="primary" id="sandbox-call" onClick={call} disabled={busy}>
        {busy ? 'Calling…' : 'Call a simulated customer'}
      </button>
      {choice}
    </span>
  );
  if (compact) {
    return (
      <>
        {button}
        <ErrorNote error={error} />
      </>
    );
  }
  return (
    <Card class="sandbox-card" title="Make a first call">
      <div class="sandbox-body">
        <div>
          <p>
            No telephony account yet? The <strong>sandbox line</strong> ({s.providers.join(', ')}) calls a simulated customer inside Dialer. No phone rings. Watch the call
            happen, then read its transcript and listen to its recording.
          </p>
        </div>
        {button}
      </div>
      <ErrorNote error={error} />
    </Card>
  );
}
