/**
 * Test a template in the browser: a WEBRTC_TEST lead (left out of analytics) and a WebRTC session
 * with Dialer (the microphone up, the agent's voice down, events over a data channel): the
 * transcript, the nodes and the function calls appear as they happen; hang up, then the outcome
 * and the recording. The state is on window.playground for tests and the curious.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { http } from '../api/client.js';
import { leads } from '../api/endpoints.js';
import type { Lead, Template } from '../api/types.js';
import { promptVariables } from '../../../src/voice/flow/schema.js';
import { BASE, session } from '../session.js';
import { Badge, ErrorNote, Field } from './ui.js';
import { RecordingPlayer } from './recording.js';

type LiveEvent =
  | { type: 'state'; room: string }
  | { type: 'transcript'; role: 'user' | 'assistant'; text: string; final?: boolean }
  | { type: 'node'; node: string }
  | { type: 'function_call'; name: string; arguments: unknown; transition_to?: string }
  | { type: 'ended'; outcome: string; call_ended_by: string };

interface Playground {
  leadId: string | null;
  room: string | null;
  pc: RTCPeerConnection | null;
  channel: RTCDataChannel | null;
  events: LiveEvent[];
  lead: Lead | null;
}

declare global {
  interface Window {
    playground?: Playground;
  }
}

type Mode = 'WEBRTC_TEST' | 'WEBRTC' | 'WEBRTC_STREAM';

function gathered(pc: RTCPeerConnection): Promise<void> {
  return new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    const timer = setTimeout(resolve, 3000);
    pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState === 'complete') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

export function TestCall({ template }: { template: Template }) {
  const variables = useMemo(() => promptVariables(template.flow), [template]);
  const [mode, setMode] = useState<Mode>('WEBRTC_TEST');
  const [status, setStatus] = useState('Idle.');
  const [error, setError] = useState<Error>();
  const [events, setEvents] = useState<LiveEvent[]>([]);
  const [interim, setInterim] = useState<string>();
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<Lead>();
  const [note, setNote] = useState<string>();
  const [greeter, setGreeter] = useState(false);
  const remote = useRef<HTMLAudioElement>(null);
  const state = useRef<Playground>({ leadId: null, room: null, pc: null, channel: null, events: [], lead: null });
  const ending = useRef<Promise<void> | null>(null);

  useEffect(() => {
    window.playground = state.current;
    return () => {
      state.current.pc?.close();
      if (window.playground === state.current) delete window.playground;
    };
  }, []);

  const onEvent = (event: LiveEvent) => {
    state.current.events.push(event);
    if (event.type === 'transcript' && event.role === 'user' && !event.final) {
      setInterim(event.text);
      return;
    }
    if (event.type === 'transcript' && event.role === 'user') setInterim(undefined);
    if (event.type === 'state') setStatus(`Connected (room ${event.room}). Speak now.`);
    if (event.type === 'ended') {
      setStatus(`Ended: ${event.outcome} (ended by ${event.call_ended_by}).`);
      void finish();
    }
    setEvents([...state.current.events]);
  };

  const finish = () => {
    ending.current ??= (async () => {
      setRunning(false);
      let lead: Lead | undefined;
      for (let i = 0; i < 100 && state.current.leadId; i++) {
        lead = await leads.get(state.current.leadId);
        if (lead.status !== 'PROCESSING') break;
        await new Promise((r) => setTimeout(r, 300));
      }
      state.current.pc?.close();
      if (lead) {
        state.current.lead = lead;
        setResult(lead);
      }
    })();
    return ending.current;
  };

  const start = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const payload: Record<string, string> = {};
    for (const v of variables) payload[v] = String(form.get(`var-${v}`) ?? '');
    let override: Record<string, unknown> | undefined;
    const overrideText = String(form.get('override') ?? '').trim();
    if (mode === 'WEBRTC_TEST' && overrideText) {
      try {
        override = JSON.parse(overrideText) as Record<string, unknown>;
      } catch {
        setError(new Error('The configuration override is not valid JSON.'));
        return;
      }
    }
    setError(undefined);
    setNote(undefined);
    setGreeter(false);
    setResult(undefined);
    setEvents([]);
    setInterim(undefined);
    ending.current = null;
    Object.assign(state.current, { leadId: null, room: null, pc: null, channel: null, events: [], lead: null });
    setRunning(true);
    try {
      setStatus('Creating the lead…');
      const merchant = template.merchant_id ?? session.get()?.me.merchant_id;
      const pushed = await leads.push({
        request_id: `test-${Date.now()}`,
        template: template.name,
        reseller_id: template.reseller_id,
        ...(merchant ? { merchant_id: merchant } : {}),
        payload,
        execution_mode: mode as never,
        is_playground: mode === 'WEBRTC_TEST',
        ...(override ? { configurations_override: override } : {}),
      });
      state.current.leadId = pushed.lead_call_tracker_id;
      setStatus('Starting the microphone…');
      const mic = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
      setStatus('Connecting…');
      const pc = new RTCPeerConnection({ iceServers: [] });
      state.current.pc = pc;
      for (const track of mic.getAudioTracks()) pc.addTrack(track, mic);
      pc.ontrack = (e) => {
        if (!remote.current) return;
        remote.current.srcObject = e.streams[0] ?? new MediaStream([e.track]);
        void remote.current.play().catch(() => undefined);
      };
      const channel = pc.createDataChannel('dialer');
      state.current.channel = channel;
      channel.onmessage = (e) => onEvent(JSON.parse(String(e.data)) as LiveEvent);
      pc.onconnectionstatechange = () => {
        if (pc.connectionState === 'failed') setStatus('The connection failed.');
      };
      await pc.setLocalDescription(await pc.createOffer());
      await gathered(pc);
      const answer = await http.post<{ sdp: string; room: string; ice_servers?: RTCIceServer[]; agent?: string; note?: string }>(`/webrtc/${pushed.lead_call_tracker_id}/offer`, {
        sdp: pc.localDescription!.sdp,
      });
      state.current.room = answer.room;
      if (answer.note) setNote(answer.note);
      setGreeter(answer.agent === 'greeter');
      if (answer.ice_servers?.length) pc.setConfiguration({ iceServers: answer.ice_servers });
      await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    } catch (err) {
      setError(err as Error);
      setStatus('The call did not start.');
      setRunning(false);
      state.current.pc?.close();
      // A try that never became a session leaves no lead waiting to be called.
      const leadId = state.current.leadId;
      if (leadId && !state.current.room) await leads.abort([leadId], 'the browser test did not start').catch(() => undefined);
    }
  };

  const hangup = async () => {
    setStatus('Hanging up…');
    try {
      if (state.current.leadId) await http.post(`/webrtc/${state.current.leadId}/hangup`);
    } catch (err) {
      setError(err as Error);
    }
    await finish();
  };

  const speak = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('speak') as HTMLInputElement;
    const interrupt = (form.elements.namedItem('interrupt') as HTMLInputElement).checked;
    const text = input.value.trim();
    if (!text || state.current.channel?.readyState !== 'open') return;
    state.current.channel.send(JSON.stringify({ type: 'tts-speak', text, interrupt }));
    input.value = '';
  };

  const nodes = events.filter((e): e is Extract<LiveEvent, { type: 'node' }> => e.type === 'node');
  const calls = events.filter((e): e is Extract<LiveEvent, { type: 'function_call' }> => e.type === 'function_call');
  const lines = events.filter((e): e is Extract<LiveEvent, { type: 'transcript' }> => e.type === 'transcript' && (e.role === 'assistant' || e.final !== false));

  return (
    <div class="test-call">
      <form onSubmit={start} class="form-grid">
        <Field label="Mode">
          <select name="mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as Mode)} disabled={running}>
            <option value="WEBRTC_TEST">WEBRTC_TEST (a test)</option>
            <option value="WEBRTC">WEBRTC</option>
            <option value="WEBRTC_STREAM">WEBRTC_STREAM (you type its words)</option>
          </select>
        </Field>
        {variables.map((v) => (
          <Field key={v} label={v}>
            <input name={`var-${v}`} required disabled={running} />
          </Field>
        ))}
        {mode === 'WEBRTC_TEST' && (
          <Field label="Configuration override (JSON, optional)" wide hint='Merged over the configuration for this call, e.g. {"max_retry": 0}'>
            <textarea name="override" rows={2} disabled={running} />
          </Field>
        )}
        <div class="form-actions field-wide">
          <span role="status" class="test-status" id="test-status">
            {status}
          </span>
          {!running ? (
            <button type="submit" class="primary" id="test-call">
              Call
            </button>
          ) : (
            <button type="button" class="danger" onClick={hangup} id="test-hangup">
              Hang up
            </button>
          )}
        </div>
      </form>
      {running && mode === 'WEBRTC_STREAM' && (
        <form onSubmit={speak} class="toolbar">
          <Field label="Say (tts-speak)">
            <input name="speak" maxLength={5000} />
          </Field>
          <label class="field check">
            <input type="checkbox" name="interrupt" /> interrupt
          </label>
          <button type="submit">Speak</button>
        </form>
      )}
      {note && (
        <p class="notice" id="test-note" role="note">
          {note}
        </p>
      )}
      <ErrorNote error={error} />
      {(events.length > 0 || running) && (
        <div class="grid-2 test-live">
          <div>
            <h3>Transcript</h3>
            <ol class="transcript" id="test-transcript" aria-live="polite">
              {lines.map((l, i) => (
                <li key={i} class={`turn turn-${l.role === 'user' ? 'user' : 'agent'}`}>
                  <span class="turn-who">{l.role === 'user' ? 'You' : 'Agent'}</span>
                  <span class="turn-text">{l.text}</span>
                </li>
              ))}
              {interim && (
                <li class="turn turn-user interim">
                  <span class="turn-who">You</span>
                  <span class="turn-text">{interim}…</span>
                </li>
              )}
            </ol>
          </div>
          <div>
            <h3>Nodes</h3>
            {nodes.length === 0 && <p class="hint">{greeter ? 'None: the built-in greeter follows no flow.' : 'None yet.'}</p>}
            <ol id="test-nodes" class="plain-list">
              {nodes.map((n, i) => (
                <li key={i}>
                  <code>{n.node}</code>
                </li>
              ))}
            </ol>
            <h3>Function calls</h3>
            {calls.length === 0 && <p class="hint">{greeter ? 'None: the built-in greeter calls no functions.' : 'None yet.'}</p>}
            <ol id="test-functions" class="plain-list">
              {calls.map((c, i) => (
                <li key={i}>
                  <code>
                    {c.name}({JSON.stringify(c.arguments)})
                  </code>
                  {c.transition_to ? ` → ${c.transition_to}` : ''}
                </li>
              ))}
            </ol>
          </div>
        </div>
      )}
      {result && (
        <div class="test-result" id="test-result">
          <h3>Result</h3>
          <p>
            <Badge value={result.status} /> <Badge kind="outcome" value={result.outcome} /> {result.duration_seconds ?? 0} s ·{' '}
            <a href={`${BASE}/leads/${result.id}`}>open the lead</a>
          </p>
          {result.call_id && result.recording_url && <RecordingPlayer callId={result.call_id} />}
        </div>
      )}
      <audio ref={remote} autoplay />
    </div>
  );
}
