import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { problems } from '../http/index.js';
import { AppError, unauthorized } from '../lib/errors.js';
import { FlagFileError } from './provider.js';
import type { Flags } from './service.js';
import { verifyFlagWebhook } from './signature.js';

const Refreshed = Type.Object({
  refreshed: Type.Literal(true),
  changed: Type.Array(Type.String(), { description: 'Flag keys added, removed or changed by this refresh' }),
  flags: Type.Array(Type.String(), { description: 'Flag keys defined now' }),
});

/**
 * POST /feature-flags/webhook: the flag system says flags changed. The body is read raw
 * and must carry a valid `X-Hub-Signature-256`; Dialer then re-reads its flags at once. The body's
 * content is only logged: the flag source is the truth, so a replayed or stale notification can at
 * worst cause a needless refresh. GET /feature-flags (admin) shows the definitions in force.
 */
export function registerFlagRoutes(app: App, flags: Flags): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    (scope as unknown as App).post('/feature-flags/webhook', {
      config: { public: true },
      schema: {
        tags: ['feature flags'],
        summary: "The flag system's update notification: verifies the signature and refreshes the flags at once",
        description:
          'Signed with `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` under DIALER_FLAGS_WEBHOOK_SECRET ' +
          "(GO Feature Flag's webhook notifier signs this way). Any body; the flags are re-read from their source.",
        security: [],
        response: { 200: Refreshed, ...problems(401, 422) },
      },
      handler: async (request) => {
        const secret = flags.settings.webhookSecret;
        const body = typeof request.body === 'string' ? request.body : '';
        if (!secret) throw unauthorized('Flag webhooks are not accepted: DIALER_FLAGS_WEBHOOK_SECRET is not set');
        const header = request.headers['x-hub-signature-256'];
        if (!verifyFlagWebhook(secret, Array.isArray(header) ? header[0] : header, body)) {
          request.log.warn('feature-flag webhook refused: missing or wrong signature');
          throw unauthorized('The X-Hub-Signature-256 signature of this flag webhook is missing or wrong');
        }
        try {
          return { refreshed: true as const, ...(await flags.refresh('webhook')) };
        } catch (err) {
          if (err instanceof FlagFileError) throw new AppError(422, 'flags_invalid', `${err.message}; the previous flags stay in force`);
          throw err;
        }
      },
    });
  });

  app.get('/feature-flags', {
    config: { permission: ['flags', 'read'] },
    schema: {
      tags: ['feature flags'],
      summary: 'The feature flags in force (flagd flag-definition format) and where they come from',
      response: {
        200: Type.Object({
          provider: Type.Union([Type.Literal('file'), Type.Literal('flagd')]),
          source: Type.String({ description: "The flag file's path, or flagd" }),
          flags: Type.Record(Type.String(), Type.Unknown(), { description: 'The definitions (flagd format); empty for flagd, which keeps them' }),
        }),
        ...problems(401, 403),
      },
    },
    handler: async () => ({ provider: flags.settings.provider, source: flags.sourceLabel, flags: flags.definitions() }),
  });
}
