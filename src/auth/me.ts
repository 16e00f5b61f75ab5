import { Type, type Static } from 'typebox';
import type { App } from '../http/index.js';
import { problems } from '../http/index.js';
import { creatableUserRoles, issuableTokenRoles, permissionsOf } from './permissions.js';
import { ROLES } from './principal.js';

const Role = Type.Enum(ROLES);
const Cell = Type.Object({ read: Type.Boolean(), write: Type.Boolean() });

export const MeSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('user'), Type.Literal('s2s')], { description: "user: a login token; s2s: a server-to-server token" }),
    id: Type.String({ description: 'The user id, or the s2s token record id' }),
    label: Type.String({ description: "The user's email, or the token's name" }),
    role: Role,
    reseller_id: Type.Union([Type.String(), Type.Null()]),
    merchant_id: Type.Union([Type.String(), Type.Null()]),
    permissions: Type.Record(Type.String(), Cell, {
      description: 'Every resource of the permission matrix: whether this role may read and change it (what it sees is further limited to its scope)',
    }),
    issue_token_roles: Type.Array(Role, { description: 'The s2s token roles this caller may issue (POST /s2s-token)' }),
    create_user_roles: Type.Array(Role, { description: 'The user roles this caller may create (POST /users)' }),
    trace_url_template: Type.Union([Type.String(), Type.Null()], { description: 'Where a lead\'s trace (metaData.trace_id) can be looked at: replace {trace_id}; null when none is configured' }),
  },
  { additionalProperties: false },
);
export type Me = Static<typeof MeSchema>;

/** GET /me: who the caller is and what it may do, so a client offers only that (one home: the permission matrix). */
export function registerMeRoute(app: App, settings: { traceUrlTemplate?: string | undefined } = {}): void {
  app.get('/me', {
    config: { authenticated: true },
    schema: {
      tags: ['auth'],
      summary: 'Who the bearer token belongs to: role, scope, and every permission of its role',
      response: { 200: MeSchema, ...problems(401) },
    },
    handler: async (request): Promise<Me> => {
      const p = request.principal;
      return {
        kind: p.kind,
        id: p.id,
        label: p.label,
        role: p.role,
        reseller_id: p.resellerId,
        merchant_id: p.merchantId,
        permissions: permissionsOf(p.role),
        issue_token_roles: [...issuableTokenRoles(p.role)],
        create_user_roles: [...creatableUserRoles(p.role)],
        trace_url_template: settings.traceUrlTemplate ?? null,
      };
    },
  });
}
