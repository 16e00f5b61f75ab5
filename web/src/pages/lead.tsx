/**
 * One lead: every field, its attempts, the conversation (each turn with its node), warm transfers,
 * function calls and their hooks, pre-checks, webhook deliveries (deliver again), the recording with a waveform,
 * and abort while it can be aborted. Kept live through GET /events.
 */
import { ComplianceCard } from '../components/compliance-card.js';
import { useEffect, useState } from 'preact/hooks';
import { http } from '../api/client.js';
import { leads } from '../api/endpoints.js';
import { subscribe } from '../api/events.js';
import type { Configuration, Delivery, Lead } from '../api/types.js';
import { Badge, Card, Empty, ErrorNote, Json, PageHeader, Spinner, Table, toast } from '../components/ui.js';
import { playRecordingFrom, RecordingPlayer } from '../components/recording.js';
import { useTenantNames } from '../components/tenant-names.js';
import { FunctionCalls, PreChecks, SpeechNotes, Timeline, Transcript, WarmTransfers, type FunctionCall, type LanguageSwitch, type PreCheckResult, type SttFallback, type Turn, type WarmTransfer } from '../components/call-record.js';
import { latestHealth } from '../components/shell.js';
import { ago, callee, clock, money, seconds, shownNumber, when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { BASE, can, session } from '../session.js';
import { MakeTestCase } from '../components/case-form.js';

const meta = (lead: Lead) => lead.metaData as Record<string, unknown>;
const list = <T,>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);

