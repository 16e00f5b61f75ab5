/**
 * Exotel (PROVIDER_B, callbacks under /provider_b) in Exotel's own wire protocols.
 *
 * How a call runs at Exotel. Exotel has no TwiML-like document per call: calls run through a flow
 * (an App Bazaar app) built in Exotel's dashboard, and Dialer steers the flow through the dynamic
 * URLs of its applets. The flow Dialer needs is
 *
 *   Voicebot applet (URL: https://<dialer>/provider_b/answer, "dynamic", so Exotel GETs it and
 *     expects `{"url":"wss://…"}` back)
 *   -> Connect applet (Dial whom: dynamic URL https://<dialer>/provider_b/answer?transfer=1)
 *   -> Hangup applet
 *
 * and EXOTEL_FLOW_URL is that flow's `http://my.exotel.com/{sid}/exoml/start_voice/{app_id}`.
 *
 * - Outbound calls: Calls/connect (Voice v1, "Outgoing call to connect number to a call flow"):
 *   `POST {base}/v1/Accounts/{sid}/Calls/connect.json`, HTTP basic auth api_key:api_token, form
 *   fields From (called first: our callee), CallerId (our ExoPhone), Url (the flow), CallType,
 *   TimeLimit, TimeOut, CustomField, StatusCallback, StatusCallbackEvents[], StatusCallbackContentType.
 *   The `.json` suffix makes Exotel answer JSON (`{"Call":{"Sid",…}}`) instead of XML.
 * - The session token travels as CustomField: the applets' URLs are fixed in the flow, so they
 *   cannot carry `?s=<token>`; Exotel passes the call's CustomField to them, and the callback route
 *   reads the token from it (and from `?s=` on the StatusCallback URL, which is per call).
 * - Callbacks are not signed by Exotel (see `verify`).
 */
import { ProtocolError, ProviderError, type AnswerInfo, type CallStatus, type Markup, type PlaceCallRequest, type ProviderKit, type TransferRequest } from '../provider.js';
import { ExotelSerializer } from './serializer.js';

export interface ExotelOptions {
  accountSid: string;
  apiKey: string;
  apiToken: string;
  /** Default https://api.exotel.com (Singapore); https://api.in.exotel.com for Mumbai accounts. */
  apiBaseUrl: string;
  /** The ExoML start_voice URL of the flow whose Voicebot applet points at Dialer's /provider_b/answer. */
  flowUrl: string;
}

/** Exotel caps TimeLimit at 4 hours. */
const MAX_TIME_LIMIT_SECONDS = 14_400;

/** Exotel's status words (StatusCallback `Status`, applets' `CallStatus`) in Dialer's terms. */
const STATUSES: Readonly<Record<string, Pick<CallStatus, 'phase' | 'end'>>> = {
  queued: { phase: 'queued' },
  ringing: { phase: 'ringing' },
  'in-progress': { phase: 'answered' },
  answered: { phase: 'answered' },
  completed: { phase: 'ended', end: 'completed' },
  busy: { phase: 'ended', end: 'busy' },
  'no-answer': { phase: 'ended', end: 'no_answer' },
  failed: { phase: 'ended', end: 'failed' },
  canceled: { phase: 'ended', end: 'canceled' },
};

function json(body: unknown): Markup {
  return { contentType: 'application/json', body: JSON.stringify(body) };
}

function seconds(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? Math.round(n) : undefined;
}

/** `Legs` is a JSON array of `{OnCallDuration, Status, …}` (flattened to a string by the route). */
function legs(value: string | undefined): Array<Record<string, unknown>> {
  if (!value) return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.filter((l): l is Record<string, unknown> => l !== null && typeof l === 'object') : [];
  } catch {
    return [];
  }
}

/** The message of Exotel's error body (`{"RestException":{"Status","Message"}}`), or the raw text. */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { RestException?: { Message?: unknown } };
    if (typeof body?.RestException?.Message === 'string') return body.RestException.Message;
  } catch {
    // not JSON
  }
  return text.slice(0, 200);
}

/**
 * What the Connect applet's dynamic URL expects (Exotel "Programmable Connect: Working with Connect
 * Applet (Dynamic URL)", version 1.0): the numbers to dial and the leg's settings.
 */
