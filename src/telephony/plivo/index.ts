/**
 * Plivo Voice (slot PROVIDER_C, path provider_c): REST calls, X-Plivo-Signature-V3, Plivo XML and
 * Audio Streams. This file is the folder's only public door.
 */
import type { Context } from '@opentelemetry/api';
import { ProviderError, type ProviderKit } from '../provider.js';
import { blockMarkup, hangupMarkup, streamMarkup, transferMarkup } from './markup.js';
import { plivoRest, type PlivoCredentials } from './rest.js';
import { PlivoSerializer } from './serializer.js';
import { verifyPlivoRequest } from './signature.js';
import { parsePlivoAnswer, parsePlivoStatus } from './status.js';

export { plivoSignatureV3 } from './signature.js';

export type PlivoOptions = PlivoCredentials;

/** How long Plivo listens before deciding human or machine (its default; 2,000 to 10,000 ms). */
const MACHINE_DETECTION_MS = 5000;

export function createPlivoKit(options: PlivoOptions): ProviderKit {
  const rest = plivoRest(options);
  const call = (id: string) => `Call/${encodeURIComponent(id)}/`;
  // A POST starts something (a call, a transfer, keys): sent again only if it never left.
  const post = (resource: string, json: Record<string, unknown>, action: string, traceContext: Context | undefined) =>
    rest.expectOk({ method: 'POST', resource, json, idempotent: false, action, traceContext });
  // A DELETE ends a call or a queued request: ending it twice is harmless.
  const remove = (resource: string, action: string, traceContext: Context | undefined) =>
    rest.request({ method: 'DELETE', resource, idempotent: true, action, traceContext });
  return {
    slot: 'PROVIDER_C',
    path: 'provider_c',
    label: 'Plivo',

    async placeCall(request, traceContext) {
      const body: Record<string, unknown> = {
        from: request.from,
        to: request.to,
        answer_url: request.answerUrl,
        answer_method: 'POST',
        hangup_url: request.statusUrl,
        hangup_method: 'POST',
        ring_url: request.statusUrl,
        ring_method: 'POST',
        ring_timeout: Math.round(request.ringTimeoutSeconds),
        time_limit: Math.round(request.maxDurationSeconds),
      };
      if (request.machineDetection) {
        // Synchronous detection: Plivo sends Machine=true/false with the answer_url request. It has
        // no end-of-greeting mode: Dialer listens for the beep itself.
        body.machine_detection = 'true';
        body.machine_detection_time = MACHINE_DETECTION_MS;
      }
      if (request.sendDigits) body.send_digits = request.sendDigits;
      const answer = await post('Call/', body, 'call creation', traceContext);
      const uuid = answer.body?.request_uuid;
      const requestUuid = Array.isArray(uuid) ? uuid[0] : uuid;
      if (typeof requestUuid !== 'string' || requestUuid === '') {
        throw new ProviderError('Plivo accepted the call but its answer has no request_uuid', answer.status, false);
      }
      return { callSid: requestUuid };
    },

    async hangup(callSid, traceContext) {
      const live = await remove(call(callSid), 'hang-up', traceContext);
      if (live.ok) return;
      if (live.status !== 404) throw rest.failure('hang-up', live);
      // Not a live call: maybe a call still queued, known by its request_uuid.
      const queued = await remove(`Request/${encodeURIComponent(callSid)}/`, 'hang-up of a queued call', traceContext);
      if (queued.ok || queued.status === 404) return;
      throw rest.failure('hang-up of a queued call', queued);
    },

    async transfer(callSid, request, traceContext) {
      await post(call(callSid), { legs: 'aleg', aleg_url: request.markupUrl, aleg_method: 'POST' }, 'transfer', traceContext);
    },

    // Keys on a live call: the Send Digits request (POST Call/{uuid}/DTMF/), the stream goes on.
    keys: { onAnswer: true, live: 'api' },

    async sendDigits(callSid, digits, _streamUrl, traceContext) {
      await post(`${call(callSid)}DTMF/`, { digits, leg: 'aleg' }, 'sending keys', traceContext);
    },

    verify: (request) => verifyPlivoRequest(options.authToken, request),

    parseAnswer: parsePlivoAnswer,
    parseStatus: parsePlivoStatus,
    streamMarkup,
    blockMarkup,
    transferMarkup,
    hangupMarkup,
    serializer: () => new PlivoSerializer(),
  };
}
