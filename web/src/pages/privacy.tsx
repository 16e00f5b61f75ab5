/**
 * Privacy: a person's data on request (look up what is held about a number, download it, erase it
 * after a confirmation that names what goes) and how long recordings and transcripts are kept.
 */
import { useState } from 'preact/hooks';
import { privacy, type ErasureResult, type ExportDocument } from '../api/compliance.js';
import { tenants } from '../api/endpoints.js';
import { NamedSelect } from '../components/list-page.js';
import { Card, ErrorNote, Field, Modal, PageHeader, toast } from '../components/ui.js';
import { useLoad } from '../lib/use.js';
import { can, session } from '../session.js';

/** What an erasure of the number would remove, counted from its subject-access document. */
export function erasurePlan(doc: ExportDocument) {
  const leads = doc.leads.map((l) => l.lead as { status: string; payload: Record<string, unknown>; metaData: Record<string, unknown>; consent?: unknown; recording_url?: string | null });
  const fields = new Set(leads.flatMap((l) => Object.keys(l.payload ?? {}).filter((k) => k !== 'reporting_webhook_url')));
  return {
    leads: leads.length,
    fields: [...fields].sort(),
    transcripts: leads.filter((l) => Array.isArray(l.metaData?.transcription) && (l.metaData.transcription as unknown[]).length > 0).length,
    analyses: leads.filter((l) => l.metaData?.analysis != null).length,
    recordings: leads.filter((l) => l.recording_url).length,
    consents: leads.filter((l) => l.consent).length,
    waiting: leads.filter((l) => l.status === 'BACKLOG' || l.status === 'RETRY').length,
    optOuts: doc.blacklist.length,
  };
}

export default function PrivacyPage() {
  return (
    <div>
      <PageHeader title="Privacy" subtitle="A person's data on request, and how long recordings and transcripts are kept." />
      <div class="grid-2">
        <Erasure />
        <RetentionSettings />
      </div>
    </div>
  );
}

function Erasure() {
  const [doc, setDoc] = useState<ExportDocument>();
  const [confirming, setConfirming] = useState(false);
  const [done, setDone] = useState<ErasureResult>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const lookUp = async (event: Event) => {
    event.preventDefault();
    const phone = String(new FormData(event.currentTarget as HTMLFormElement).get('phone') ?? '').trim();
    setError(undefined);
    setDone(undefined);
    try {
      setDoc(await privacy.export(phone));
    } catch (err) {
      setError(err);
      setDoc(undefined);
    }
  };
  const erase = async () => {
    setBusy(true);
    try {
      setDone(await privacy.erase({ phone_number: doc!.phone_number }));
      setConfirming(false);
      setDoc(undefined);
      toast('Erased.');
    } catch (err) {
      setError(err);
      setConfirming(false);
    } finally {
      setBusy(false);
    }
  };
  const plan = doc && erasurePlan(doc);
  const download = () => {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2)], { type: 'application/json' }));
    a.download = `subject-access-${doc!.phone_number}.json`;
    a.click();
    URL.revokeObjectURL(a.href);
  };
  return (
    <Card title="A person's data" id="erasure">
      <form class="toolbar" onSubmit={lookUp}>
        <Field label="Phone number (E.164): what Dialer holds about it in your scope" class="grow">
          <input name="phone" required placeholder="+14155550123" />
        </Field>
        <button type="submit">Look up</button>
      </form>
      <ErrorNote error={error} />
      {plan && doc && (
        <div id="erasure-plan">
          <p>
            <strong>{doc.phone_number}</strong>: {plan.leads} lead(s), {plan.recordings} recording(s), {plan.transcripts} transcript(s), {plan.optOuts} opt-out(s), on{' '}
            {doc.dnc_lists.length} do-not-call list(s).
          </p>
          <div class="form-actions">
            <button type="button" onClick={download}>
              Download (subject access)
            </button>
            {can('privacy', 'write') && (plan.leads > 0 || plan.optOuts > 0) && (
              <button type="button" class="danger" onClick={() => setConfirming(true)}>
                Erase this person…
              </button>
            )}
          </div>
        </div>
      )}
      {done && (
        <p id="erasure-done" role="status">
          Erased from {done.leads.length} lead(s): {done.leads.reduce((n, l) => n + l.recordings.length, 0)} recording(s) deleted, {done.opt_outs_hashed} opt-out(s) kept as the number's hash.
        </p>
      )}
      {confirming && plan && doc && (
        <Modal title={`Erase ${doc.phone_number}?`} open onClose={() => setConfirming(false)}>
          <div id="erasure-confirm">
            <p>This cannot be undone. From {plan.leads} lead(s) of this number, Dialer will remove:</p>
            <ul>
              <li>the payload fields {plan.fields.map((f) => <code key={f}>{f} </code>)}(the number becomes a one-way hash)</li>
              <li>{plan.transcripts} transcript(s) and {plan.analyses} call analysis(es)</li>
              <li>{plan.recordings} recording(s), deleted from storage</li>
              <li>the text and reference of {plan.consents} consent record(s)</li>
              {plan.waiting > 0 && <li>{plan.waiting} waiting lead(s): they will not be called</li>}
            </ul>
            <p class="muted">Outcomes and figures stay, so analytics do not change. {plan.optOuts > 0 ? 'The opt-out stays (as the hash): the number is still never called.' : ''}</p>
            <div class="form-actions">
              <button type="button" onClick={() => setConfirming(false)}>
                Cancel
              </button>
              <button type="button" class="danger" disabled={busy} onClick={erase}>
                {busy ? 'Erasing…' : 'Erase'}
              </button>
            </div>
          </div>
        </Modal>
      )}
    </Card>
  );
}

