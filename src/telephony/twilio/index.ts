/**
 * Twilio Programmable Voice (slot PROVIDER_A, path provider_a): REST calls, X-Twilio-Signature,
 * TwiML and Media Streams. This file is the folder's only public door.
 */
import type { Context } from '@opentelemetry/api';
import { ProviderError, type ProviderKit } from '../provider.js';
import { blockMarkup, digitsMarkup, hangupMarkup, streamMarkup, transferMarkup } from './markup.js';
import { twilioErrorCode, twilioRest, type TwilioCredentials } from './rest.js';
import { TwilioSerializer } from './serializer.js';
import { verifyTwilioRequest } from './signature.js';
import { parseTwilioAnswer, parseTwilioStatus } from './status.js';

export { twilioSignature } from './signature.js';

export type TwilioOptions = TwilioCredentials;

/** Twilio error 21220: the call is not in progress (it has already ended). */
const CALL_NOT_IN_PROGRESS = 21220;

function callResource(callSid: string): string {
  return `Calls/${encodeURIComponent(callSid)}.json`;
}

export function createTwilioKit(options: TwilioOptions): ProviderKit {
  const rest = twilioRest(options);
  // New instructions for a live call: a second one could dial or play twice, so never repeated.
  const update = (callSid: string, form: URLSearchParams, action: string, traceContext: Context | undefined) =>
    rest.expectOk({ method: 'POST', resource: callResource(callSid), form, idempotent: false, action, traceContext });
  return {
    slot: 'PROVIDER_A',
    path: 'provider_a',
    label: 'Twilio',

    async placeCall(request, traceContext) {
      const form = new URLSearchParams({
        To: request.to,
        From: request.from,
        Url: request.answerUrl,
        Method: 'POST',
        StatusCallback: request.statusUrl,
        StatusCallbackMethod: 'POST',
      });
      for (const event of ['initiated', 'ringing', 'answered', 'completed']) form.append('StatusCallbackEvent', event);
      form.set('Timeout', String(Math.round(request.ringTimeoutSeconds)));
      form.set('TimeLimit', String(Math.round(request.maxDurationSeconds)));
      // Synchronous AMD: Twilio waits for the verdict (with DetectMessageEnd, for the end of the
      // greeting) and sends AnsweredBy with the answer request.
      if (request.machineDetection) form.set('MachineDetection', request.machineDetection === 'message_end' ? 'DetectMessageEnd' : 'Enable');
      if (request.sendDigits) form.set('SendDigits', request.sendDigits);
      const answer = await rest.expectOk({ method: 'POST', resource: 'Calls.json', form, idempotent: false, action: 'call creation', traceContext });
      const sid = answer.body?.sid;
      if (typeof sid !== 'string' || sid === '') throw new ProviderError('Twilio created a call but its answer has no sid', answer.status, false);
      return { callSid: sid };
    },

    async hangup(callSid, traceContext) {
      // Completing a completed call changes nothing (Twilio answers 21220): safe to send again.
      const form = new URLSearchParams({ Status: 'completed' });
      const answer = await rest.request({ method: 'POST', resource: callResource(callSid), form, idempotent: true, action: 'hang-up', traceContext });
      if (answer.ok || answer.status === 404) return;
      if (answer.status === 400 && twilioErrorCode(answer) === CALL_NOT_IN_PROGRESS) return;
      throw rest.failure('hang-up', answer);
    },

    async transfer(callSid, request, traceContext) {
      await update(callSid, new URLSearchParams({ Twiml: transferMarkup(request).body }), 'transfer', traceContext);
    },

    // Keys on a live call: new instructions (<Play digits>, then the stream again), as a REST update.
    keys: { onAnswer: true, live: 'new_instructions' },

    async sendDigits(callSid, digits, streamUrl, traceContext) {
      await update(callSid, new URLSearchParams({ Twiml: digitsMarkup(digits, streamUrl).body }), 'sending keys', traceContext);
    },

    verify: (request) => verifyTwilioRequest(options.authToken, request),

    parseAnswer: parseTwilioAnswer,
    parseStatus: parseTwilioStatus,
    streamMarkup: (streamUrl) => streamMarkup(streamUrl),
    blockMarkup,
    transferMarkup,
    hangupMarkup,
    serializer: () => new TwilioSerializer(),
  };
}
