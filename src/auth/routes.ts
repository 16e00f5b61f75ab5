import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { listRoute, Id, IdParams, PageQuery, problems, NullableTimestamp, Timestamp } from '../http/index.js';
import { iso, isoRequired } from '../lib/time.js';
import type { TokenRow } from './repository.js';
import type { AuthService } from './service.js';
import { registerMeRoute } from './me.js';

const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320, description: 'The login email (admin@localhost is valid)' }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.String(),
  reseller_id: Type.Union([Type.String(), Type.Null()]),
  merchant_id: Type.Union([Type.String(), Type.Null()]),
});

export const LoginResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the access token expires' }),
  user: UserView,
});

const IssueTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    role: Type.String({ description: 'reseller, merchant or user', maxLength: 32 }),
    reseller_id: Id,
    merchant_id: Type.Optional(Type.Union([Id, Type.Null()])),
  },
  { additionalProperties: false },
);

export const TokenRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: Type.String(),
  reseller_id: Type.String(),
  merchant_id: Type.Union([Type.String(), Type.Null()]),
  token_hint: Type.String({ description: 'The first characters of the token, to tell tokens apart' }),
  created_at: Timestamp,
  last_used_at: NullableTimestamp,
  revoked_at: NullableTimestamp,
});

export const IssuedToken = Type.Object({
  token: Type.String({ description: 'The secret, shown once; prefixed s2s_' }),
  id: Type.String(),
  name: Type.String(),
  role: Type.String(),
  reseller_id: Type.String(),
  merchant_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
});

function tokenView(row: TokenRow) {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    reseller_id: row.reseller_id,
    merchant_id: row.merchant_id,
    token_hint: row.token_hint,
    created_at: isoRequired(row.created_at),
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
  };
}

export function registerAuthRoutes(app: App, auth: AuthService, settings: { traceUrlTemplate?: string | undefined } = {}): void {
  registerMeRoute(app, settings);
  app.post('/login', {
    config: { public: true, validationStatus: 422, limit: 'login', audit: 'login' },
    schema: {
      tags: ['auth'],
      summary: 'Log in with email and password; returns a short-lived JWT access token',
      security: [],
      body: LoginBody,
      response: { 200: LoginResponse, ...problems(422, 429) },
    },
    handler: (request) => auth.login(request.body.email, request.body.password, request.ip),
  });

  app.post('/s2s-token', {
    config: { permission: ['tokens', 'write'], validationStatus: 422, limit: 'token-issue', audit: 'token.issue' },
    schema: {
      tags: ['auth'],
      summary: 'Issue a long-lived server-to-server token for a reseller, merchant or user scope',
      body: IssueTokenBody,
      response: { 200: IssuedToken, ...problems(401, 403, 422, 429) },
    },
    handler: async (request) => {
      const row = await auth.issueToken(request.principal, request.body);
      return {
        token: row.token,
        id: row.id,
        name: row.name,
        role: row.role,
        reseller_id: row.reseller_id,
        merchant_id: row.merchant_id,
        created_at: isoRequired(row.created_at),
      };
    },
  });

  listRoute(app, '/s2s-token', {
    config: { permission: ['tokens', 'read'] },
    tags: ['auth'],
    summary: 'List the s2s tokens in the caller\'s scope (never the secrets)',
    querystring: PageQuery,
    item: TokenRecord,
    list: (request, _query, page) => auth.listTokens(request.principal, page.limit, page.offset),
    view: tokenView,
  });

  app.delete('/s2s-token/:id', {
    config: { permission: ['tokens', 'write'], audit: 'token.revoke' },
    schema: {
      tags: ['auth'],
      summary: 'Revoke an s2s token; it stops working at once',
      params: IdParams,
      response: { 200: TokenRecord, ...problems(401, 403, 404) },
    },
    handler: async (request) => tokenView(await auth.revokeToken(request.principal, request.params.id)),
  });
}