function RetentionSettings() {
  const me = session.get()!.me;
  const [reseller, setReseller] = useState(me.reseller_id ?? '');
  const resellers = useLoad((signal) => (me.role === 'admin' ? tenants.resellers(signal) : Promise.resolve(undefined)), []);
  const current = useLoad((signal) => (reseller ? privacy.retention(me.role === 'admin' ? reseller : undefined, signal) : Promise.resolve(undefined)), [reseller]);
  const [error, setError] = useState<unknown>();
  const writable = me.role === 'admin' || me.role === 'reseller';
  const save = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const days = (k: string) => (String(form.get(k) ?? '').trim() ? Number(form.get(k)) : null);
    setError(undefined);
    try {
      await privacy.setRetention({ ...(me.role === 'admin' ? { reseller_id: reseller } : {}), recordings_days: days('recordings'), transcripts_days: days('transcripts') });
      toast('Retention saved.');
      current.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Card title="Retention" id="retention">
      <p class="muted">Recordings and transcripts of calls that ended longer ago are deleted by an hourly job; outcomes and figures stay. Empty: kept.</p>
      {me.role === 'admin' && (
        <div class="stacked">
          <Field label="Reseller">
            <NamedSelect items={resellers.data?.data} value={reseller} onChange={setReseller} none="Choose a reseller" />
          </Field>
        </div>
      )}
      <ErrorNote error={current.error ?? error} />
      {current.data && (
        <form class="form-grid" onSubmit={save} key={`${current.data.reseller_id}-${current.data.updated_at}`}>
          <Field label="Recordings (days)">
            <input name="recordings" type="number" min={1} max={36500} defaultValue={current.data.recordings_days?.toString() ?? ''} disabled={!writable} />
          </Field>
          <Field label="Transcripts (days)">
            <input name="transcripts" type="number" min={1} max={36500} defaultValue={current.data.transcripts_days?.toString() ?? ''} disabled={!writable} />
          </Field>
          {writable && (
            <div class="form-actions field-wide">
              <button type="submit" class="primary">
                Save retention
              </button>
            </div>
          )}
        </form>
      )}
    </Card>
  );
}
