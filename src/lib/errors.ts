/**
 * One error type for everything the service reports to a client. It carries a stable code and an
 * HTTP status and is rendered as RFC 9457 problem details by the HTTP error handler.
 */

export interface FieldError {
  /** JSON pointer-like path of the offending field, e.g. `/payload/customer_mobile_number`. */
  path: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  408: 'Request Timeout',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function statusTitle(status: number): string {
  return TITLES[status] ?? (status >= 500 ? 'Server Error' : 'Client Error');
}

export class AppError extends Error {
  override name = 'AppError';
  /** Sent as `Retry-After` (seconds): when the client may try again (429, 503, a retryable 500). */
  readonly retryAfterSeconds: number | undefined;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: FieldError[],
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }

  toProblem(): Problem {
    const problem: Problem = {
      type: `urn:dialer:problem:${this.code}`,
      title: statusTitle(this.status),
      status: this.status,
      detail: this.message,
      code: this.code,
    };
    if (this.errors && this.errors.length > 0) problem.errors = this.errors;
    return problem;
  }
}

export const badRequest = (message: string, errors?: FieldError[], code = 'bad_request') =>
  new AppError(400, code, message, errors);
export const unauthorized = (message = 'A valid bearer token is required') => new AppError(401, 'unauthorized', message);
export const forbidden = (message: string, code = 'forbidden') => new AppError(403, code, message);
export const notFound = (what: string, code = 'not_found') => new AppError(404, code, `${what} was not found`);
export const conflict = (message: string, code = 'conflict') => new AppError(409, code, message);
export const unprocessable = (message: string, errors?: FieldError[], code = 'unprocessable') =>
  new AppError(422, code, message, errors);

/** Coerces anything thrown into an Error, keeping the original as `cause`. */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(typeof thrown === 'string' ? thrown : 'Non-error thrown', { cause: thrown });
}

/** PostgreSQL error code of a driver error (pg and PGlite both expose `code`). */
export function pgErrorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'string') {
    return (err as { code: string }).code;
  }
  return undefined;
}

export const isUniqueViolation = (err: unknown) => pgErrorCode(err) === '23505';
export const isForeignKeyViolation = (err: unknown) => pgErrorCode(err) === '23503';

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P02', '57P03', '53300']);

/**
 * Whether an error means the database cannot be reached right now (down, restarting, unreachable,
 * out of connections), as opposed to refusing a statement: the request may be retried as it is.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = pgErrorCode(e) ?? '';
    if (UNREACHABLE_CODES.has(code) || code.startsWith('08')) return true;
    const message = e instanceof Error ? e.message : '';
    if (/Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/i.test(message)) return true;
  }
  return false;
}

/** How long a client is told to wait before retrying after a database outage. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** PostgreSQL errors caused by text it cannot hold (a NUL character, a bad Unicode escape): the input's fault. */
export const isUnstorableText = (err: unknown) => ['22021', '22P05', '22025'].includes(pgErrorCode(err) ?? '');
export const unstorableText = () =>
  new AppError(400, 'unstorable_text', 'The request contains text that cannot be stored (for example a NUL character, \\u0000)');
