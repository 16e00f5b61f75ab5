/**
 * Outbound requests a tenant can steer (reporting webhooks, service callbacks, template hooks,
 * pre-checks, and anything added later) go through this module and nothing else. It lives in lib/
 * so that every layer can use it downhill: the features check URLs when they are written, the
 * scheduler, the webhook dispatcher and the voice engine send through an OutboundClient that the
 * composition root builds once from the configuration and hands them (voice gets only its `fetch`).
 * Code given no client falls back to `strictOutbound()`, which allows nothing: forgetting to pass
 * the client fails closed.
 */
export { OutboundPolicy, OutboundAllowListError, parseOutboundAllowList, EMPTY_ALLOW_LIST, type OutboundAllowList } from './policy.js';
export { OutboundClient, OutboundBlockedError, describeOutboundFailure, readBytesLimited, readTextLimited, strictOutbound, type OutboundFetch } from './fetch.js';
