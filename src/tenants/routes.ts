import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { listRoute, Id, IdParams, PageQuery, problems, Timestamp } from '../http/index.js';
import { badRequest } from '../lib/errors.js';
import { isoRequired } from '../lib/time.js';
import type { MerchantRow, ResellerRow, UserRecord } from './repository.js';
import type { TenantsService } from './service.js';

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Email = Type.String({ format: 'email', maxLength: 320 });
const Password = Type.String({ minLength: 8, maxLength: 1024 });
const UserPlace = {
  role: Type.Union([Type.Literal('admin'), Type.Literal('reseller'), Type.Literal('merchant'), Type.Literal('user')]),
  reseller_id: Type.Optional(Type.Union([Id, Type.Null()])),
  merchant_id: Type.Optional(Type.Union([Id, Type.Null()])),
};

export const Reseller = Type.Object({ id: Type.String(), name: Type.String(), created_at: Timestamp, updated_at: Timestamp });
export const Merchant = Type.Object({
  id: Type.String(),
  name: Type.String(),
  reseller_id: Type.String(),
  contact_email: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.String(),
  reseller_id: Type.Union([Type.String(), Type.Null()]),
  merchant_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const resellerView = (r: ResellerRow) => ({ id: r.id, name: r.name, created_at: isoRequired(r.created_at), updated_at: isoRequired(r.updated_at) });
const merchantView = (m: MerchantRow) => ({
  id: m.id,
  name: m.name,
  reseller_id: m.reseller_id,
  contact_email: m.contact_email,
  created_at: isoRequired(m.created_at),
  updated_at: isoRequired(m.updated_at),
});
const userView = (u: UserRecord) => ({
  id: u.id,
  email: u.email,
  role: u.role,
  reseller_id: u.reseller_id,
  merchant_id: u.merchant_id,
  created_at: isoRequired(u.created_at),
  updated_at: isoRequired(u.updated_at),
});

/** Resellers, merchants and users. */
export function registerTenantRoutes(app: App, tenants: TenantsService): void {
  app.post('/resellers', {
    config: { permission: ['resellers', 'write'] },
    schema: {
      tags: ['tenants'],
      summary: 'Create a reseller (admin)',
      body: Type.Object({ name: Name }, { additionalProperties: false }),
      response: { 200: Reseller, ...problems(400, 401, 403, 409) },
    },
    handler: async (request) => resellerView(await tenants.createReseller(request.body.name.trim())),
  });

  listRoute(app, '/resellers', {
    config: { permission: ['resellers', 'read'] },
    tags: ['tenants'],
    summary: 'List resellers in scope',
    querystring: PageQuery,
    item: Reseller,
    list: (request, _query, page) => tenants.listResellers(request.principal, page.limit, page.offset),
    view: resellerView,
  });

  app.get('/resellers/:id', {
    config: { permission: ['resellers', 'read'] },
    schema: { tags: ['tenants'], summary: 'Read a reseller', params: IdParams, response: { 200: Reseller, ...problems(401, 403, 404) } },
    handler: async (request) => resellerView(await tenants.getReseller(request.principal, request.params.id)),
  });

  const MerchantBody = Type.Object(
    { name: Name, reseller_id: Id, contact_email: Email },
    { additionalProperties: false },
  );

  app.post('/merchants', {
    config: { permission: ['merchants', 'write'] },
    schema: { tags: ['merchants'], summary: 'Create a merchant', body: MerchantBody, response: { 200: Merchant, ...problems(400, 401, 403, 409) } },
    handler: async (request) => {
      const body = request.body;
      const row = await tenants.createMerchant(request.principal, { ...body, name: body.name.trim() });
      return merchantView(row);
    },
  });

  listRoute(app, '/merchants', {
    config: { permission: ['merchants', 'read'] },
    tags: ['merchants'],
    summary: 'List merchants in scope',
    querystring: Type.Intersect([PageQuery, Type.Object({ reseller_id: Type.Optional(Id) })]),
    item: Merchant,
    list: (request, { reseller_id }, page) => tenants.listMerchants(request.principal, { reseller_id }, page.limit, page.offset),
    view: merchantView,
  });

  app.get('/merchants/:id', {
    config: { permission: ['merchants', 'read'] },
    schema: { tags: ['merchants'], summary: 'Read a merchant', params: IdParams, response: { 200: Merchant, ...problems(401, 403, 404) } },
    handler: async (request) => merchantView(await tenants.getMerchant(request.principal, request.params.id)),
  });

  app.put('/merchants/:id', {
    config: { permission: ['merchants', 'write'] },
    schema: {
      tags: ['merchants'],
      summary: 'Replace a merchant\'s fields (name, contact_email; reseller_id cannot change)',
      params: IdParams,
      body: Type.Object(
        { id: Type.Optional(Id), name: Name, contact_email: Email, reseller_id: Type.Optional(Id), created_at: Type.Optional(Type.String()), updated_at: Type.Optional(Type.String()) },
        { additionalProperties: false },
      ),
      response: { 200: Merchant, ...problems(400, 401, 403, 404, 409) },
    },
    handler: async (request) => {
      const body = request.body;
      const row = await tenants.updateMerchant(request.principal, request.params.id, body.id, {
        name: body.name.trim(),
        contact_email: body.contact_email,
        reseller_id: body.reseller_id,
      });
      return merchantView(row);
    },
  });

  app.delete('/merchants/:id', {
    config: { permission: ['merchants', 'write'] },
    schema: {
      tags: ['merchants'],
      summary: 'Delete a merchant with nothing left that refers to it (409 otherwise)',
      params: IdParams,
      response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...problems(401, 403, 404, 409) },
    },
    handler: async (request) => {
      const row = await tenants.deleteMerchant(request.principal, request.params.id);
      return { id: row.id, deleted: true as const };
    },
  });

  app.post('/users', {
    config: { permission: ['users', 'write'] },
    schema: {
      tags: ['tenants'],
      summary: 'Create a user (admin; a reseller for its own reseller)',
      body: Type.Object({ email: Email, password: Password, ...UserPlace }, { additionalProperties: false }),
      response: { 200: User, ...problems(400, 401, 403, 409) },
    },
    handler: async (request) => userView(await tenants.createUser(request.principal, request.body)),
  });

  listRoute(app, '/users', {
    config: { permission: ['users', 'read'] },
    tags: ['tenants'],
    summary: 'List users in scope',
    querystring: PageQuery,
    item: User,
    list: (request, _query, page) => tenants.listUsers(request.principal, page.limit, page.offset),
    view: userView,
  });

  app.put('/users/:id', {
    config: { permission: ['users', 'write'] },
    schema: {
      tags: ['tenants'],
      summary: "Change a user's email, role, reseller and merchant (not one's own role; the last admin stays an admin)",
      params: IdParams,
      body: Type.Object(
        { id: Type.Optional(Id), email: Email, ...UserPlace, created_at: Type.Optional(Type.String()), updated_at: Type.Optional(Type.String()) },
        { additionalProperties: false },
      ),
      response: { 200: User, ...problems(400, 401, 403, 404, 409) },
    },
    handler: async (request) => {
      const { id, created_at: _c, updated_at: _u, ...change } = request.body;
      if (id !== undefined && id !== request.params.id) {
        throw badRequest(`Body id ${id} does not match the path id ${request.params.id}`, [{ path: '/id', message: 'must equal the id in the path' }]);
      }
      return userView(await tenants.updateUser(request.principal, request.params.id, change));
    },
  });

  app.post('/users/:id/password', {
    config: { permission: ['users', 'write'], audit: 'password.reset' },
    schema: {
      tags: ['tenants'],
      summary: "Set a new password for a user (the user's open sessions end; the password is never recorded)",
      params: IdParams,
      body: Type.Object({ password: Password }, { additionalProperties: false }),
      response: { 200: User, ...problems(400, 401, 403, 404) },
    },
    handler: async (request) => userView(await tenants.resetPassword(request.principal, request.params.id, request.body.password)),
  });

  app.delete('/users/:id', {
    config: { permission: ['users', 'write'] },
    schema: {
      tags: ['tenants'],
      summary: 'Delete a user',
      params: IdParams,
      response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...problems(401, 403, 404, 409) },
    },
    handler: async (request) => {
      const row = await tenants.deleteUser(request.principal, request.params.id);
      return { id: row.id, deleted: true as const };
    },
  });
}
