/**
 * The status callbacks each provider posts, with its own field names: Twilio status callbacks
 * (signed form posts), Plivo ring/hangup URLs (signed V3), Exotel StatusCallback (unsigned, JSON or
 * form), and the events of a <Dial> transfer leg.
 */
import type { Call } from './call.js';
import { exotelTime, plivoTime, type Delivered, type XmlNode } from './util.js';

/** The answer-URL fields (also sent with Plivo's aleg_url, Twilio's Redirect and Dial action). */
export function answerParams(call: Call): Record<string, string> {
  const c = call.rec;
  const inbound = c.direction === 'inbound';
  const machine = call.script.answer === 'voicemail';
  if (call.provider === 'PROVIDER_A') {
    const p = twilioCall(call, inbound ? 'ringing' : 'in-progress');
    if (call.setup.machineDetection) {
      p.AnsweredBy = machine ? (call.machineEnd?.answeredBy ?? (call.setup.machineDetection === 'DetectMessageEnd' ? 'machine_end_beep' : 'machine_start')) : 'human';
      if (call.machineEnd) p.MachineDetectionDuration = String(call.machineEnd.durationMs);
    }
    return p;
  }
  if (call.provider === 'PROVIDER_C') {
    const p: Record<string, string> = {
      CallUUID: c.callSid,
      From: c.from,
      To: c.to,
      CallerName: c.from,
      Direction: inbound ? 'inbound' : 'outbound',
      CallStatus: inbound ? 'ringing' : 'in-progress',
      Event: 'StartApp',
      ALegUUID: c.callSid,
      SessionStart: plivoTime(call.created),
    };
    if (c.requestUuid) (p.RequestUUID = c.requestUuid), (p.ALegRequestUUID = c.requestUuid);
    if (call.setup.machineDetection) p.Machine = machine ? 'true' : 'false';
    return p;
  }
  // Exotel's Voicebot applet: CallFrom is the customer, CallTo the ExoPhone, in both directions.
  const customer = inbound ? c.from : c.to;
  const exophone = inbound ? c.to : c.from;
  const p: Record<string, string> = {
    CallSid: c.callSid,
    CallFrom: customer,
    CallTo: exophone,
    From: customer,
    To: exophone,
    Direction: inbound ? 'incoming' : 'outbound-api',
    Created: exotelTime(call.created),
    CurrentTime: exotelTime(),
  };
  if (call.setup.customField !== undefined) p.CustomField = call.setup.customField;
  return p;
}

export function signing(call: Call): { sign?: { kind: 'twilio' | 'plivo'; authToken: string } } {
  if (call.provider === 'PROVIDER_A') return { sign: { kind: 'twilio', authToken: call.ctx.options.twilio.authToken } };
  if (call.provider === 'PROVIDER_C') return { sign: { kind: 'plivo', authToken: call.ctx.options.plivo.authToken } };
  return {};
}

const TWILIO_SIP: Record<string, string> = { completed: '200', busy: '486', 'no-answer': '487', failed: '404', canceled: '487' };
const PLIVO_CAUSE: Record<string, [string, string]> = {
  completed: ['NORMAL_CLEARING', 'Normal Hangup'],
  busy: ['USER_BUSY', 'Busy Line'],
  'no-answer': ['NO_ANSWER', 'No Answer'],
  timeout: ['ALLOTTED_TIMEOUT', 'Ring Timeout Reached'],
  failed: ['UNALLOCATED_NUMBER', 'Invalid Destination Address'],
  cancel: ['ORIGINATOR_CANCEL', 'Cancelled'],
};
const PLIVO_SOURCE: Record<string, string> = { callee: 'Callee', dialer: 'Plivo', api: 'API Request', limit: 'Plivo', error: 'Error', close: 'Plivo' };

/** The fields of a Twilio call in every request about it. */
function twilioCall(call: Call, status: string): Record<string, string> {
  const c = call.rec;
  return {
    CallSid: c.callSid,
    AccountSid: call.ctx.options.twilio.accountSid,
    From: c.from,
    To: c.to,
    Caller: c.from,
    Called: c.to,
    CallStatus: status,
    ApiVersion: '2010-04-01',
    Direction: c.direction === 'inbound' ? 'inbound' : 'outbound-api',
  };
}

function twilioBase(call: Call, status: string): Record<string, string> {
  return {
    ...twilioCall(call, status),
    CallbackSource: 'call-progress-events',
    Timestamp: new Date().toUTCString().replace('GMT', '+0000'),
    SequenceNumber: String(call.twilioSeq++),
  };
}