function connectResponse(to: string, callerId: string | undefined, message?: string): Markup {
  const body: Record<string, unknown> = {
    // Dial once; do not come back to this URL after a failed attempt.
    fetch_after_attempt: false,
    destination: { numbers: [to] },
    // Exotel's documented limits: ring for up to 45 s, and the transferred conversation up to 1 h.
    max_ringing_duration: 45,
    max_conversation_duration: 3600,
    music_on_hold: { type: 'operator_tone' },
    // Dialer records calls itself (through the media stream); the human leg is not recorded.
    record: false,
  };
  if (callerId) body.outgoing_phone_number = callerId;
  if (message) body.start_call_playback = { playback_to: 'callee', type: 'text', value: message };
  return json(body);
}

export function createExotelKit(options: ExotelOptions): ProviderKit {
  const base = options.apiBaseUrl.replace(/\/+$/, '');
  const auth = `Basic ${Buffer.from(`${options.apiKey}:${options.apiToken}`).toString('base64')}`;

  return {
    slot: 'PROVIDER_B',
    path: 'provider_b',
    label: 'Exotel',

    async placeCall(request: PlaceCallRequest): Promise<{ callSid: string }> {
      const form = new URLSearchParams();
      form.set('From', request.to);
      form.set('CallerId', request.from);
      form.set('Url', options.flowUrl);
      form.set('CallType', 'trans');
      form.set('TimeLimit', String(Math.min(MAX_TIME_LIMIT_SECONDS, Math.max(1, Math.round(request.maxDurationSeconds)))));
      form.set('TimeOut', String(Math.max(1, Math.round(request.ringTimeoutSeconds))));
      form.set('CustomField', request.token);
      form.set('StatusCallback', request.statusUrl);
      form.append('StatusCallbackEvents[0]', 'terminal');
      form.append('StatusCallbackEvents[1]', 'answered');
      form.set('StatusCallbackContentType', 'application/json');
      // Exotel has no answering-machine detection on Calls/connect: request.machineDetection is
      // not sent (a machine that answers simply talks to the agent).
      const url = `${base}/v1/Accounts/${encodeURIComponent(options.accountSid)}/Calls/connect.json`;
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: form.toString(),
          signal: AbortSignal.timeout(15_000),
        });
      } catch (err) {
        throw new ProviderError(`Exotel could not be reached: ${(err as Error).message}`, undefined, true, { cause: err });
      }
      const text = await res.text().catch(() => '');
      if (!res.ok) {
        const retryable = res.status === 429 || res.status >= 500;
        throw new ProviderError(`Exotel refused the call (HTTP ${res.status}): ${errorMessage(text)}`, res.status, retryable);
      }
      let sid: unknown;
      try {
        sid = (JSON.parse(text) as { Call?: { Sid?: unknown } }).Call?.Sid;
      } catch {
        sid = undefined;
      }
      if (typeof sid !== 'string' || sid === '') throw new ProviderError('Exotel answered without Call.Sid', res.status, false);
      return { callSid: sid };
    },

    /**
     * Exotel's Voice v1 API has no request that ends a live call (its Calls resource only creates
     * calls and reads their details; the leg "hangup" action belongs to the separate v2 CPaaS Legs
     * API, keyed by leg SIDs that v1 calls do not have). Dialer ends an Exotel call by closing the
     * media WebSocket, which the session layer does before calling this: the Voicebot applet ends
     * and the flow goes on to its next applet (Connect, whose URL then answers `hangupMarkup`, then
     * Hangup). Before answer there is nothing to close; TimeOut/TimeLimit bound the call.
     */
    async hangup(): Promise<void> {},

    /**
     * Exotel cannot move a live call by API either. The transfer is done by the flow: when the bot
     * closes the stream, the flow continues to the Connect applet, whose dynamic URL
     * (`/provider_b/answer?transfer=1`, token in CustomField) the session answers with
     * `transferMarkup` once it knows the number. So there is nothing to send here; the session
     * records the number and the agent ends its part of the call.
     */
    async transfer(): Promise<void> {},

    /**
     * Exotel has no way to play keys on a live call: the Voicebot applet's stream carries audio,
     * marks and clears only, the v1 API has no call-update request, and no applet plays digits to
     * the callee. So `sendDigits` is left out and Dialer plays the keys' tones in-band on the
     * Voicebot stream, as 16-bit linear PCM, which carries them unchanged to the far end.
     */
    keys: { onAnswer: false, live: 'inband' },

    /**
     * Exotel signs neither its StatusCallback posts nor its applet requests (its docs offer basic
     * auth only for the WebSocket URL and on the newer v2 event endpoints). Exotel callbacks are
     * authenticated by the per-call session token Dialer puts in the StatusCallback URL (`?s=`) and
     * in CustomField, which the shared callback route checks against the call's session.
     */
    verify(): boolean {
      return true;
    },

    parseAnswer(params: Readonly<Record<string, string>>): AnswerInfo {
      const callSid = params.CallSid;
      if (!callSid) throw new ProtocolError('CallSid is missing');
      // Applets send CallFrom/CallTo (some send From/To as well). In both directions CallFrom is
      // the customer and CallTo the ExoPhone: on an outbound Calls/connect call the customer is the
      // number dialled first ("From"), and the flow runs as if they had called the ExoPhone.
      const customer = params.CallFrom || params.From;
      const exophone = params.CallTo || params.To;
      if (!customer || !exophone) throw new ProtocolError('CallFrom or CallTo is missing');
      const direction = (params.Direction ?? '').toLowerCase();
      const inbound = direction === 'incoming' || direction === 'inbound';
      return inbound ? { callSid, from: customer, to: exophone, direction: 'inbound' } : { callSid, from: exophone, to: customer, direction: 'outbound' };
    },

    parseStatus(params: Readonly<Record<string, string>>): CallStatus {
      const callSid = params.CallSid;
      if (!callSid) throw new ProtocolError('CallSid is missing');
      const word = (params.Status || params.CallStatus || '').toLowerCase();
      const mapped = STATUSES[word];
      if (!mapped) throw new ProtocolError(word ? `unknown Exotel status ${word}` : 'Status is missing');
      const status: CallStatus = { callSid, providerStatus: word, phase: mapped.phase };
      if (mapped.end) status.end = mapped.end;
      // ConversationDuration is talk time; older payloads carry only Duration or the legs' OnCallDuration.
      const legList = legs(params.Legs);
      const duration = seconds(params.ConversationDuration) ?? seconds(params.Duration) ?? seconds(str(legList[0]?.OnCallDuration));
      if (duration !== undefined) status.durationSeconds = duration;
      if (mapped.end && mapped.end !== 'completed') {
        const legStatus = str(legList[0]?.Status);
        status.reason = legStatus && legStatus !== word ? `${word} (leg: ${legStatus})` : word;
      }
      const price = Number(params.Price);
      if (params.Price && Number.isFinite(price) && price > 0) status.cost = price;
      return status;
    },

    /** The Voicebot applet's dynamic URL answers `{"url":"wss://…"}` (Exotel's documented shape). */
    streamMarkup(streamUrl: string): Markup {
      return json({ url: streamUrl });
    },

    /**
     * For an inbound call Dialer refuses. The request comes from the Voicebot applet; Exotel documents
     * no way for its URL to say words or hang up, so the answer carries no `url`: the applet ends
     * without a stream and the flow moves on to the Connect applet, whose dynamic URL is answered
     * with this same body (the inbound path runs again without a session). With `redirectTo` the
     * Connect applet dials it, playing `message` (text, Exotel's TTS) to the caller first; without
     * it the destination list is empty, the Connect applet fails, and the flow's Hangup applet ends
     * the call. The message is not spoken then: Exotel has no per-call text outside an applet.
     */
    blockMarkup(opts: { message?: string; redirectTo?: string; callerId?: string }): Markup {
      if (opts.redirectTo) return connectResponse(opts.redirectTo, opts.callerId, opts.message);
      return json({ fetch_after_attempt: false, destination: { numbers: [] } });
    },

    /** What the flow's Connect applet (dynamic "Dial whom" URL) expects: the human to dial. */
    transferMarkup(request: TransferRequest): Markup {
      // Exotel's Connect applet takes no per-leg status URL; the transfer leg shows in the call's
      // terminal StatusCallback (`Legs`) instead of request.statusUrl / request.eventsUrl.
      return connectResponse(request.to, request.from);
    },

    /**
     * Ends the call at once. Both applets that fetch Dialer's URL fail on this body (no `url` for
     * the Voicebot applet, no number for the Connect applet) and the flow reaches its Hangup applet.
     */
    hangupMarkup(): Markup {
      return json({ fetch_after_attempt: false, destination: { numbers: [] } });
    },

    serializer() {
      return new ExotelSerializer();
    },
  };
}

function str(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}
