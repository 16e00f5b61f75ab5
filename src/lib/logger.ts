import { pino, type Logger, type LoggerOptions } from 'pino';
export type { Logger };

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Structured JSON logs; secrets never reach them (redacted by path). */
export function createLogger(level: LogLevel, options: LoggerOptions = {}): Logger {
  return pino({
    level,
    base: { service: 'dialer' },
    redact: {
      paths: [
        'req.headers.authorization',
        'password',
        '*.password',
        'token',
        '*.token',
        'access_token',
      ],
      censor: '[redacted]',
    },
    ...options,
  },
  // Written asynchronously, so a slow stdout (a pipe, a terminal) never stalls request handling;
  // pino flushes what is pending when the process exits.
  pino.destination({ dest: 1, sync: false }));
}