export default function LeadPage({ id }: { id: string }) {
  const lead = useLoad((signal) => leads.get(id, signal), [id]);
  const attempts = useLoad((signal) => leads.attempts(id, signal), [id]);
  const webhooks = useLoad((signal) => leads.webhooks(id, signal), [id]);
  const [current, setCurrent] = useState<Lead>();
  useEffect(() => setCurrent(lead.data), [lead.data]);
  // The lines of the call in progress, as they are spoken (GET /events `transcript`).
  const [liveLines, setLiveLines] = useState<Turn[]>([]);

  // Live: reload what changed when the lead moves on; a live call's lines as they come.
  useEffect(() => {
    setLiveLines([]);
    return subscribe('/events', { leads: id }, (event, data) => {
      if (event === 'transcript') {
        const line = data as Turn & { seq: number };
        setLiveLines((lines) => (line.seq === 1 ? [line] : [...lines.slice(0, line.seq - 1), line]));
        return;
      }
      if (event !== 'lead') return;
      if ((data as { status?: string }).status !== 'PROCESSING') setLiveLines([]);
      lead.reload();
      attempts.reload();
      webhooks.reload();
    });
  }, [id]);

  if (lead.error) {
    return (
      <div>
        <PageHeader title="Lead" />
        <ErrorNote error={lead.error} />
        <a href={`${BASE}/leads`}>Back to the leads</a>
      </div>
    );
  }
  const l = current;
  if (!l) return <Spinner />;
  const m = meta(l);
  const sandbox = m.sandbox === true || (l.provider !== null && latestHealth?.sandbox.providers.includes(l.provider) === true && l.status !== 'FINISHED');
  const abortable = (l.status === 'BACKLOG' || l.status === 'RETRY') && can('leads', 'write');
  const abort = async () => {
    const reason = prompt('Why abort this lead? (stored on it)', 'aborted from the dashboard');
    if (!reason) return;
    const res = await leads.abort([l.id], reason);
    const item = res.leads[0]!;
    toast(item.message, item.status === 'success' ? 'ok' : 'bad');
    lead.reload();
  };

  return (
    <div class="lead-page">
      <PageHeader
        title={callee(l)}
        subtitle={
          <>
            <a href={`${BASE}/leads`}>Leads</a> · request <code id="lead-request-id">{l.request_id}</code> · lead <code>{l.id}</code>
          </>
        }
      >
        <Badge value={l.status} />
        {l.outcome && <Badge kind="outcome" value={l.outcome} />}
        {sandbox && (
          <span class="badge badge-sandbox" id="sandbox-badge" title="The callee was the sandbox line's simulated customer">
            Simulated customer · no phone rang
          </span>
        )}
        {abortable && (
          <button type="button" class="danger" onClick={abort}>
            Abort
          </button>
        )}
      </PageHeader>
      {(l.status === 'BACKLOG' || l.status === 'RETRY') && l.execution_mode.startsWith('TELEPHONY') && !l.is_playground && can('configurations', 'read') && (
        <WhyWaiting lead={l} />
      )}
      <div class="grid-2">
        <Card title="Lead">
          <Details lead={l} />
        </Card>
        <Card title="Call">
          <CallSummary lead={l} />
        </Card>
      </div>
      <ComplianceCard lead={l} />
      <Card title="Recording" id="recording">
        {l.call_id && l.recording_url ? (
          <RecordingPlayer callId={l.call_id} />
        ) : (
          <Empty>{l.status === 'FINISHED' ? 'No recording was made of this lead.' : 'The recording appears here when the call ends.'}</Empty>
        )}
      </Card>
      <div class="grid-2">
        <Card title="Conversation" id="transcript" actions={<MakeTestCase lead={l} />}>
          {l.status === 'PROCESSING' && liveLines.length > 0 ? (
            <>
              <p class="hint" id="live-transcript">Live: the call in progress, as it is spoken.</p>
              <Transcript turns={liveLines} nodes={[]} />
            </>
          ) : (
            <Transcript turns={list<Turn>(m.transcription)} nodes={list<string>(m.node_traversal)} {...(l.call_id && l.recording_url ? { onSeek: playRecordingFrom } : {})} />
          )}
          <SpeechNotes switches={list<LanguageSwitch>(m.language_switches)} fallback={m.stt_fallback && typeof m.stt_fallback === 'object' ? (m.stt_fallback as SttFallback) : undefined} />
          {m.agent === 'greeter' && (
            <p class="hint">The built-in greeter carried this call: it hears when the customer speaks but does not transcribe it (no speech-to-text or LLM is configured).</p>
          )}
        </Card>
        <Card title="Attempts" id="attempts">
          <ErrorNote error={attempts.error} />
          <Timeline attempts={attempts.data?.data ?? []} />
        </Card>
      </div>
      <WarmTransfers transfers={list<WarmTransfer>(m.warm_transfers)} />
      <Card title="Function calls" id="functions">
        <FunctionCalls calls={list<FunctionCall>(m.function_calls)} />
      </Card>
      <PreChecks results={list<PreCheckResult>(m.pre_check_results)} />
      <Card title="Webhooks and callbacks" id="webhooks">
        <ErrorNote error={webhooks.error} />
        <Deliveries leadId={l.id} deliveries={webhooks.data?.data ?? []} onChange={webhooks.reload} />
      </Card>
      <Card title="Errors and scores">
        <ErrorsAndScores lead={l} />
      </Card>
      <details class="card raw">
        <summary>Payload and raw metaData</summary>
        <h3>payload</h3>
        <Json value={l.payload} />
        <h3>metaData</h3>
        <Json value={l.metaData} />
      </details>
    </div>
  );
}

/**
 * A waiting lead that nothing will call says so: its template has no configuration, or the
 * configuration has calling disabled. Such a lead waits (its next attempt is a recheck) until a
 * configuration that calls exists, and is then due at once.
 */