/** A progress event before the end: Twilio initiated/ringing/answered, Plivo ring_url, Exotel answered. */
export async function statusEvent(call: Call, event: 'initiated' | 'ringing' | 'answered'): Promise<void> {
  const s = call.setup;
  if (call.rec.direction === 'inbound') return;
  if (call.provider === 'PROVIDER_A') {
    if (!s.statusUrl || !s.statusEvents.has(event)) return;
    const status = event === 'answered' ? 'in-progress' : event;
    const params = twilioBase(call, status);
    if (event === 'answered' && s.machineDetection) params.AnsweredBy = call.answerParams().AnsweredBy ?? 'unknown';
    await call.send({ url: s.statusUrl, method: s.statusMethod, params, ...call.signing() });
  } else if (call.provider === 'PROVIDER_C') {
    if (event !== 'ringing' || !s.ringUrl) return;
    const c = call.rec;
    const params: Record<string, string> = { CallUUID: c.callSid, RequestUUID: c.requestUuid ?? '', From: c.from, To: c.to, Direction: 'outbound', CallStatus: 'ringing', Event: 'Ring', ALegUUID: c.callSid, ALegRequestUUID: c.requestUuid ?? '' };
    await call.send({ url: s.ringUrl, method: s.ringMethod ?? 'POST', params, ...call.signing() });
  } else if (event === 'answered' && s.statusUrl && s.statusEvents.has('answered')) {
    await call.send({ url: s.statusUrl, method: 'POST', params: exotelParams(call, 'in-progress', 'answered'), json: s.statusJson });
  }
}

function exotelParams(call: Call, status: string, eventType?: string): Record<string, string> {
  const c = call.rec;
  const p: Record<string, string> = { CallSid: c.callSid, DateUpdated: exotelTime(), Status: status, RecordingUrl: '' };
  if (!eventType) return p;
  const inbound = c.direction === 'inbound';
  const duration = String(call.durationSeconds);
  Object.assign(p, {
    EventType: eventType,
    DateCreated: exotelTime(call.created),
    To: inbound ? c.to : c.from,
    From: inbound ? c.from : c.to,
    PhoneNumberSid: inbound ? c.to : c.from,
    StartTime: exotelTime(call.created),
    EndTime: eventType === 'terminal' ? exotelTime(call.endedAt) : '',
    ConversationDuration: duration,
    Direction: inbound ? 'inbound' : 'outbound-api',
    CustomField: call.setup.customField ?? '',
    Legs: JSON.stringify([
      { OnCallDuration: Number(duration), Status: status, AnsweredBy: 'NA' },
      ...(call.transferSeconds !== undefined ? [{ OnCallDuration: call.transferSeconds, Status: 'completed', AnsweredBy: 'HUMAN' }] : []),
    ]),
  });
  return p;
}

/** The final status callback (always posted when there is a URL for it). */
export async function finalCallback(call: Call, status: string, source: string): Promise<void> {
  const s = call.setup;
  const c = call.rec;
  const duration = String(call.durationSeconds);
  if (call.provider === 'PROVIDER_A') {
    if (!s.statusUrl) return;
    const params = twilioBase(call, status);
    Object.assign(params, { CallDuration: duration, Duration: String(Math.ceil(call.durationSeconds / 60)), SipResponseCode: TWILIO_SIP[status] ?? '200' });
    if (s.machineDetection && call.answeredAt) params.AnsweredBy = call.answerParams().AnsweredBy ?? 'unknown';
    await call.send({ url: s.statusUrl, method: s.statusMethod, params, ...call.signing() });
  } else if (call.provider === 'PROVIDER_C') {
    if (!s.statusUrl) return;
    const [cause, causeName] = PLIVO_CAUSE[status] ?? ['NORMAL_CLEARING', 'Normal Hangup'];
    const params: Record<string, string> = {
      CallUUID: c.callSid,
      From: c.from,
      To: c.to,
      Direction: c.direction,
      CallStatus: status,
      Event: 'Hangup',
      HangupCause: cause,
      HangupCauseName: causeName,
      HangupSource: PLIVO_SOURCE[source] ?? 'Plivo',
      Duration: duration,
      BillDuration: duration,
      StartTime: plivoTime(call.created),
      AnswerTime: call.answeredAt ? plivoTime(call.answeredAt) : '',
      EndTime: plivoTime(call.endedAt),
      ALegUUID: c.callSid,
    };
    if (c.requestUuid) (params.RequestUUID = c.requestUuid), (params.ALegRequestUUID = c.requestUuid);
    await call.send({ url: s.statusUrl, method: s.statusMethod, params, ...call.signing() });
  } else {
    if (!s.statusUrl) return;
    const word = ['completed', 'busy', 'no-answer', 'failed'].includes(status) ? status : 'failed';
    const subscribed = s.statusEvents.has('terminal') || c.direction === 'inbound';
    const params = exotelParams(call, word, subscribed ? 'terminal' : undefined);
    const jsonValues = params.Legs ? { Legs: JSON.parse(params.Legs) as unknown, ConversationDuration: Number(params.ConversationDuration) } : undefined;
    await call.send({ url: s.statusUrl, method: 'POST', params, json: s.statusJson, jsonValues });
  }
}

