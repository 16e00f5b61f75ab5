import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { AppError, DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable, isUnstorableText, statusTitle, toError, unstorableText, type FieldError } from '../lib/errors.js';
import type { Duplex } from 'node:stream';
import { DEFAULT_CSP, SECURITY_HEADERS } from './headers.js';
import { toFieldErrors } from './validation.js';

/**
 * How a route maps schema-validation failures to a status. Most routes answer 400; the API
 * answers 422 on some (login, s2s tokens, lead payload type mismatches).
 */
export type ValidationStatus = number | ((raw: ErrorObject[]) => number);

/** Fastify's own client errors, each with a stable code of ours. */
const FASTIFY_CLIENT_ERRORS: Record<string, { status: number; code: string; detail: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_json', detail: 'The request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_json', detail: 'The request body is empty but Content-Type is application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'body_too_large', detail: 'The request body is larger than the service accepts' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'unsupported_media_type', detail: 'Send request bodies as application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'invalid_content_length', detail: 'Content-Length does not match the body' },
  FST_ERR_CTP_INVALID_TYPE: { status: 400, code: 'invalid_content_type', detail: 'The Content-Type header is invalid' },
  FST_ERR_BAD_URL: { status: 400, code: 'bad_url', detail: 'The URL is not valid (a malformed %-escape?)' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: 'uri_too_long', detail: 'A path segment is longer than any id the service issues (100 characters at most)' },
  FST_ERR_CTP_INVALID_CHARSET: { status: 415, code: 'unsupported_media_type', detail: 'Send request bodies as UTF-8 JSON' },
};

/** Codes for other 4xx statuses Fastify (or Node) may raise. */
const STATUS_CODES: Record<number, string> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  413: 'body_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'headers_too_large',
};

/** The problem a Fastify or Node client error stands for; undefined for anything else (a 5xx). */
function clientProblem(error: FastifyError): AppError | undefined {
  const known = error.code ? FASTIFY_CLIENT_ERRORS[error.code] : undefined;
  if (known) return new AppError(known.status, known.code, known.detail);
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) return new AppError(status, STATUS_CODES[status] ?? 'bad_request', error.message || statusTitle(status));
  return undefined;
}

export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  return reply.code(error.status).type('application/problem+json').send(error.toProblem());
}

function validationProblem(request: FastifyRequest, error: FastifyError): AppError {
  const part = error.validationContext ?? 'body';
  const raw = (error.validation ?? []) as ErrorObject[];
  const errors: FieldError[] = toFieldErrors(part, raw);
  const setting = request.routeOptions.config?.validationStatus;
  const status = typeof setting === 'function' ? setting(raw) : (setting ?? 400);
  const first = errors[0];
  const detail = first
    ? `${part === 'body' ? 'Request body' : part === 'querystring' ? 'Query' : part === 'headers' ? 'Header' : 'Path'}: ${first.path} ${first.message}` +
      (errors.length > 1 ? ` (and ${errors.length - 1} more)` : '')
    : 'The request is invalid';
  return new AppError(status, 'validation_failed', detail, errors);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((thrown, request, reply) => {
    const error = toError(thrown) as FastifyError;
    if (isDatabaseUnavailable(thrown) && !(error instanceof AppError && error.status < 500)) {
      request.log.error({ err: error }, 'the database is unavailable');
      const retryAfterSeconds = DATABASE_RETRY_AFTER_SECONDS;
      return sendProblem(
        reply,
        request.routeOptions.config?.whenDatabaseDown === 'lead_not_queued'
          ? new AppError(500, 'lead_not_queued', 'The lead was not queued because the database is unavailable; it is safe to retry', undefined, { retryAfterSeconds })
          : new AppError(503, 'database_unavailable', 'The database is unavailable; retry shortly', undefined, { retryAfterSeconds }),
      );
    }
    if (error instanceof AppError) {
      if (error.status >= 500) request.log.error({ err: error.cause ?? error }, error.message);
      return sendProblem(reply, error);
    }
    if (error.validation) return sendProblem(reply, validationProblem(request, error));
    if (isUnstorableText(thrown)) return sendProblem(reply, unstorableText());
    const problem = clientProblem(error);
    if (problem) return sendProblem(reply, problem);
    // 5xx: log everything, tell the client nothing internal.
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, new AppError(500, 'internal', 'The service failed to handle the request; it is safe to retry'));
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new AppError(404, 'route_not_found', `No route ${request.method} ${request.url.split('?')[0]!.slice(0, 200)}`)),
  );
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a bad %-escape, a path
 * segment over the length limit) answered as problems like every other error.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const problem = clientProblem(error) ?? new AppError(500, 'internal', 'The service failed to handle the request; it is safe to retry');
  // Raised before routing, so the app's onSend hooks do not run: the security headers are set here.
  reply.headers({ ...SECURITY_HEADERS, 'content-security-policy': DEFAULT_CSP });
  void sendProblem(reply, problem);
}

/**
 * Fastify's `clientErrorHandler` option: a request Node's HTTP parser refuses (a malformed request
 * line, headers over the limit) never reaches Fastify; it gets a problem written on the socket.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) return void socket.destroy();
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const detail = status === 431 ? 'The request headers are larger than the service accepts' : status === 408 ? 'The request took too long to arrive' : 'The request is not valid HTTP';
  const body = JSON.stringify(new AppError(status, STATUS_CODES[status]!, detail).toProblem());
  const headers = { ...SECURITY_HEADERS, 'content-security-policy': DEFAULT_CSP, 'content-type': 'application/problem+json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' };
  socket.end(`HTTP/1.1 ${status} ${statusTitle(status)}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${body}`);
}
