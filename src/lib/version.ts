/** Dialer's version, as the OpenAPI document, /health and the webhook User-Agent report it. */
export const VERSION = '0.1.0';
