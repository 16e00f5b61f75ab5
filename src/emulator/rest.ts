/**
 * The providers' REST APIs as Dialer calls them: Twilio (2010-04-01 Calls), Plivo (v1 Call and
 * Request), Exotel (v1 Calls/connect). Basic auth, the providers' error shapes, every request
 * recorded on its call.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Call, CallSetup } from './call.js';
import type { EmulatedProvider, EmulatorOptions } from './types.js';
import { exotelTime, hex } from './util.js';

export interface Registry {
  options: EmulatorOptions;
  log: (m: string) => void;
  flowUrl: string;
  place(provider: EmulatedProvider, from: string, to: string, setup: CallSetup): Call;
  /**
   * Where Dialer's /provider_x/… routes live: dialerUrl when it has a path, else learned from the
   * URLs Dialer hands over (its callbacks sit under its API prefix), else dialerUrl.
   */
  callbackBase(hint?: string): string;
  find(provider: EmulatedProvider, id: string): Call | undefined;
}

export type Params = Record<string, string | string[]>;

interface Reply {
  status: number;
  body?: unknown;
  xml?: string;
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
const method = (v: string | string[] | undefined): 'GET' | 'POST' => (one(v)?.toUpperCase() === 'GET' ? 'GET' : 'POST');
const num = (v: string | string[] | undefined): number | undefined => (one(v) !== undefined && one(v) !== '' ? Number(one(v)) : undefined);

export async function readBody(req: IncomingMessage): Promise<{ raw: string; params: Params }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  const params: Params = {};
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' && raw.trim()) {
    const json = JSON.parse(raw) as Record<string, unknown>;
    for (const [k, v] of Object.entries(json)) params[k] = Array.isArray(v) ? v.map(String) : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
  } else {
    for (const [k, v] of new URLSearchParams(raw)) {
      const prev = params[k];
      params[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
  }
  return { raw, params };
}

function basicAuth(req: IncomingMessage): { user: string; pass: string } | undefined {
  const h = req.headers.authorization;
  if (!h?.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(h.slice(6), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i < 0 ? undefined : { user: decoded.slice(0, i), pass: decoded.slice(i + 1) };
}

function send(res: ServerResponse, r: Reply): void {
  if (r.xml !== undefined) {
    res.writeHead(r.status, { 'content-type': 'application/xml' }).end(r.xml);
  } else if (r.body === undefined) res.writeHead(r.status).end();
  else res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(r.body));
}

// ---------------------------------------------------------------------------------------------
// Twilio

const twilioError = (status: number, code: number, message: string): Reply => ({ status, body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status } });

function twilioCallJson(reg: Registry, call: Call): unknown {
  const c = call.rec;
  const sid = reg.options.twilio.accountSid;
  const uri = `/2010-04-01/Accounts/${sid}/Calls/${c.callSid}.json`;
  const date = (d: Date | undefined) => (d ? d.toUTCString().replace('GMT', '+0000') : null);
  return {
    sid: c.callSid,
    account_sid: sid,
    annotation: null,
    answered_by: null,
    api_version: '2010-04-01',
    caller_name: null,
    date_created: date(call.created),
    date_updated: date(new Date()),
    direction: c.direction === 'inbound' ? 'inbound' : 'outbound-api',
    duration: call.over ? String(call.durationSeconds) : null,
    end_time: date(call.endedAt),
    forwarded_from: null,
    from: c.from,
    from_formatted: c.from,
    group_sid: null,
    parent_call_sid: null,
    phone_number_sid: null,
    price: null,
    price_unit: 'USD',
    queue_time: '0',
    start_time: date(call.answeredAt),
    status: c.status,
    subresource_uris: { notifications: uri.replace('.json', '/Notifications.json'), recordings: uri.replace('.json', '/Recordings.json') },
    to: c.to,
    to_formatted: c.to,
    trunk_sid: null,
    uri,
  };
}

async function twilio(reg: Registry, req: IncomingMessage, parts: string[], params: Params): Promise<Reply> {
  const cfg = reg.options.twilio;
  const auth = basicAuth(req);
  if (!auth || auth.user !== cfg.accountSid || auth.pass !== cfg.authToken) return twilioError(401, 20003, 'Authenticate');
  // parts: 2010-04-01 Accounts {sid} Calls[.json] [{callSid}.json]
  if (parts[1] !== 'Accounts' || parts[2] !== cfg.accountSid) return twilioError(404, 20404, 'The requested resource was not found');
  if (parts.length === 4 && parts[3] === 'Calls.json' && req.method === 'POST') {
    const to = one(params.To);
    const from = one(params.From);
    const url = one(params.Url);
    const twiml = one(params.Twiml);
    if (!to) return twilioError(400, 21201, "No 'To' number is specified");
    if (!from) return twilioError(400, 21213, "No 'From' number is specified");
    if (!url && !twiml) return twilioError(400, 21205, 'Url parameter is required');
    const eventsRaw = params.StatusCallbackEvent;
    const events = new Set((Array.isArray(eventsRaw) ? eventsRaw : eventsRaw ? [eventsRaw] : []).flatMap((e) => e.split(/[\s,]+/)).filter(Boolean));
    if (events.size === 0) events.add('completed');
    const call = reg.place('PROVIDER_A', from, to, {
      answerUrl: url ?? '',
      answerMethod: method(params.Method),
      statusUrl: one(params.StatusCallback),
      statusMethod: method(params.StatusCallbackMethod),
      statusEvents: events,
      machineDetection: one(params.MachineDetection),
      ringTimeoutSeconds: num(params.Timeout),
      timeLimitSeconds: num(params.TimeLimit),
      inlineMarkup: url ? undefined : twiml,
    });
    call.rec.rest.push({ method: 'POST', path: `/${parts.join('/')}`, params });
    call.setStatus('queued');
    void call.runOutbound();
    return { status: 201, body: twilioCallJson(reg, call) };
  }
  if (parts.length === 5 && parts[3] === 'Calls' && parts[4]!.endsWith('.json')) {
    const call = reg.find('PROVIDER_A', parts[4]!.slice(0, -5));
    if (!call) return twilioError(404, 20404, `The requested resource /${parts.join('/')} was not found`);
    call.rec.rest.push({ method: req.method ?? 'GET', path: `/${parts.join('/')}`, params });
    if (req.method === 'GET') return { status: 200, body: twilioCallJson(reg, call) };
    if (req.method !== 'POST') return twilioError(405, 20004, 'Method not allowed');
    const status = one(params.Status);
    const twiml = one(params.Twiml);
    const url = one(params.Url);
    if (status) {
      if (status !== 'completed' && status !== 'canceled') return twilioError(400, 21218, `Invalid Status: ${status}`);
      if (!call.over && (status === 'completed' || !call.answeredAt)) await call.hangupByApi();
      return { status: 200, body: twilioCallJson(reg, call) };
    }
    if (twiml || url) {
      if (call.over || !call.answeredAt) return twilioError(400, 21220, 'Call is not in-progress. Cannot redirect.');
      void call.replaceInstructions(async () =>
        twiml ?? call.send({ url: url!, method: method(params.Method), params: call.answerParams(), ...call.signing() }),
      );
      return { status: 200, body: twilioCallJson(reg, call) };
    }
    return twilioError(400, 21201, 'Nothing to update: give Status, Twiml or Url');
  }
  return twilioError(404, 20404, `The requested resource /${parts.join('/')} was not found`);
}

// ---------------------------------------------------------------------------------------------
// Plivo

const plivoError = (status: number, error: string): Reply => ({ status, body: { api_id: crypto.randomUUID(), error } });

async function plivo(reg: Registry, req: IncomingMessage, parts: string[], params: Params): Promise<Reply> {
  const cfg = reg.options.plivo;
  const auth = basicAuth(req);
  if (!auth || auth.user !== cfg.authId || auth.pass !== cfg.authToken) return plivoError(401, 'Authentication credentials invalid');
  // parts: v1 Account {id} Call|Request [{uuid}]
  if (parts[1] !== 'Account' || parts[2] !== cfg.authId) return plivoError(404, 'not found');
  const path = `/${parts.join('/')}/`;
  if (parts[3] === 'Call' && parts.length === 4 && req.method === 'POST') {
    for (const f of ['from', 'to', 'answer_url'] as const) if (!one(params[f])) return plivoError(400, `${f} parameter is required`);
    const answerUrl = one(params.answer_url)!;
    const call = reg.place('PROVIDER_C', one(params.from)!, one(params.to)!, {
      answerUrl,
      answerMethod: method(params.answer_method),
      // Plivo posts the hangup to the answer_url when no hangup_url is given.
      statusUrl: one(params.hangup_url) || answerUrl,
      statusMethod: method(params.hangup_method),
      statusEvents: new Set(),
      ringUrl: one(params.ring_url),
      ringMethod: method(params.ring_method),
      machineDetection: one(params.machine_detection),
      ringTimeoutSeconds: num(params.ring_timeout),
      timeLimitSeconds: num(params.time_limit),
    });
    call.rec.rest.push({ method: 'POST', path, params });
    call.setStatus('queued');
    void call.runOutbound();
    return { status: 201, body: { api_id: crypto.randomUUID(), message: 'call fired', request_uuid: call.rec.requestUuid } };
  }
  if (parts[3] === 'Call' && parts.length === 6 && parts[5] === 'DTMF' && req.method === 'POST') {
    // Send digits on a live call: `digits` (0-9, *, #, w for a half-second pause), `leg` aleg (default) or bleg.
    const call = reg.find('PROVIDER_C', parts[4]!);
    call?.rec.rest.push({ method: 'POST', path, params });
    if (!call || call.over || call.rec.callSid !== parts[4]) return plivoError(404, 'not found');
    const digits = one(params.digits);
    if (!digits) return plivoError(400, 'digits parameter is required');
    if (!/^[0-9*#wW]+$/.test(digits)) return plivoError(400, 'digits must be 0-9, *, # or w');
    const leg = one(params.leg) ?? 'aleg';
    if (leg !== 'aleg' && leg !== 'bleg') return plivoError(400, 'leg must be aleg or bleg');
    if (!call.answeredAt) return plivoError(400, 'call is not answered yet');
    call.callee.keys(digits, 'rest');
    return { status: 202, body: { api_id: crypto.randomUUID(), message: 'digits sent' } };
  }
  if ((parts[3] === 'Call' || parts[3] === 'Request') && parts.length === 5) {
    const id = parts[4]!;
    const call = reg.find('PROVIDER_C', id);
    const live = call && !call.over && (parts[3] === 'Call' ? call.rec.callSid === id : call.rec.requestUuid === id && !call.answeredAt);
    call?.rec.rest.push({ method: req.method ?? 'GET', path, params });
    if (!call || !live) return plivoError(404, 'not found');
    if (req.method === 'DELETE') {
      await call.hangupByApi();
      return { status: 204 };
    }
    if (req.method === 'GET' && parts[3] === 'Call') {
      const c = call.rec;
      return { status: 200, body: { api_id: crypto.randomUUID(), call_uuid: c.callSid, call_status: c.status, direction: c.direction, from: c.from, to: c.to, request_uuid: c.requestUuid } };
    }
    if (req.method === 'POST' && parts[3] === 'Call') {
      const legs = one(params.legs);
      if (!legs || !['aleg', 'bleg', 'both'].includes(legs)) return plivoError(400, 'legs parameter must be aleg, bleg or both');
      const url = one(params.aleg_url);
      if (!url) return plivoError(400, 'aleg_url parameter is required');
      if (!call.answeredAt) return plivoError(400, 'call is not answered yet');
      void call.replaceInstructions(() => call.send({ url, method: method(params.aleg_method), params: call.answerParams(), ...call.signing() }));
      return { status: 202, body: { api_id: crypto.randomUUID(), message: 'call transferred' } };
    }
  }
  return plivoError(404, 'not found');
}

// ---------------------------------------------------------------------------------------------
// Exotel

function exotelReply(status: number, json: boolean, body: Record<string, unknown>): Reply {
  if (json) return { status, body };
  const toXml = (v: unknown): string =>
    v !== null && typeof v === 'object'
      ? Object.entries(v as Record<string, unknown>).map(([k, x]) => `<${k}>${toXml(x)}</${k}>`).join('')
      : v === null || v === undefined ? '' : String(v).replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return { status, xml: `<?xml version="1.0" encoding="UTF-8"?>\n<TwilioResponse>${toXml(body)}</TwilioResponse>` };
}

const exotelError = (status: number, json: boolean, message: string): Reply => exotelReply(status, json, { RestException: { Status: status, Message: message } });

function exotelCall(reg: Registry, call: Call): Record<string, unknown> {
  const c = call.rec;
  const sid = reg.options.exotel.accountSid;
  return {
    Call: {
      Sid: c.callSid,
      ParentCallSid: null,
      DateCreated: exotelTime(call.created),
      DateUpdated: exotelTime(),
      AccountSid: sid,
      To: c.from,
      From: c.to,
      PhoneNumberSid: c.from,
      Status: c.status || 'in-progress',
      StartTime: exotelTime(call.created),
      EndTime: call.endedAt ? exotelTime(call.endedAt) : null,
      Duration: call.over ? call.durationSeconds : null,
      Price: null,
      Direction: 'outbound-api',
      AnsweredBy: null,
      ForwardedFrom: null,
      CallerName: null,
      Uri: `/v1/Accounts/${sid}/Calls/${c.callSid}.json`,
      RecordingUrl: null,
    },
  };
}

async function exotel(reg: Registry, req: IncomingMessage, parts: string[], params: Params): Promise<Reply> {
  const cfg = reg.options.exotel;
  const last = parts[parts.length - 1] ?? '';
  const json = last.endsWith('.json');
  const auth = basicAuth(req);
  if (!auth || auth.user !== cfg.apiKey || auth.pass !== cfg.apiToken) return exotelError(401, json, 'Authentication is required to view this page.');
  if (parts[1] !== 'Accounts' || parts[2] !== cfg.accountSid) return exotelError(404, json, 'Not Found');
  const path = `/${parts.join('/')}`;
  if (parts.length === 5 && parts[3] === 'Calls' && /^connect(\.json)?$/.test(last) && req.method === 'POST') {
    const from = one(params.From);
    const callerId = one(params.CallerId);
    const url = one(params.Url);
    if (!from) return exotelError(400, json, 'Missing parameter: From');
    if (!callerId) return exotelError(400, json, 'Missing parameter: CallerId');
    if (!url) return exotelError(400, json, 'Missing parameter: Url (this emulator connects a number to a flow)');
    if (!url.startsWith(reg.flowUrl)) reg.log(`Exotel: flow ${url} is not the emulator's (${reg.flowUrl}); running the Voicebot flow anyway`);
    const events = new Set(
      Object.entries(params)
        .filter(([k]) => /^StatusCallbackEvents(\[\d*\])?$/.test(k))
        .flatMap(([, v]) => (Array.isArray(v) ? v : [v])),
    );
    const call = reg.place('PROVIDER_B', callerId, from, {
      answerUrl: `${reg.callbackBase(one(params.StatusCallback))}/provider_b/answer`,
      answerMethod: 'GET',
      statusUrl: one(params.StatusCallback),
      statusMethod: 'POST',
      statusEvents: events,
      statusJson: one(params.StatusCallbackContentType) === 'application/json',
      customField: one(params.CustomField),
      ringTimeoutSeconds: num(params.TimeOut),
      timeLimitSeconds: num(params.TimeLimit),
    });
    call.rec.rest.push({ method: 'POST', path, params });
    void call.runOutbound();
    // Exotel calls a connect request in-progress at once (it is dialling).
    return exotelReply(200, json, exotelCall(reg, call));
  }
  if (parts.length === 5 && parts[3] === 'Calls' && req.method === 'GET') {
    const call = reg.find('PROVIDER_B', last.replace(/\.json$/, ''));
    if (!call) return exotelError(404, json, 'Not Found');
    call.rec.rest.push({ method: 'GET', path, params });
    return exotelReply(200, json, exotelCall(reg, call));
  }
  return exotelError(404, json, 'Not Found');
}

/** Routes one REST request; false when the path is not a provider API. */
export async function handleRest(reg: Registry, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const url = new URL(req.url ?? '/', 'http://emulator');
  const parts = url.pathname.split('/').filter(Boolean);
  const api = parts[0] === '2010-04-01' ? twilio : parts[0] === 'v1' && parts[1] === 'Account' ? plivo : parts[0] === 'v1' && parts[1] === 'Accounts' ? exotel : undefined;
  if (!api) return false;
  let params: Params;
  try {
    params = (await readBody(req)).params;
  } catch {
    send(res, { status: 400, body: { error: 'unreadable body' } });
    return true;
  }
  for (const [k, v] of url.searchParams) if (params[k] === undefined) params[k] = v;
  reg.log(`REST ${req.method} ${url.pathname}`);
  send(res, await api(reg, req, parts, params));
  return true;
}

export const exotelFlowDescription = (dialerUrl: string) => ({
  flow: 'Dialer emulator flow',
  applets: [
    { type: 'voicebot', url: `${dialerUrl}/provider_b/answer`, method: 'GET', dynamic: true },
    { type: 'connect', url: `${dialerUrl}/provider_b/answer?transfer=1`, method: 'GET', dynamic: true },
    { type: 'hangup' },
  ],
  id: hex(4),
});
