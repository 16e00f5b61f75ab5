import { pino, type Logger, type LoggerOptions } from 'pino';
import type { LogLevel } from '../config.js';

export type { Logger };

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
