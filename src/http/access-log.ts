import type { FastifyInstance } from 'fastify';

/**
 * One log line per answered request (Fastify's own request logging writes two: one on arrival,
 * one on completion; the first adds nothing the second lacks but costs as much on a busy
 * service). Requests that never complete are still visible: their errors are logged where raised.
 */
export function registerAccessLog(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      { req: { method: request.method, url: request.url }, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
      'request completed',
    );
    done();
  });
}
