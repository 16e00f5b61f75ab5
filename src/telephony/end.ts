/**
 * How a telephony call ended, as the lead lifecycle takes it (`CallEnd`): from what the provider
 * said (its final status, a machine's answer), the conversation the agent had, and a transfer.
 */
import type { CallEnd } from '../lifecycle/index.js';
import type { ConversationResult } from '../voice/index.js';
import type { AnswerInfo, EndKind } from './provider.js';

export interface CallFacts {
  answeredBy: AnswerInfo['answeredBy'];
  /** The media stream's end: the agent's result and the stored recording (undefined: no stream opened). */
  media: { result?: ConversationResult; recordingUrl?: string } | undefined;
  transferTo: string | undefined;
  /** The provider's duration. */
  durationSeconds: number | undefined;
  /** The recording's length, when the provider gave no duration. */
  spokenSeconds: number | undefined;
  /** Why Dialer ended the call, when it failed. */
  failure: string | undefined;
  /** The provider's final status. */
  endKind: EndKind | undefined;
  reason: string | undefined;
  /** Dialer hung up on its own stop (shutdown grace over) before the call ended. */
  cutByShutdown: boolean;
  /** What the call adds to the conversation's metaData (provider statuses, transfer events, keys sent). */
  meta: Record<string, unknown>;
}

export function callEnd(f: CallFacts): CallEnd {
  const { media } = f;
  // A machine the agent did not talk to (no message was to be left) is voicemail.
  if (f.answeredBy === 'machine' && !media?.result) return { kind: 'voicemail', durationSeconds: f.durationSeconds };
  // Dialer hung up on its own stop: whatever the agent made of the silence that followed is not
  // the customer's answer. The attempt is an error, so the lead is tried again (or ends `error`).
  if (f.cutByShutdown) return { kind: 'error', error: f.failure ?? 'hung up: Dialer stopped before the call ended' };
  if (media?.result) {
    const transferred = f.transferTo !== undefined;
    return {
      kind: 'completed',
      outcome: transferred ? 'TRANSFERRED' : media.result.outcome,
      durationSeconds: f.durationSeconds ?? Math.round(f.spokenSeconds ?? 0),
      metaData: { ...media.result.metaData, ...f.meta, ...(transferred ? { transferred_to: f.transferTo } : {}) },
      recordingUrl: media.recordingUrl,
      sentiment: media.result.sentiment,
      cost: media.result.cost,
      traceScores: media.result.traceScores,
    };
  }
  if (f.failure) return { kind: 'error', error: f.failure };
  switch (f.endKind) {
    case 'busy':
    case 'no_answer':
    case 'failed':
      return { kind: f.endKind, error: f.reason, durationSeconds: f.durationSeconds };
    case 'voicemail':
      return { kind: 'voicemail', durationSeconds: f.durationSeconds };
    case 'canceled':
      return { kind: 'no_answer', error: f.reason ?? 'the call was canceled before it was answered' };
    case 'completed':
      return { kind: 'error', error: 'the call was answered but its media stream never connected' };
    default:
      return { kind: 'error', error: 'the call ended without a final status from the provider' };
  }
}
