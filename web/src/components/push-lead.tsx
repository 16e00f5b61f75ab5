/** Push one lead: a form made from the chosen template's variables (the ones its prompts use). */
import { useMemo, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { leads } from '../api/endpoints.js';
import type { Template } from '../api/types.js';
import { promptVariables } from '../../../src/voice/flow/schema.js';
import { session } from '../session.js';
import { Field, Modal, toast } from './ui.js';
import { FormFooter, NamedSelect } from './list-page.js';

export function PushLead({ templates, onClose, onPushed, templateId }: { templates: Template[]; onClose: () => void; onPushed: (id: string) => void; templateId?: string }) {
  const me = session.get()!.me;
  const [tplId, setTplId] = useState(templateId ?? templates[0]?.id ?? '');
  const [error, setError] = useState<ApiError | Error>();
  const [busy, setBusy] = useState(false);
  const template = templates.find((t) => t.id === tplId);
  const variables = useMemo(() => (template ? promptVariables(template.flow) : []), [template]);
  const fieldError = (path: string) => (error instanceof ApiError ? error.at(path) : undefined);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!template) return;
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const payload: Record<string, string> = { customer_mobile_number: String(form.get('customer_mobile_number')).trim() };
    for (const v of variables) payload[v] = String(form.get(`var-${v}`) ?? '');
    const webhook = String(form.get('reporting_webhook_url') ?? '').trim();
    const merchant = template.merchant_id ?? me.merchant_id;
    setBusy(true);
    setError(undefined);
    try {
      const res = await leads.push({
        request_id: String(form.get('request_id')).trim(),
        template: template.name,
        reseller_id: template.reseller_id,
        ...(merchant ? { merchant_id: merchant } : {}),
        payload,
        execution_mode: String(form.get('execution_mode')) as never,
        ...(webhook ? { reporting_webhook_url: webhook } : {}),
      });
      toast(res.message || 'Lead queued.');
      onPushed(res.lead_call_tracker_id);
      onClose();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal title="Push a lead" open onClose={onClose}>
      {templates.length === 0 ? (
        <p>There is no template to call with yet. Create one on the Templates screen first.</p>
      ) : (
        <form onSubmit={submit} class="form-grid">
          <Field label="Template" wide error={fieldError('/template')}>
            <NamedSelect name="template" items={templates} value={tplId} onChange={setTplId} />
          </Field>
          <Field label="Phone number" hint="E.164, e.g. +14155550123" error={fieldError('/payload/customer_mobile_number')}>
            <input name="customer_mobile_number" required pattern="\+[1-9][0-9]{1,14}" placeholder="+14155550123" inputMode="tel" />
          </Field>
          <Field label="Request id" hint="Your own reference, echoed in webhooks" error={fieldError('/request_id')}>
            <input name="request_id" required defaultValue={`dashboard-${Date.now()}`} />
          </Field>
          {variables.map((v) => (
            <Field key={`${tplId}-${v}`} label={v} error={fieldError(`/payload/${v}`)}>
              <input name={`var-${v}`} required />
            </Field>
          ))}
          <Field label="Mode">
            <select name="execution_mode">
              <option value="TELEPHONY">TELEPHONY</option>
              <option value="TELEPHONY_TEST">TELEPHONY_TEST (left out of analytics)</option>
            </select>
          </Field>
          <Field label="Reporting webhook URL" hint="Optional: called when the lead finishes" error={fieldError('/reporting_webhook_url')}>
            <input name="reporting_webhook_url" type="url" placeholder="https://crm.example.com/hook" />
          </Field>
          <FormFooter error={error} onCancel={onClose} submit="Push lead" busy={busy && 'Pushing…'} />
        </form>
      )}
    </Modal>
  );
}
