import type { Context } from '@opentelemetry/api';
import type { CallEnd } from '../lifecycle/index.js';
import type { CallContext, Disclosure, VoicemailPolicy } from '../voice/index.js';

/**
 * The seam between the lead lifecycle and a telephony provider. The scheduler asks a driver to
 * place one call and waits for it to end; the driver (Twilio, Exotel, Plivo, or the emulator's)
 * carries the call and its conversation and reports how it ended.
 */

export interface DialRequest {
  leadId: string;
  attempt: number;
  /** E.164 number to call. */
  to: string;
  /** E.164 caller ID from the outbound number pool. */
  from: string;
  templateId: string;
  payload: Record<string, unknown>;
  executionMode: string;
  /** The lead's reseller (per-reseller feature flags). */
  resellerId?: string;
  /** What to do when a machine answers (the configuration's voicemail_action and voicemail_message); default: hang up. */
  voicemail?: VoicemailPolicy;
  /** Offer the agent's built-in opt_out function (the configuration's opt_out_enabled). */
  optOut?: boolean;
  /** The lead's calling-window time zone (IANA). */
  timeZone?: string;
  /** Spoken before the agent's first line (the configuration's disclosure, in the call's language). */
  disclosure?: Disclosure;
  /** Called once the provider has accepted the call, with its call SID. */
  onCallId(callId: string): void;
  /** Aborted when Dialer shuts down past its grace period: hang up and resolve. */
  signal: AbortSignal;
  /** The OpenTelemetry context of the attempt's `call` span: the dial and the conversation are traced under it. */
  traceContext?: Context;
}

export interface CallResult {
  callId?: string;
  end: CallEnd;
}

export interface Driver {
  /** PROVIDER_A, PROVIDER_B or PROVIDER_C. */
  readonly provider: string;
  readonly label: string;
  /** Places the call and resolves when it has ended. Never rejects: failures are `{kind: 'error'}`. */
  dial(request: DialRequest): Promise<CallResult>;
}

/** The drivers a worker can dial with, by provider. */
export type Drivers = ReadonlyMap<string, Driver>;

/**
 * What the agent of an outbound call knows of it, from its dial request (every driver's calls):
 * the lead, its variables, both numbers, the edges of the call it asked for, its trace. The
 * driver says whether a machine is detected and, once placed, the call's id.
 */
export function outboundContext(request: DialRequest, voicemailDetection: boolean, callId?: string): CallContext {
  const dialDigits = typeof request.payload.dial_digits === 'string' && request.payload.dial_digits !== '' ? request.payload.dial_digits : undefined;
  return {
    ...(callId ? { callId } : {}),
    leadId: request.leadId,
    templateId: request.templateId,
    payload: request.payload,
    direction: 'outbound',
    ourNumber: request.from,
    theirNumber: request.to,
    voicemailDetection,
    ...(request.voicemail ? { voicemail: request.voicemail } : {}),
    ...(request.optOut !== undefined ? { optOut: request.optOut } : {}),
    ...(request.timeZone ? { timeZone: request.timeZone } : {}),
    ...(request.disclosure ? { disclosure: request.disclosure } : {}),
    ...(dialDigits ? { dialDigits } : {}),
    ...(request.traceContext ? { traceContext: request.traceContext } : {}),
  };
}
