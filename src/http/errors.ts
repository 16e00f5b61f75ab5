import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { AppError, isUnstorableText, statusTitle, toError, unstorableText, type FieldError } from '../lib/errors.js';
import { toFieldErrors } from './validation.js';

/**
 * How a route maps schema-validation failures to a status. Most routes answer 400; the spec asks
 * for 422 on some (login, s2s tokens, lead payload type mismatches).
 */
export type ValidationStatus = number | ((raw: ErrorObject[]) => number);

const FASTIFY_CLIENT_ERRORS: Record<string, { status: number; detail: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, detail: 'The request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, detail: 'The request body is empty but Content-Type is application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, detail: 'The request body is larger than the service accepts' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, detail: 'Send request bodies as application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, detail: 'Content-Length does not match the body' },
  FST_ERR_CTP_INVALID_TYPE: { status: 400, detail: 'The Content-Type header is invalid' },
};

export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
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
    ? `${part === 'body' ? 'Request body' : part === 'querystring' ? 'Query' : 'Path'}: ${first.path} ${first.message}` +
      (errors.length > 1 ? ` (and ${errors.length - 1} more)` : '')
    : 'The request is invalid';
  return new AppError(status, 'validation_failed', detail, errors);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((thrown, request, reply) => {
    const error = toError(thrown) as FastifyError;
    if (error instanceof AppError) {
      if (error.status >= 500) request.log.error({ err: error.cause ?? error }, error.message);
      return sendProblem(reply, error);
    }
    if (error.validation) return sendProblem(reply, validationProblem(request, error));
    if (isUnstorableText(thrown)) return sendProblem(reply, unstorableText());
    const known = error.code ? FASTIFY_CLIENT_ERRORS[error.code] : undefined;
    if (known) return sendProblem(reply, new AppError(known.status, 'bad_request', known.detail));
    const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
    if (status >= 400 && status < 500) {
      return sendProblem(reply, new AppError(status, 'bad_request', error.message || statusTitle(status)));
    }
    // 5xx: log everything, tell the client nothing internal.
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, new AppError(500, 'internal', 'The service failed to handle the request; it is safe to retry'));
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new AppError(404, 'route_not_found', `No route ${request.method} ${request.url.split('?')[0]}`)),
  );
}
