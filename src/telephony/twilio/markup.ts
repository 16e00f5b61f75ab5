/** TwiML for the answered call, blocked calls, warm transfers and hang-ups. */
import type { Markup, TransferRequest } from '../provider.js';
import { element, escapeText } from '../xml.js';

const CONTENT_TYPE = 'text/xml';

function twiml(verbs: string): Markup {
  return { contentType: CONTENT_TYPE, body: `<?xml version="1.0" encoding="UTF-8"?>${element('Response', {}, verbs)}` };
}

/**
 * `<Connect><Stream>`: a bidirectional Media Stream to `streamUrl` (wss://…/media/<token>; Twilio
 * allows no query string there, so the token is in the path). Stream status events are not asked
 * for: the call's own status callbacks already say when it ends.
 */
export function streamMarkup(streamUrl: string): Markup {
  return twiml(element('Connect', {}, element('Stream', { url: streamUrl })));
}

/**
 * Keys played on a live call (`<Play digits>`, `w` half a second of silence), then the media
 * stream again: Twilio can only play keys by replacing the call's instructions, which ends the
 * current stream.
 */
export function digitsMarkup(digits: string, streamUrl: string): Markup {
  return twiml(element('Play', { digits }) + element('Connect', {}, element('Stream', { url: streamUrl })));
}

export function blockMarkup(options: { message?: string; redirectTo?: string; callerId?: string }): Markup {
  let verbs = options.message ? `<Say>${escapeText(options.message)}</Say>` : '';
  verbs += options.redirectTo ? element('Dial', { callerId: options.callerId }, escapeText(options.redirectTo)) : '<Hangup/>';
  return twiml(verbs);
}

/** `<Dial>` to the human: `action` gets the leg's outcome, `<Number statusCallback>` its progress events. */
export function transferMarkup(request: TransferRequest): Markup {
  const number = element(
    'Number',
    { statusCallback: request.eventsUrl, statusCallbackEvent: 'initiated ringing answered completed' },
    escapeText(request.to),
  );
  return twiml(element('Dial', { callerId: request.from, action: request.statusUrl }, number));
}

export function hangupMarkup(): Markup {
  return twiml('<Hangup/>');
}
