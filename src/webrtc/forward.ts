/**
 * Any process serves any request: an operation on a live WebRTC session (ICE restart, hangup,
 * tts-speak) that reaches a process other than the one hosting the session is sent on to the
 * owner, whose origin the session table holds (migration 036), and its answer is relayed as it is.
 * The owner checks the caller's token and scope again. A request is forwarded once at most: the
 * owner never forwards a forwarded request, so a stale table row cannot make a loop.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, conflict } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';

/** Marks a request forwarded by another Dialer process. */
export const FORWARDED_HEADER = 'x-dialer-forwarded';
/** A hangup answers once the outcome is recorded: give the owner time for that. */
const FORWARD_TIMEOUT_MS = 30_000;

export function isForwarded(request: FastifyRequest): boolean {
  return request.headers[FORWARDED_HEADER] !== undefined;
}

/** Sends the request to the session's owner and relays its answer (status, type, body). */
export async function forwardToOwner(request: FastifyRequest, reply: FastifyReply, ownerOrigin: string, log: Logger): Promise<FastifyReply> {
  if (isForwarded(request)) throw conflict('The session is not hosted by the process it was forwarded to', 'no_session');
  const headers: Record<string, string> = { [FORWARDED_HEADER]: '1', 'x-request-id': request.id };
  for (const name of ['authorization', 'content-type'] as const) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  let res: Response;
  try {
    res = await fetch(new URL(request.url, ownerOrigin), {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      redirect: 'manual',
    });
  } catch (err) {
    log.warn({ err, owner: ownerOrigin, url: request.url }, 'the process hosting the session cannot be reached');
    throw new AppError(503, 'session_owner_unreachable', 'The Dialer process hosting this session cannot be reached; try again, or start a new session');
  }
  const body = await res.text();
  return reply
    .code(res.status)
    .header('content-type', res.headers.get('content-type') ?? 'application/json; charset=utf-8')
    .send(body);
}
