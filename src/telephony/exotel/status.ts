/** Exotel's answer requests and status callbacks, read in Dialer's terms. */
import { ProtocolError, type AnswerInfo, type CallStatus } from '../provider.js';

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

function str(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

export function parseExotelAnswer(params: Readonly<Record<string, string>>): AnswerInfo {
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
}

export function parseExotelStatus(params: Readonly<Record<string, string>>): CallStatus {
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
}
