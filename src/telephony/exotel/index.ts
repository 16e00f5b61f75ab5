/**
 * Exotel (PROVIDER_B, callbacks under /provider_b) in Exotel's own wire protocols.
 *
 * How a call runs at Exotel. Exotel has no TwiML-like document per call: calls run through a flow
 * (an App Bazaar app) built in Exotel's dashboard, and Dialer steers the flow through the dynamic
 * URLs of its applets. The flow Dialer needs is
 *
 *   Voicebot applet (URL: https://<dialer>/provider_b/answer, "dynamic", so Exotel GETs it and
 *     expects `{"url":"wss://…"}` back)
 *   -> Connect applet (Dial whom: dynamic URL https://<dialer>/provider_b/answer?transfer=1)
 *   -> Hangup applet
 *
 * and EXOTEL_FLOW_URL is that flow's `http://my.exotel.com/{sid}/exoml/start_voice/{app_id}`.
 *
 * - Outbound calls: Calls/connect (Voice v1, "Outgoing call to connect number to a call flow"):
 *   `POST {base}/v1/Accounts/{sid}/Calls/connect.json`, HTTP basic auth api_key:api_token, form
 *   fields From (called first: our callee), CallerId (our ExoPhone), Url (the flow), CallType,
 *   TimeLimit, TimeOut, CustomField, StatusCallback, StatusCallbackEvents[], StatusCallbackContentType.
 *   The `.json` suffix makes Exotel answer JSON (`{"Call":{"Sid",…}}`) instead of XML.
 * - The session token travels as CustomField: the applets' URLs are fixed in the flow, so they
 *   cannot carry `?s=<token>`; Exotel passes the call's CustomField to them, and the callback route
 *   reads the token from it (and from `?s=` on the StatusCallback URL, which is per call).
 * - Callbacks are not signed by Exotel (see `verify`).
 */
import type { ProviderKit } from '../provider.js';
import { blockMarkup, hangupMarkup, streamMarkup, transferMarkup } from './markup.js';
import { exotelRest, placeExotelCall, type ExotelRestOptions } from './rest.js';
import { ExotelSerializer } from './serializer.js';
import { parseExotelAnswer, parseExotelStatus } from './status.js';

export interface ExotelOptions extends ExotelRestOptions {
  /** Default https://api.exotel.com (Singapore); https://api.in.exotel.com for Mumbai accounts. */
  apiBaseUrl: string;
  /** The ExoML start_voice URL of the flow whose Voicebot applet points at Dialer's /provider_b/answer. */
  flowUrl: string;
}

export function createExotelKit(options: ExotelOptions): ProviderKit {
  const rest = exotelRest(options);
  return {
    slot: 'PROVIDER_B',
    path: 'provider_b',
    label: 'Exotel',

    placeCall: (request, traceContext) => placeExotelCall(rest, options, request, traceContext),

    /**
     * Exotel's Voice v1 API has no request that ends a live call (its Calls resource only creates
     * calls and reads their details; the leg "hangup" action belongs to the separate v2 CPaaS Legs
     * API, keyed by leg SIDs that v1 calls do not have). Dialer ends an Exotel call by closing the
     * media WebSocket, which the session layer does before calling this: the Voicebot applet ends
     * and the flow goes on to its next applet (Connect, whose URL then answers `hangupMarkup`, then
     * Hangup). Before answer there is nothing to close; TimeOut/TimeLimit bound the call.
     */
    async hangup(): Promise<void> {},

    /**
     * Exotel cannot move a live call by API either. The transfer is done by the flow: when the bot
     * closes the stream, the flow continues to the Connect applet, whose dynamic URL
     * (`/provider_b/answer?transfer=1`, token in CustomField) the session answers with
     * `transferMarkup` once it knows the number. So there is nothing to send here; the session
     * records the number and the agent ends its part of the call.
     */
    async transfer(): Promise<void> {},

    /**
     * Exotel has no way to play keys on a live call: the Voicebot applet's stream carries audio,
     * marks and clears only, the v1 API has no call-update request, and no applet plays digits to
     * the callee. So `sendDigits` is left out and Dialer plays the keys' tones in-band on the
     * Voicebot stream, as 16-bit linear PCM, which carries them unchanged to the far end.
     */
    keys: { onAnswer: false, live: 'inband' },

    /**
     * Exotel signs neither its StatusCallback posts nor its applet requests (its docs offer basic
     * auth only for the WebSocket URL and on the newer v2 event endpoints). Exotel callbacks are
     * authenticated by the per-call session token Dialer puts in the StatusCallback URL (`?s=`) and
     * in CustomField, which the shared callback route checks against the call's session.
     */
    verify(): boolean {
      return true;
    },

    parseAnswer: parseExotelAnswer,
    parseStatus: parseExotelStatus,

    streamMarkup,
    blockMarkup,
    transferMarkup,
    hangupMarkup,

    serializer() {
      return new ExotelSerializer();
    },
  };
}
