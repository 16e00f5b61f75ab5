import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { listRoute, PageQuery, Timestamp } from '../http/index.js';
import { isoRequired } from '../lib/time.js';
import type { AuditService } from './audit.js';
import type { AuditRow } from './audit-repository.js';

const Text = (maxLength: number, description: string) => Type.Optional(Type.String({ minLength: 1, maxLength, description }));
const NullableText = Type.Union([Type.String(), Type.Null()]);

export const AuditQuery = Type.Intersect([
  PageQuery,
  Type.Object({
    principal_id: Text(64, 'A user id or s2s token id'),
    principal_name: Text(320, "A user's email or an s2s token's name (case-insensitive)"),
    action: Text(64, 'create, update, delete, abort, token.issue, token.revoke, password.reset, login.success, login.failure'),
    resource: Text(64, 'leads, templates, configurations, merchants, users, tokens, numbers, blacklist, resellers, session'),
    resource_id: Text(200, 'The id of the resource written'),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or after this time' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Entries before this time' })),
  }),
]);

export const AuditEntry = Type.Object(
  {
    id: Type.String(),
    at: Timestamp,
    principal_kind: Type.Union([Type.Literal('user'), Type.Literal('s2s'), Type.Null()], { description: 'A user (login token) or an s2s token' }),
    principal_id: NullableText,
    principal_name: Type.Union([Type.String(), Type.Null()], { description: "The user's email or the s2s token's name (for a failed login: the email tried)" }),
    role: NullableText,
    reseller_id: NullableText,
    merchant_id: NullableText,
    action: Type.String(),
    method: Type.String(),
    route: Type.String({ description: 'The route, e.g. /leads/{id} as /leads/:id' }),
    resource: NullableText,
    resource_id: NullableText,
    status: Type.Integer({ description: 'The HTTP status the request was answered with' }),
    client_ip: NullableText,
    request_id: NullableText,
    details: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'A batch: queued and rejected counts; an abort: the lead ids' }),
  },
  { description: 'One write or login' },
);

function view(row: AuditRow) {
  return { ...row, id: String(row.id), at: isoRequired(row.at), status: Number(row.status) };
}

export function registerAuditRoutes(app: App, audit: AuditService): void {
  listRoute(app, '/audit', {
    config: { permission: ['audit', 'read'] },
    tags: ['auth'],
    summary: 'The audit trail: writes and logins, newest first (admins: everything; resellers: their principals)',
    querystring: AuditQuery,
    item: AuditEntry,
    list: (request, { page: _p, page_size: _s, ...filter }, page) => audit.list(request.principal, filter, page.limit, page.offset),
    view,
  });
}
