/**
 * A call as it happened: its attempts as a timeline, the transcript as a conversation with each
 * turn's node and language, what happened to its speech (language switches, the speech-to-text's
 * fallback), the functions the agent called with their hooks' requests and responses, its warm
 * transfers and its pre-checks.
 */
import { Badge, Card, Empty, Json, Table } from './ui.js';
import { clock, offset, seconds, when } from '../lib/format.js';

/** `at_ms`: where the line begins in the call's recording. */
/** `disclosure`: the disclosure the call opened with. */
/** `language`: the language the call spoke at that line (a template that declares languages). */
export type Turn = { role: string; content: string; node?: string; at_ms?: number; disclosure?: boolean; language?: string };
export type FunctionCall = {
  node: string;
  name: string;
  arguments: Record<string, unknown>;
  hooks: { name: string; request?: { method: string; url: string; body?: unknown }; status?: number; ok: boolean; durationMs: number; error?: string; response?: unknown }[];
  transition_to?: string;
  transfer_to?: string;
  error?: string;
  at: string;
};

/** `onSeek`: the recording can be played from a line's time (each time is then a button). */
export function Transcript({ turns, nodes, onSeek }: { turns: Turn[]; nodes: string[]; onSeek?: (ms: number) => void }) {
  if (turns.length === 0) return <Empty>Nothing was said yet.</Empty>;
  let last: string | undefined;
  let lastLanguage: string | undefined;
  return (
    <div>
      {nodes.length > 0 && (
        <p class="node-path" aria-label="Nodes visited">
          {nodes.map((n, i) => (
            <span key={`${n}-${i}`}>
              {i > 0 && <span class="arrow"> → </span>}
              <code>{n}</code>
            </span>
          ))}
        </p>
      )}
      <ol class="transcript">
        {turns.map((t, i) => {
          const showNode = t.node !== undefined && t.node !== last;
          last = t.node ?? last;
          // The language is marked on the first line and wherever it changes.
          const showLanguage = t.language !== undefined && t.language !== lastLanguage;
          lastLanguage = t.language ?? lastLanguage;
          return (
            <li key={i} class={`turn turn-${t.role === 'user' ? 'user' : 'agent'}${t.disclosure ? ' turn-disclosure' : ''}`}>
              {showNode && <span class="turn-node">{t.node}</span>}
              <span class="turn-who">
                {t.role === 'user' ? 'Customer' : t.disclosure ? 'Disclosure' : 'Agent'}
                {typeof t.at_ms === 'number' && <TurnTime ms={t.at_ms} onSeek={onSeek} />}
                {showLanguage && (
                  <span class="turn-lang" title={`Spoken in ${t.language}`}>
                    {t.language}
                  </span>
                )}
              </span>
              <span class="turn-text">{t.content}</span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}

function TurnTime({ ms, onSeek }: { ms: number; onSeek: ((ms: number) => void) | undefined }) {
  const text = offset(ms);
  if (!onSeek) return <time class="turn-time">{text}</time>;
  return (
    <button type="button" class="turn-time" title={`Play the recording from ${text}`} aria-label={`Play the recording from ${text}`} onClick={() => onSeek(ms)}>
      {text}
    </button>
  );
}

export function Timeline({ attempts }: { attempts: { attempt: number; status: string; outcome: string | null; error: string | null; call_id: string | null; provider: string | null; from_number: string | null; started_at: string; ended_at: string | null; duration_seconds: number | null; sip_status?: number | null }[] }) {
  if (attempts.length === 0) return <Empty>Not dialled yet.</Empty>;
  return (
    <ol class="timeline">
      {attempts.map((a) => (
        <li key={a.attempt} class="timeline-item">
          <div class="timeline-head">
            <strong>Attempt {a.attempt}</strong> <Badge kind="outcome" value={a.outcome ?? (a.status === 'DIALLING' ? 'in progress' : a.status)} />
          </div>
          <div class="muted">
            {when(a.started_at)}
            {a.ended_at ? ` – ${clock(a.ended_at)}` : ''} · {a.provider ?? '—'}
            {a.from_number ? ` from ${a.from_number}` : ''}
            {a.duration_seconds !== null ? ` · ${seconds(a.duration_seconds)}` : ''}
            {a.sip_status != null && (
              <>
                {' · '}
                <span class="sip-status" title="The final SIP status of the INVITE">
                  SIP <Badge kind="plain" tone={a.sip_status < 300 ? 'ok' : a.sip_status >= 500 ? 'bad' : 'warn'} value={String(a.sip_status)} />
                </span>
              </>
            )}
          </div>
          {a.call_id && (
            <div class="muted">
              call <code>{a.call_id}</code>
            </div>
          )}
          {a.error && <div class="error-text">{a.error}</div>}
        </li>
      ))}
    </ol>
  );
}

export function FunctionCalls({ calls }: { calls: FunctionCall[] }) {
  if (calls.length === 0) return <Empty>The agent called no function.</Empty>;
  return (
    <ol class="calls">
      {calls.map((c, i) => (
        <li key={i} class="call">
          <div>
            <code class="fn">{c.name}</code>
            <span class="muted"> in {c.node}</span>
            {c.transition_to && <span class="muted"> → {c.transition_to}</span>}
            {c.transfer_to && <span class="muted"> · transferred to {c.transfer_to}</span>}
            <span class="muted"> · {clock(c.at)}</span>
          </div>
          <Json value={c.arguments} />
          {c.error && <div class="error-text">{c.error}</div>}
          {c.hooks.map((h, j) => (
            <div key={j} class="hook">
              <div>
                Hook <strong>{h.name}</strong>: {h.request ? `${h.request.method} ${h.request.url}` : ''} →{' '}
                {h.status !== undefined ? <Badge kind="outcome" value={h.ok ? `HTTP ${h.status}` : 'error'} /> : <Badge kind="outcome" value="error" />} {h.durationMs} ms
                {h.error && <span class="error-text"> {h.error}</span>}
              </div>
              <div class="grid-2 hook-io">
                <div>
                  <h3>Request body</h3>
                  {h.request?.body === undefined ? <p class="muted">none</p> : <Json value={h.request.body} />}
                </div>
                <div>
                  <h3>Response</h3>
                  {h.response === undefined ? <p class="muted">none</p> : <Json value={h.response} />}
                </div>
              </div>
            </div>
          ))}
        </li>
      ))}
    </ol>
  );
}

/** A warm transfer as the call record keeps it (metaData.warm_transfers). */
export type WarmTransfer = {
  to: string;
  node: string;
  function: string;
  briefing: string;
  briefing_source: 'template' | 'llm' | 'default';
  decision: 'accepted' | 'declined' | 'no_answer' | 'busy' | 'failed';
  via?: 'key' | 'voice' | 'hangup' | 'timeout';
  heard?: string;
  events: { event: string; at: string }[];
  callback_at?: string;
  error?: string;
};

const DECISION_TEXT: Record<WarmTransfer['decision'], string> = {
  accepted: 'accepted',
  declined: 'declined',
  no_answer: 'no answer',
  busy: 'busy',
  failed: 'failed',
};
const VIA_TEXT: Record<NonNullable<WarmTransfer['via']>, string> = { key: 'by key', voice: 'by voice', hangup: 'by hanging up', timeout: 'no answer in time' };
const SOURCE_TEXT: Record<WarmTransfer['briefing_source'], string> = { template: "the template's text", llm: "the LLM's summary", default: 'the fixed sentence' };

/** Each warm transfer of the call (a card; nothing when there was none): the briefing the human heard, their decision and how it went. */
export function WarmTransfers({ transfers }: { transfers: WarmTransfer[] }) {
  if (transfers.length === 0) return null;
  return (
    <Card title="Warm transfer" id="warm-transfer">
    <ol class="calls warm-transfers">
      {transfers.map((w, i) => (
        <li key={i} class="call warm-transfer">
          <div>
            <strong>To {w.to}</strong> <Badge kind="plain" tone={w.decision === 'accepted' ? 'ok' : w.decision === 'declined' ? 'warn' : 'bad'} value={DECISION_TEXT[w.decision] ?? w.decision} />
            {w.via && <span class="muted"> {VIA_TEXT[w.via] ?? w.via}</span>}
            <span class="muted">
              {' '}
              · <code class="fn">{w.function}</code> in {w.node}
            </span>
          </div>
          <blockquote class="briefing" aria-label="Briefing">
            {w.briefing}
          </blockquote>
          <div class="muted">Briefing from {SOURCE_TEXT[w.briefing_source] ?? w.briefing_source}.</div>
          {w.heard && <div>The human said: “{w.heard}”</div>}
          {w.callback_at && <div>Nobody took the call: called back {when(w.callback_at)}.</div>}
          {w.error && <div class="error-text">{w.error}</div>}
          {w.events.length > 0 && (
            <p class="node-path" aria-label="Transfer events">
              {w.events.map((e, j) => (
                <span key={j}>
                  {j > 0 && <span class="arrow"> → </span>}
                  {e.event.replace('_', ' ')} <time class="muted">{clock(e.at)}</time>
                </span>
              ))}
            </p>
          )}
        </li>
      ))}
    </ol>
    </Card>
  );
}

/** A switch of the call's language as the call record keeps it (metaData.language_switches). */
export type LanguageSwitch = { from: string; to: string; by: 'function' | 'detected'; at: string; refused?: string };
/** The speech-to-text's switch to its second service (metaData.stt_fallback). */
export type SttFallback = { at: string; at_ms?: number; from: string; to: string; reason: string };

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });
/** "Spanish (es)": a language tag with its English name, the tag alone when it has none. */
function languageName(tag: string): string {
  let name: string | undefined;
  try {
    name = languageNames.of(tag);
  } catch {
    name = undefined;
  }
  return name && name !== tag ? `${name} (${tag})` : tag;
}

/**
 * What happened to the call's speech along the way, under its transcript: each change of language
 * (or a language it refused) and the speech-to-text going over to its second service, each at its
 * time of day. Nothing when neither happened.
 */
export function SpeechNotes({ switches, fallback }: { switches: LanguageSwitch[]; fallback: SttFallback | undefined }) {
  if (switches.length === 0 && !fallback) return null;
  const notes = [
    ...switches.map((s) => ({
      at: s.at,
      text: s.refused ? (
        <>
          {s.by === 'function' ? 'The flow asked for' : 'The caller was heard speaking'} <strong>{languageName(s.to)}</strong>; the call stayed in{' '}
          <strong>{languageName(s.from)}</strong>: {s.refused}.
        </>
      ) : (
        <>
          Switched from <strong>{languageName(s.from)}</strong> to <strong>{languageName(s.to)}</strong>,{' '}
          {s.by === 'function' ? 'asked by the flow (switch_language)' : 'the caller was heard speaking it'}.
        </>
      ),
    })),
    ...(fallback
      ? [
          {
            at: fallback.at,
            text: (
              <>
                Speech-to-text went over from <strong>{fallback.from}</strong> to <strong>{fallback.to}</strong>: {fallback.reason}
              </>
            ),
          },
        ]
      : []),
  ].sort((a, b) => a.at.localeCompare(b.at));
  return (
    <ul class="speech-notes" aria-label="Speech and language">
      {notes.map((n, i) => (
        <li key={i}>
          <time class="muted">{clock(n.at)}</time>
          <span>{n.text}</span>
        </li>
      ))}
    </ul>
  );
}

/** A pre-check's result as the call record keeps it (metaData.pre_check_results). */
export type PreCheckResult = { name: string; result: string; action: string; status_code?: number; value?: unknown; error?: string; duration_ms?: number };

/** The lead's pre-checks and what each decided (a card; nothing when it had none). */
export function PreChecks({ results }: { results: PreCheckResult[] }) {
  if (results.length === 0) return null;
  return (
    <Card title="Pre-checks" id="prechecks">
      <Table
        caption="Pre-check results"
        rows={results}
        rowKey={(r) => r.name}
        columns={[
          { key: 'name', label: 'Check', render: (r) => r.name },
          { key: 'result', label: 'Result', render: (r) => <Badge kind="outcome" value={r.result === 'passed' ? 'passed' : r.result === 'disabled' ? 'disabled' : r.result === 'failed' ? 'failed' : 'error'} /> },
          { key: 'action', label: 'Decision', render: (r) => (r.action === 'skip' ? 'skip the lead' : 'dial') },
          { key: 'status', label: 'HTTP', class: 'num', render: (r) => r.status_code ?? '—' },
          { key: 'value', label: 'Value', render: (r) => (r.value === undefined ? '—' : <code>{JSON.stringify(r.value)}</code>) },
          { key: 'error', label: 'Error', render: (r) => r.error ?? '—' },
        ]}
      />
    </Card>
  );
}
