/**
 * Plivo's answer requests and callbacks in Dialer's words: the answer_url request, ring_url
 * (CallStatus ringing, Event Ring), hangup_url (Event Hangup: CallStatus, HangupCause, Duration,
 * BillDuration, TotalCost, Machine) and the `<Stream statusCallbackUrl>` events (StartStream, …).
 */
import { ProtocolError, type AnswerInfo, type CallPhase, type CallStatus, type EndKind } from '../provider.js';

type Params = Readonly<Record<string, string>>;

/** Every CallStatus word Plivo posts, with its phase and, when final, how the call ended. */
const STATUSES: Readonly<Record<string, { phase: CallPhase; end?: EndKind }>> = {
  queued: { phase: 'queued' },
  ringing: { phase: 'ringing' },
  'early-media': { phase: 'ringing' },
  'in-progress': { phase: 'answered' },
  answered: { phase: 'answered' },
  completed: { phase: 'ended', end: 'completed' },
  busy: { phase: 'ended', end: 'busy' },
  failed: { phase: 'ended', end: 'failed' },
  timeout: { phase: 'ended', end: 'no_answer' },
  'no-answer': { phase: 'ended', end: 'no_answer' },
  cancel: { phase: 'ended', end: 'canceled' },
  canceled: { phase: 'ended', end: 'canceled' },
  cancelled: { phase: 'ended', end: 'canceled' },
};

/** Plivo's Machine field (machine detection): "true" or "false". */
function machine(value: string | undefined): 'human' | 'machine' | undefined {
  const v = value?.trim().toLowerCase();
  return v === 'true' ? 'machine' : v === 'false' ? 'human' : undefined;
}

export function parsePlivoAnswer(params: Params): AnswerInfo {
  const callSid = params.CallUUID?.trim();
  if (!callSid) throw new ProtocolError('The Plivo answer request has no CallUUID');
  const info: AnswerInfo = {
    callSid,
    from: params.From ?? '',
    to: params.To ?? '',
    direction: params.Direction?.toLowerCase() === 'inbound' ? 'inbound' : 'outbound',
  };
  const by = machine(params.Machine);
  if (by) info.answeredBy = by;
  return info;
}

function number(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

export function parsePlivoStatus(params: Params): CallStatus {
  // A call that never connected may only carry its RequestUUID (what placeCall returned).
  const callSid = params.CallUUID?.trim() || params.RequestUUID?.trim();
  if (!callSid) throw new ProtocolError('The Plivo callback has neither CallUUID nor RequestUUID');
  const event = params.Event?.trim() ?? '';
  let word = params.CallStatus?.trim().toLowerCase() ?? '';
  if (word === '' && event === 'Ring') word = 'ringing';
  let known = STATUSES[word];
  if (!known && word === '' && /Stream|Audio/.test(event)) {
    // A <Stream statusCallbackUrl> event: the call is up (the hangup_url says when it ends).
    known = { phase: 'answered' };
    word = event;
  }
  if (!known) throw new ProtocolError(word ? `Unknown Plivo call status "${word}"` : 'The Plivo callback has no CallStatus');
  const status: CallStatus = { callSid, providerStatus: word, phase: known.phase };
  if (known.end) status.end = known.end;
  const duration = number(params.Duration) ?? number(params.BillDuration);
  if (duration !== undefined && known.phase === 'ended') status.durationSeconds = duration;
  const by = machine(params.Machine);
  if (by) status.answeredBy = by;
  if (known.end && known.end !== 'completed') {
    const cause = params.HangupCause || params.HangupCauseName;
    if (cause) status.reason = params.HangupCauseCode ? `${cause} (${params.HangupCauseCode})` : cause;
  }
  const cost = number(params.TotalCost);
  if (cost !== undefined) status.cost = Math.abs(cost);
  return status;
}
