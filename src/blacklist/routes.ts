import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { listRoute, Id, PageQuery, problems, Timestamp } from '../http/index.js';
import { isoRequired } from '../lib/time.js';
import type { BlacklistChange, BlacklistService } from './service.js';

const Body = Type.Object(
  {
    phone_numbers: Type.Array(Type.String({ maxLength: 32 }), { minItems: 1, maxItems: 10_000, description: 'E.164 numbers' }),
    reseller_id: Type.Optional(
      Type.Union([Id, Type.Null()], {
        description: "The reseller whose list to change. Resellers: their own (the default). Admins: omitted or null means the platform-wide list",
      }),
    ),
  },
  { additionalProperties: false, examples: [{ phone_numbers: ['+14155550123', '+442071838750'] }] },
);

export const Entry = Type.Object({
  id: Type.String(),
  reseller_id: Type.Union([Type.String(), Type.Null()], { description: 'null: the platform-wide list' }),
  phone_number: Type.String(),
  lead_id: Type.Union([Type.String(), Type.Null()], { description: 'An opt-out: the lead of the call in which the callee asked not to be called again (null: added through this API)' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'An opt-out: what the callee said, briefly' }),
  created_at: Timestamp,
});

export const Added = Type.Object({
  reseller_id: Type.Union([Type.String(), Type.Null()]),
  added: Type.Array(Type.String()),
  already_present: Type.Array(Type.String()),
});
export const Removed = Type.Object({
  reseller_id: Type.Union([Type.String(), Type.Null()]),
  removed: Type.Array(Type.String()),
  not_found: Type.Array(Type.String()),
});

const ListQuery = Type.Intersect([
  PageQuery,
  Type.Object({ reseller_id: Type.Optional(Id), phone_number: Type.Optional(Type.String({ maxLength: 32 })) }),
]);

/** The blacklist. */
export function registerBlacklistRoutes(app: App, blacklist: BlacklistService): void {
  app.post('/blacklist', {
    config: { permission: ['blacklist', 'write'] },
    schema: {
      tags: ['blacklist'],
      summary: 'Add numbers to a blacklist; numbers already on it are reported, not duplicated',
      body: Body,
      response: { 200: Added, ...problems(400, 401, 403) },
    },
    handler: async (request) => {
      const r: BlacklistChange = await blacklist.add(request.principal, request.body.phone_numbers, request.body.reseller_id);
      return { reseller_id: r.reseller_id, added: r.changed, already_present: r.unchanged };
    },
  });

  listRoute(app, '/blacklist', {
    config: { permission: ['blacklist', 'read'] },
    tags: ['blacklist'],
    summary: "List blacklisted numbers in scope: the caller's reseller's and the platform-wide ones",
    querystring: ListQuery,
    item: Entry,
    list: (request, { reseller_id, phone_number }, page) => blacklist.list(request.principal, { reseller_id, phone_number }, page.limit, page.offset),
    view: (r) => ({ ...r, created_at: isoRequired(r.created_at) }),
  });

  app.delete('/blacklist', {
    config: { permission: ['blacklist', 'write'] },
    schema: {
      tags: ['blacklist'],
      summary: 'Remove numbers from a blacklist (the numbers go in the request body)',
      body: Body,
      response: { 200: Removed, ...problems(400, 401, 403) },
    },
    handler: async (request) => {
      const r = await blacklist.remove(request.principal, request.body.phone_numbers, request.body.reseller_id);
      return { reseller_id: r.reseller_id, removed: r.changed, not_found: r.unchanged };
    },
  });
}
