/** Twilio's answer requests and status callbacks in Dialer's words. */
import { ProtocolError, type AnswerInfo, type CallPhase, type CallStatus, type EndKind } from '../provider.js';

type Params = Readonly<Record<string, string>>;

/** Every CallStatus word Twilio posts, with its phase and, when final, how the call ended. */
const STATUSES: Readonly<Record<string, { phase: CallPhase; end?: EndKind }>> = {
  queued: { phase: 'queued' },
  initiated: { phase: 'queued' },
  ringing: { phase: 'ringing' },
  'in-progress': { phase: 'answered' },
  completed: { phase: 'ended', end: 'completed' },
  busy: { phase: 'ended', end: 'busy' },
  'no-answer': { phase: 'ended', end: 'no_answer' },
  failed: { phase: 'ended', end: 'failed' },
  canceled: { phase: 'ended', end: 'canceled' },
};

/** Twilio's AnsweredBy (answering-machine detection) in Dialer's three words. */
export function answeredBy(value: string | undefined): 'human' | 'machine' | 'unknown' | undefined {
  if (!value) return undefined;
  if (value === 'human') return 'human';
  if (value.startsWith('machine_') || value === 'fax') return 'machine';
  return 'unknown';
}

function required(params: Params, name: string, what: string): string {
  const value = params[name]?.trim();
  if (!value) throw new ProtocolError(`The Twilio ${what} has no ${name}`);
  return value;
}

export function parseTwilioAnswer(params: Params): AnswerInfo {
  const info: AnswerInfo = {
    callSid: required(params, 'CallSid', 'answer request'),
    from: params.From ?? '',
    to: params.To ?? '',
    // inbound, or outbound-api (our REST call) / outbound-dial (a <Dial> leg).
    direction: params.Direction === 'inbound' ? 'inbound' : 'outbound',
  };
  const by = answeredBy(params.AnsweredBy);
  if (by) info.answeredBy = by;
  // DetectMessageEnd: machine_end_beep / machine_end_silence / machine_end_other once the greeting is over.
  const end = /^machine_end_(beep|silence|other)$/.exec(params.AnsweredBy ?? '')?.[1];
  if (end) info.greetingEnded = end as 'beep' | 'silence' | 'other';
  const detection = params.MachineDetectionDuration;
  if (by && detection !== undefined && /^\d+$/.test(detection.trim())) info.detectionMs = Number(detection.trim());
  return info;
}

export function parseTwilioStatus(params: Params): CallStatus {
  const callSid = required(params, 'CallSid', 'status callback');
  const word = required(params, 'CallStatus', 'status callback').toLowerCase();
  const known = STATUSES[word];
  if (!known) throw new ProtocolError(`Unknown Twilio call status "${word}"`);
  const status: CallStatus = { callSid, providerStatus: word, phase: known.phase };
  if (known.end) status.end = known.end;
  const duration = params.CallDuration;
  if (duration !== undefined && /^\d+$/.test(duration.trim())) status.durationSeconds = Number(duration.trim());
  const by = answeredBy(params.AnsweredBy);
  if (by) status.answeredBy = by;
  const reasons: string[] = [];
  if (params.ErrorCode) reasons.push(`error ${params.ErrorCode}${params.ErrorMessage ? `: ${params.ErrorMessage}` : ''}`);
  const sip = params.SipResponseCode;
  if (sip && /^\d+$/.test(sip) && Number(sip) >= 300) reasons.push(`SIP ${sip}`);
  if (reasons.length > 0) status.reason = reasons.join('; ');
  return status;
}