/** The transfer leg is answered: Twilio <Number statusCallback> events, Plivo <Dial callbackUrl> answer. */
export async function dialStarted(call: Call, dial: XmlNode, number: XmlNode | undefined, child: string, to: string): Promise<void> {
  const c = call.rec;
  if (call.provider === 'PROVIDER_A') {
    const url = number?.attrs.statusCallback;
    if (!url) return;
    const events = new Set((number?.attrs.statusCallbackEvent ?? '').split(/[\s,]+/).filter(Boolean));
    for (const e of ['initiated', 'ringing', 'answered'] as const) {
      if (!events.has(e)) continue;
      const params = { ...twilioBase(call, e === 'answered' ? 'in-progress' : e), CallSid: child, ParentCallSid: c.callSid, From: dial.attrs.callerId ?? c.to, To: to, Called: to, Direction: 'outbound-dial' };
      await call.send({ url, method: number?.attrs.statusCallbackMethod === 'GET' ? 'GET' : 'POST', params, ...call.signing() });
    }
  } else if (call.provider === 'PROVIDER_C' && dial.attrs.callbackUrl) {
    const params = { DialAction: 'answer', DialALegUUID: c.callSid, DialBLegUUID: child, DialBLegStatus: 'answer', DialBLegTo: to, DialBLegFrom: dial.attrs.callerId ?? c.to, CallUUID: c.callSid, Event: 'DialAnswer' };
    await call.send({ url: dial.attrs.callbackUrl, method: dial.attrs.callbackMethod === 'GET' ? 'GET' : 'POST', params, ...call.signing() });
  }
}

/** The transfer leg hung up: completed events, then the Dial action URL (whose answer, when there is one, replaces the instructions). */
export async function dialEnded(call: Call, dial: XmlNode, number: XmlNode | undefined, child: string, to: string, seconds: number): Promise<Delivered | undefined> {
  const c = call.rec;
  const method = dial.attrs.method === 'GET' ? 'GET' : 'POST';
  if (call.provider === 'PROVIDER_A') {
    const url = number?.attrs.statusCallback;
    if (url) {
      const params = { ...twilioBase(call, 'completed'), CallSid: child, ParentCallSid: c.callSid, From: dial.attrs.callerId ?? c.to, To: to, Called: to, Direction: 'outbound-dial', CallDuration: String(seconds) };
      await call.send({ url, method: number?.attrs.statusCallbackMethod === 'GET' ? 'GET' : 'POST', params, ...call.signing() });
    }
    if (!dial.attrs.action || call.over) return undefined;
    const params = { ...call.answerParams(), DialCallStatus: 'completed', DialCallSid: child, DialCallDuration: String(seconds) };
    return call.send({ url: dial.attrs.action, method, params, ...call.signing() });
  }
  if (call.provider === 'PROVIDER_C') {
    if (dial.attrs.callbackUrl) {
      const params = { DialAction: 'hangup', DialALegUUID: c.callSid, DialBLegUUID: child, DialBLegStatus: 'hangup', DialBLegHangupCause: 'NORMAL_CLEARING', DialBLegDuration: String(seconds), DialBLegBillDuration: String(seconds), DialBLegTo: to, CallUUID: c.callSid, Event: 'DialHangup' };
      await call.send({ url: dial.attrs.callbackUrl, method: dial.attrs.callbackMethod === 'GET' ? 'GET' : 'POST', params, ...call.signing() });
    }
    if (!dial.attrs.action || call.over) return undefined;
    const params = { ...call.answerParams(), DialStatus: 'completed', DialALegUUID: c.callSid, DialBLegUUID: child, DialHangupCause: 'NORMAL_CLEARING' };
    return call.send({ url: dial.attrs.action, method, params, ...call.signing() });
  }
  return undefined;
}