function WhyWaiting({ lead: l }: { lead: Lead }) {
  const found = useLoad(
    (signal) => http.get<{ data: Configuration[] }>('/configurations', { reseller_id: l.reseller_id, template: l.template_id, page_size: 1 }, signal),
    [l.reseller_id, l.template_id],
  );
  const configuration = found.data?.data[0];
  if (!found.data || configuration?.enable_calling) return null;
  const fix = can('configurations', 'write') ? <a href={`${BASE}/configurations?template=${encodeURIComponent(l.template_id)}`}>{configuration ? 'Enable calling' : 'Create a configuration'}</a> : 'Ask an administrator';
  return (
    <p class="notice" id="why-waiting" role="status">
      {configuration ? (
        <>
          Not being called: calling is disabled in the configuration of template <strong>{l.template}</strong>.
        </>
      ) : (
        <>
          Not being called: template <strong>{l.template}</strong> has no configuration.
        </>
      )}{' '}
      {fix}; its waiting leads are then due at once.
    </p>
  );
}

function Details({ lead: l }: { lead: Lead }) {
  const names = useTenantNames();
  const payload = l.payload as Record<string, unknown>;
  return (
    <dl class="kv">
      <dt>Phone number</dt>
      <dd>{shownNumber(payload.customer_mobile_number) ?? '— (no customer_mobile_number: the lead waits)'}</dd>
      <dt>Template</dt>
      <dd>
        <a href={`${BASE}/templates/${l.template_id}`}>{l.template}</a>
      </dd>
      {l.campaign_id && (
        <>
          <dt>Campaign</dt>
          <dd>
            <a href={`${BASE}/campaigns/${l.campaign_id}`} id="lead-campaign">
              {l.campaign_id}
            </a>
            {l.held_reason ? <span class="muted"> · held: {l.held_reason.replace(/^campaign_/, '')}</span> : null}
          </dd>
        </>
      )}
      <dt>Mode</dt>
      <dd>
        {l.execution_mode}
        {l.is_playground ? ' (playground)' : ''}
      </dd>
      <dt>Reseller</dt>
      <dd>{names.reseller(l.reseller_id)}</dd>
      <dt>Merchant</dt>
      <dd>{l.merchant_id ? names.merchant(l.merchant_id) : '— (reseller level)'}</dd>
      <dt>Pushed</dt>
      <dd>{when(l.created_at)}</dd>
      <dt>Updated</dt>
      <dd>{when(l.updated_at)}</dd>
      <dt>Next attempt</dt>
      <dd>{l.next_attempt_at ? when(l.next_attempt_at) : '—'}</dd>
      {l.cancellation_reason && (
        <>
          <dt>Cancellation reason</dt>
          <dd>{l.cancellation_reason}</dd>
        </>
      )}
      {typeof payload.reporting_webhook_url === 'string' && (
        <>
          <dt>Reporting webhook</dt>
          <dd>{payload.reporting_webhook_url}</dd>
        </>
      )}
    </dl>
  );
}

function CallSummary({ lead: l }: { lead: Lead }) {
  const m = meta(l);
  const traceId = typeof m.trace_id === 'string' ? m.trace_id : undefined;
  const template = session.get()?.me.trace_url_template;
  return (
    <dl class="kv">
      <dt>Attempts</dt>
      <dd>{l.attempt_count}</dd>
      <dt>Provider</dt>
      <dd>{l.provider ?? '—'}</dd>
      <dt>Call id</dt>
      <dd>{l.call_id ? <code>{l.call_id}</code> : '—'}</dd>
      <dt>Started</dt>
      <dd>{when(l.call_initiated_time)}</dd>
      <dt>Ended</dt>
      <dd>{when(l.call_end_time)}</dd>
      <dt>Duration</dt>
      <dd>{seconds(l.duration_seconds)}</dd>
      <dt>Ended by</dt>
      <dd>{typeof m.call_ended_by === 'string' ? m.call_ended_by : '—'}</dd>
      <dt>Cost</dt>
      <dd>{money(l.cost)}</dd>
      <dt>Sentiment</dt>
      <dd>{l.sentiment === null ? '—' : l.sentiment.toFixed(2)}</dd>
      <dt>Trace</dt>
      <dd>
        {traceId ? (
          template ? (
            <a id="trace-link" href={template.replace('{trace_id}', encodeURIComponent(traceId))} target="_blank" rel="noopener">
              {traceId} ↗
            </a>
          ) : (
            <code title="Set DIALER_TRACE_URL_TEMPLATE to link traces">{traceId}</code>
          )
        ) : (
          '—'
        )}
      </dd>
    </dl>
  );
}

