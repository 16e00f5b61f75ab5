/** What Dialer answers Exotel's applets with: JSON for the Voicebot and Connect applets' dynamic URLs. */
import type { Markup, TransferRequest } from '../provider.js';

function json(body: unknown): Markup {
  return { contentType: 'application/json', body: JSON.stringify(body) };
}

/**
 * What the Connect applet's dynamic URL expects (Exotel "Programmable Connect: Working with Connect
 * Applet (Dynamic URL)", version 1.0): the numbers to dial and the leg's settings.
 */
function connectResponse(to: string, callerId: string | undefined, message?: string): Markup {
  const body: Record<string, unknown> = {
    // Dial once; do not come back to this URL after a failed attempt.
    fetch_after_attempt: false,
    destination: { numbers: [to] },
    // Exotel's documented limits: ring for up to 45 s, and the transferred conversation up to 1 h.
    max_ringing_duration: 45,
    max_conversation_duration: 3600,
    music_on_hold: { type: 'operator_tone' },
    // Dialer records calls itself (through the media stream); the human leg is not recorded.
    record: false,
  };
  if (callerId) body.outgoing_phone_number = callerId;
  if (message) body.start_call_playback = { playback_to: 'callee', type: 'text', value: message };
  return json(body);
}

/** The Voicebot applet's dynamic URL answers `{"url":"wss://…"}` (Exotel's documented shape). */
export function streamMarkup(streamUrl: string): Markup {
  return json({ url: streamUrl });
}

/**
 * For an inbound call Dialer refuses. The request comes from the Voicebot applet; Exotel documents
 * no way for its URL to say words or hang up, so the answer carries no `url`: the applet ends
 * without a stream and the flow moves on to the Connect applet, whose dynamic URL is answered
 * with this same body (the inbound path runs again without a session). With `redirectTo` the
 * Connect applet dials it, playing `message` (text, Exotel's TTS) to the caller first; without
 * it the destination list is empty, the Connect applet fails, and the flow's Hangup applet ends
 * the call. The message is not spoken then: Exotel has no per-call text outside an applet.
 */
export function blockMarkup(opts: { message?: string; redirectTo?: string; callerId?: string }): Markup {
  if (opts.redirectTo) return connectResponse(opts.redirectTo, opts.callerId, opts.message);
  return json({ fetch_after_attempt: false, destination: { numbers: [] } });
}

/** What the flow's Connect applet (dynamic "Dial whom" URL) expects: the human to dial. */
export function transferMarkup(request: TransferRequest): Markup {
  // Exotel's Connect applet takes no per-leg status URL; the transfer leg shows in the call's
  // terminal StatusCallback (`Legs`) instead of request.statusUrl / request.eventsUrl.
  return connectResponse(request.to, request.from);
}

/**
 * Ends the call at once. Both applets that fetch Dialer's URL fail on this body (no `url` for
 * the Voicebot applet, no number for the Connect applet) and the flow reaches its Hangup applet.
 */
export function hangupMarkup(): Markup {
  return json({ fetch_after_attempt: false, destination: { numbers: [] } });
}
