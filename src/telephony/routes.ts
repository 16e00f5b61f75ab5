/**
 * The provider callback endpoints, for provider_a (Twilio), provider_b (Exotel) and
 * provider_c (Plivo). They are public (providers carry no bearer token) and authenticated instead
 * by the provider's signature and by the per-call session token in the URL.
 *
 * 400 a payload the provider's protocol does not allow; 403 a bad or missing signature; 404 an
 * unknown call (or a provider this deployment has not configured). Duplicates and out-of-order
 * callbacks answer 200 and change nothing. Callbacks for calls that already finished answer 200.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { sendProblem } from '../http/index.js';
import { isRecordedCall } from '../lifecycle/index.js';
import { AppError, badRequest, forbidden, notFound } from '../lib/errors.js';
import { handleInbound } from './inbound.js';
import { ProtocolError, type CallbackRequest, type ProviderKit, type ProviderPath } from './provider.js';
import type { Telephony } from './service.js';

const PATHS: readonly ProviderPath[] = ['provider_a', 'provider_b', 'provider_c'];

export interface CallbackRouteDeps {
  telephony: Telephony;
  db: Db;
  /** Public base URL of this process (no trailing slash): signatures cover the URL the provider called. */
  publicUrl: string;
  skipSignatureCheck: boolean;
}

/** Body fields and query fields as strings; JSON bodies are flattened one level (Exotel posts JSON). */
function readParams(request: FastifyRequest): { raw: string; params: Record<string, string> } {
  const params: Record<string, string> = {};
  const query = request.query as Record<string, unknown>;
  for (const [k, v] of Object.entries(query ?? {})) if (typeof v === 'string') params[k] = v;
  const raw = typeof request.body === 'string' ? request.body : '';
  const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (raw.length === 0) return { raw, params };
  if (type === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw badRequest('The callback body is not valid JSON', undefined, 'malformed_callback');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw badRequest('The callback body must be a JSON object', undefined, 'malformed_callback');
    for (const [k, v] of Object.entries(parsed)) {
      if (v === null || v === undefined) continue;
      params[k] = typeof v === 'object' ? JSON.stringify(v) : String(v);
    }
  } else if (type === 'application/x-www-form-urlencoded' || type === '') {
    for (const [k, v] of new URLSearchParams(raw)) params[k] = v;
  } else {
    throw new AppError(415, 'unsupported_media_type', `Callbacks are form-encoded or JSON, not ${type}`);
  }
  return { raw, params };
}

function callbackRequest(request: FastifyRequest, publicUrl: string, raw: string, params: Record<string, string>): CallbackRequest {
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(request.headers)) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(',') : v;
  return { method: request.method, url: `${publicUrl}${request.url}`, headers, rawBody: raw, params };
}

function parse<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ProtocolError) throw badRequest(`Malformed ${what}: ${err.message}`, undefined, 'malformed_callback');
    throw err;
  }
}

/** Whether the call is over and recorded on its lead (a late or repeated callback). */
async function callFinished(db: Db, callId: string | undefined): Promise<boolean> {
  return Boolean(callId) && (await isRecordedCall(db, callId!));
}

export function registerCallbackRoutes(app: App, deps: CallbackRouteDeps): void {
  const { telephony } = deps;

  // Own scope: provider bodies are read raw (signatures are computed over them), whatever their type.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

    const guard = (path: ProviderPath, request: FastifyRequest): { kit: ProviderKit; params: Record<string, string>; token: string | undefined } => {
      const kit = telephony.kit(path);
      if (!kit) throw new AppError(404, 'provider_not_configured', `${path} is not configured on this Dialer`);
      const { raw, params } = readParams(request);
      if (!deps.skipSignatureCheck && !kit.verify(callbackRequest(request, deps.publicUrl, raw, params))) {
        throw forbidden(`The ${kit.label} signature of this callback is missing or wrong`, 'bad_signature');
      }
      // The session token: `?s=` on every URL Dialer hands out; Exotel's Voicebot applet calls a URL
      // fixed in its flow and carries the token as the call's CustomField instead.
      const token = params.s || (path === 'provider_b' ? params.CustomField : undefined);
      return { kit, params, token: token || undefined };
    };

    const respond = (reply: FastifyReply, fn: () => Promise<unknown>) =>
      fn().catch((err: unknown) => {
        if (err instanceof AppError) return sendProblem(reply, err);
        throw err;
      });

    for (const path of PATHS) {
      const answer = (request: FastifyRequest, reply: FastifyReply) =>
        respond(reply, async () => {
          const { kit, params, token } = guard(path, request);
          const info = parse('answer request', () => kit.parseAnswer(params));
          const session = telephony.byTokenOrId(token, token ? undefined : info.callSid);
          if (session) {
            const markup = session.answer(info, { transfer: (request.query as Record<string, unknown>).transfer === '1' });
            return reply.type(markup.contentType).send(markup.body);
          }
          if (token) throw notFound(`Call session ${token.slice(0, 6)}…`, 'unknown_call');
          if (info.direction === 'inbound') {
            const markup = await handleInbound({ telephony, db: deps.db, kit, info });
            return reply.type(markup.contentType).send(markup.body);
          }
          throw notFound(`Call ${info.callSid}`, 'unknown_call');
        });
      scope.route({ method: ['GET', 'POST'], url: `/${path}/answer`, config: { public: true }, schema: { hide: true }, handler: answer });

      const status = (request: FastifyRequest, reply: FastifyReply) =>
        respond(reply, async () => {
          const { kit, params, token } = guard(path, request);
          const parsed = parse('status callback', () => kit.parseStatus(params));
          const session = telephony.byTokenOrId(token, parsed.callSid);
          if (session) {
            if (token && session.providerCallId !== undefined && !session.ids().includes(parsed.callSid)) {
              throw forbidden('This callback names a different call than its session', 'call_mismatch');
            }
            const applied = session.status(parsed);
            return reply.code(200).send({ status: applied ? 'applied' : 'unchanged' });
          }
          if (await callFinished(deps.db, parsed.callSid)) return reply.code(200).send({ status: 'unchanged', reason: 'the call is already over' });
          throw notFound(`Call ${parsed.callSid}`, 'unknown_call');
        });
      for (const url of [`/${path}/callback/status`, `/${path}/callback/details`]) {
        scope.route({ method: ['GET', 'POST'], url, config: { public: true }, schema: { hide: true }, handler: status });
      }

      const transfer = (request: FastifyRequest, reply: FastifyReply) =>
        respond(reply, async () => {
          const { kit, params, token } = guard(path, request);
          const callId = params.CallSid ?? params.CallUUID ?? params.call_sid;
          const session = telephony.byTokenOrId(token, callId);
          if (session) {
            session.transferEvent({ ...params, received_at: new Date().toISOString() });
            // transfer/status is the Dial action: the human leg is over, so is the call.
            if (request.url.includes('/transfer/status')) {
              const markup = kit.hangupMarkup();
              return reply.type(markup.contentType).send(markup.body);
            }
            return reply.code(200).send({ status: 'applied' });
          }
          if (await callFinished(deps.db, callId)) return reply.code(200).send({ status: 'unchanged', reason: 'the call is already over' });
          throw notFound(`Call ${callId ?? token ?? '(none named)'}`, 'unknown_call');
        });
      for (const url of [`/${path}/callback/transfer/status`, `/${path}/callback/transfer/events`]) {
        scope.route({ method: ['GET', 'POST'], url, config: { public: true }, schema: { hide: true }, handler: transfer });
      }
    }
  });
}