function Deliveries({ leadId, deliveries, onChange }: { leadId: string; deliveries: Delivery[]; onChange: () => void }) {
  const [busy, setBusy] = useState<string>();
  if (deliveries.length === 0) return <Empty>No reporting webhook or service callback for this lead (none was asked for, or the lead has not finished).</Empty>;
  const again = async (d: Delivery) => {
    setBusy(d.id);
    try {
      await leads.redeliver(leadId, d.id);
      toast('Queued to be delivered again.');
      onChange();
    } catch (err) {
      toast((err as Error).message, 'bad');
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <ol class="deliveries">
      {deliveries.map((d) => (
        <li key={d.id} class="delivery" data-delivery={d.id}>
          <div class="delivery-head">
            <strong>{d.kind === 'service_callback' ? 'Service callback' : `Reporting webhook (${d.kind})`}</strong> <Badge value={d.status} />
            <span class="truncate muted" title={d.url}>
              {d.url}
            </span>
            {d.redelivery_of && <span class="muted">sent again by hand</span>}
            {d.status === 'pending' && d.attempts > 0 && d.next_attempt_at && <span class="muted">next attempt {when(d.next_attempt_at)}</span>}
            {can('leads', 'write') && d.status !== 'pending' && (
              <button type="button" onClick={() => again(d)} disabled={busy === d.id}>
                Deliver again
              </button>
            )}
          </div>
          {d.attempt_log.length > 0 ? (
            <Table
              caption="Attempts"
              rows={d.attempt_log}
              rowKey={(a) => String(a.attempt)}
              columns={[
                { key: 'n', label: '#', class: 'num', render: (a) => a.attempt },
                { key: 'at', label: 'When', render: (a) => <span title={when(a.started_at)}>{ago(a.started_at)}</span> },
                { key: 'status', label: 'HTTP', class: 'num', render: (a) => a.status_code ?? '—' },
                { key: 'latency', label: 'Latency', class: 'num', render: (a) => `${a.latency_ms} ms` },
                { key: 'error', label: 'Error', render: (a) => a.error ?? '—' },
              ]}
            />
          ) : (
            <p class="muted">Not attempted yet.</p>
          )}
          <details>
            <summary>Body</summary>
            <Json value={d.payload} />
          </details>
        </li>
      ))}
    </ol>
  );
}

function ErrorsAndScores({ lead: l }: { lead: Lead }) {
  const m = meta(l);
  const errors = list<unknown>(m.errors);
  const lastError = m.last_error as { attempt?: number; outcome?: string; message?: string } | undefined;
  const scores = Object.entries(l.trace_scores);
  return (
    <div class="grid-2">
      <div>
        <h3>Errors</h3>
        {errors.length === 0 && !lastError ? (
          <p class="muted">None.</p>
        ) : (
          <ul class="errors">
            {lastError?.message && (
              <li>
                Attempt {lastError.attempt}: {lastError.outcome} — {lastError.message}
              </li>
            )}
            {errors.map((e, i) => (
              <li key={i}>{typeof e === 'string' ? e : JSON.stringify(e)}</li>
            ))}
          </ul>
        )}
      </div>
      <div>
        <h3>Trace scores</h3>
        {scores.length === 0 ? (
          <p class="muted">None.</p>
        ) : (
          <dl class="kv">
            {scores.map(([k, v]) => (
              <>
                <dt key={`k-${k}`}>{k}</dt>
                <dd key={`v-${k}`}>{Number.isInteger(v) ? v : v.toFixed(3)}</dd>
              </>
            ))}
          </dl>
        )}
      </div>
    </div>
  );
}
