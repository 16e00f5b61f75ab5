/** Plivo XML for the answered call, blocked calls, warm transfers and hang-ups. */
import type { Markup, TransferRequest } from '../provider.js';
import { element, escapeText } from '../xml.js';

const CONTENT_TYPE = 'application/xml';

function response(elements: string): Markup {
  return { contentType: CONTENT_TYPE, body: element('Response', {}, elements) };
}

/**
 * A bidirectional `<Stream>` of mu-law 8 kHz to `streamUrl` that keeps the call up while it runs;
 * Plivo posts the stream's events to `statusUrl`.
 */
export function streamMarkup(streamUrl: string, statusUrl: string): Markup {
  const attributes = { bidirectional: 'true', keepCallAlive: 'true', contentType: 'audio/x-mulaw;rate=8000', statusCallbackUrl: statusUrl };
  return response(element('Stream', attributes, escapeText(streamUrl)));
}

export function blockMarkup(options: { message?: string; redirectTo?: string; callerId?: string }): Markup {
  let elements = options.message ? `<Speak>${escapeText(options.message)}</Speak>` : '';
  elements += options.redirectTo ? element('Dial', { callerId: options.callerId }, `<Number>${escapeText(options.redirectTo)}</Number>`) : '<Hangup/>';
  return response(elements);
}

/** `<Dial>` to the human: `action` gets the leg's outcome, `callbackUrl` its events. */
export function transferMarkup(request: TransferRequest): Markup {
  const dial = element('Dial', { action: request.statusUrl, callbackUrl: request.eventsUrl, callerId: request.from }, `<Number>${escapeText(request.to)}</Number>`);
  return response(dial);
}

export function hangupMarkup(): Markup {
  return response('<Hangup/>');
}
