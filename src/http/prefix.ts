/** Where the API lives: every route, the OpenAPI document and the provider callbacks are under it. */
export const API_PREFIX = '/agent/voice/dialer';
