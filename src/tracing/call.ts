/**
 * The spans Dialer opens around a call, outside the voice engine: the root `call` span (one trace
 * per dialled attempt) and its `dial` child. The voice engine adds `turn` spans (with `stt`,
 * `llm`, `tts`, `hook` children) under the same root through the context the call carries.
 *
 * Terminology
 * - trace: one dialled attempt of a lead. Its id is stored on the lead (`metaData.trace_id`); the
 *   root span carries the lead id and the provider's call id (`dialer.call_id`, and Langfuse's
 *   session id), so a trace is found from a lead either way.
 * - scores: the numbers of the lead's `trace_scores`, also on the root span as `dialer.score.<name>`.
 *
 * Attributes follow OpenTelemetry's conventions where one exists, Dialer's own under `dialer.*`,
 * and Langfuse's `langfuse.*` names (its OTLP ingestion maps them to trace name, session, user,
 * tags and metadata). Times are in milliseconds.
 */
import { context, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

export const TRACER_NAME = 'dialer';

export interface CallSpanInfo {
  leadId: string;
  attempt: number;
  requestId?: string;
  template?: string;
  templateId?: string;
  executionMode?: string;
  /** PROVIDER_A, PROVIDER_B, PROVIDER_C. */
  provider: string;
  /** Default outbound (a dialled lead); inbound calls are traced from their answer. */
  direction?: 'outbound' | 'inbound';
}

/** The end of an attempt as the scheduler sees it (a CallResult, without importing telephony). */
export interface CallSpanEnd {
  callId?: string;
  /** completed, no_answer, busy, failed, voicemail, error. */
  kind: string;
  outcome: string;
  durationSeconds?: number;
  error?: string;
  scores?: Record<string, number>;
}

export interface CallSpan {
  readonly span: Span;
  /** The context whose active span is the call: parent of `dial` and of the voice engine's turns. */
  readonly context: Context;
  /** The W3C trace id (32 hex digits) when this call is traced; undefined when tracing is off. */
  readonly traceId: string | undefined;
  callId(callId: string): void;
  end(result: CallSpanEnd): void;
}

const metadata = (key: string) => `langfuse.trace.metadata.${key}`;

export function startCallSpan(info: CallSpanInfo): CallSpan {
  const started = performance.now();
  const span = trace.getTracer(TRACER_NAME).startSpan('call', { root: true });
  const recording = span.isRecording();
  if (recording) {
    const attributes: Attributes = {
      'dialer.lead_id': info.leadId,
      'dialer.attempt': info.attempt,
      'dialer.provider': info.provider,
      'dialer.call_direction': info.direction ?? 'outbound',
      'langfuse.trace.name': 'call',
      // Langfuse reads langfuse.user.id or the OpenTelemetry user.id (its own SDK sends the latter).
      'langfuse.user.id': info.leadId,
      'user.id': info.leadId,
      'langfuse.trace.tags': [
        info.provider,
        ...(info.template ? [info.template] : []),
        ...(info.executionMode ? [info.executionMode] : []),
        ...(info.direction === 'inbound' ? ['inbound'] : []),
      ],
      [metadata('lead_id')]: info.leadId,
      [metadata('attempt')]: info.attempt,
      [metadata('provider')]: info.provider,
    };
    if (info.requestId) attributes['dialer.request_id'] = info.requestId;
    if (info.template) Object.assign(attributes, { 'dialer.template': info.template, [metadata('template')]: info.template });
    if (info.templateId) attributes['dialer.template_id'] = info.templateId;
    if (info.executionMode) Object.assign(attributes, { 'dialer.execution_mode': info.executionMode, [metadata('execution_mode')]: info.executionMode });
    span.setAttributes(attributes);
  }
  const traceId = recording ? span.spanContext().traceId : undefined;
  let ended = false;
  const setCallId = (callId: string) => {
    if (recording) span.setAttributes({ 'dialer.call_id': callId, 'langfuse.session.id': callId, 'session.id': callId, [metadata('call_id')]: callId });
  };
  return {
    span,
    context: trace.setSpan(context.active(), span),
    traceId,
    callId: setCallId,
    end(result) {
      if (ended) return;
      ended = true;
      if (recording) {
        if (result.callId) setCallId(result.callId);
        const scores = result.scores ?? {};
        const attributes: Attributes = {
          'dialer.end_kind': result.kind,
          'dialer.outcome': result.outcome,
          'dialer.duration_ms': Math.round(performance.now() - started),
          [metadata('outcome')]: result.outcome,
          [metadata('trace_scores')]: JSON.stringify(scores),
          'langfuse.trace.output': JSON.stringify({ outcome: result.outcome, trace_scores: scores }),
        };
        if (result.durationSeconds !== undefined) attributes['dialer.call_duration_seconds'] = result.durationSeconds;
        for (const [name, value] of Object.entries(scores)) attributes[`dialer.score.${name}`] = value;
        span.setAttributes(attributes);
        if (result.kind === 'error') span.setStatus({ code: SpanStatusCode.ERROR, ...(result.error ? { message: result.error } : {}) });
      }
      span.end();
    },
  };
}

/** How the placement of a call ended: answered, or the way it failed. */
export type DialResult = 'answered' | 'refused' | string;

export interface DialSpan {
  callId(callId: string): void;
  /** Idempotent: the first result wins. */
  end(result: DialResult, error?: string): void;
}

const NO_DIAL: DialSpan = { callId: () => {}, end: () => {} };

/**
 * The placement of a call over the provider's REST API, until it is answered or fails. A child of
 * the call span in `parent`; nothing when there is none or it is not recorded.
 */
export function startDialSpan(parent: Context | undefined, attributes: { provider: string; label: string; machineDetection?: boolean; ringTimeoutSeconds?: number }): DialSpan {
  if (!parent || !trace.getSpan(parent)?.isRecording()) return NO_DIAL;
  const started = performance.now();
  const span = trace.getTracer(TRACER_NAME).startSpan(
    'dial',
    {
      attributes: {
        'dialer.provider': attributes.provider,
        'dialer.provider_label': attributes.label,
        ...(attributes.machineDetection !== undefined ? { 'dialer.dial.machine_detection': attributes.machineDetection } : {}),
        ...(attributes.ringTimeoutSeconds !== undefined ? { 'dialer.dial.ring_timeout_seconds': attributes.ringTimeoutSeconds } : {}),
      },
    },
    parent,
  );
  let ended = false;
  return {
    callId: (callId) => span.setAttribute('dialer.call_id', callId),
    end(result, error) {
      if (ended) return;
      ended = true;
      span.setAttributes({ 'dialer.dial.result': result, 'dialer.duration_ms': Math.round(performance.now() - started) });
      if (result !== 'answered') span.setStatus({ code: result === 'refused' || result === 'error' ? SpanStatusCode.ERROR : SpanStatusCode.UNSET, ...(error ? { message: error } : {}) });
      span.end();
    },
  };
}
