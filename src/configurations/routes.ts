import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { listRoute, Id, IdParams, PageQuery, problems } from '../http/index.js';
import { isoRequired } from '../lib/time.js';
import type { ConfigurationRow } from './repository.js';
import { Configuration, CreateConfigurationBody, ReplaceConfigurationBody } from './schema.js';
import type { ConfigurationsService } from './service.js';

const ListQuery = Type.Intersect([
  PageQuery,
  Type.Object({
    reseller_id: Type.Optional(Id),
    template: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Template id' })),
    merchant_id: Type.Optional(Id),
  }),
]);

export const configurationView = ({ template_id, created_at, updated_at, trunk_id, disclosure, ...rest }: ConfigurationRow) => ({
  ...rest,
  // Extensions: shown only on the configurations that use them, so other clients see no new field.
  ...(trunk_id ? { trunk_id } : {}),
  ...(disclosure ? { disclosure } : {}),
  template: template_id,
  created_at: isoRequired(created_at),
  updated_at: isoRequired(updated_at),
});

/** Call execution configurations. */
export function registerConfigurationRoutes(app: App, configurations: ConfigurationsService): void {
  app.post('/configurations', {
    config: { permission: ['configurations', 'write'] },
    schema: {
      tags: ['configurations'],
      summary: 'Create the configuration of a reseller and template (one per pair)',
      body: CreateConfigurationBody,
      response: { 200: Configuration, ...problems(400, 401, 403, 409) },
    },
    handler: async (request) => configurationView(await configurations.create(request.principal, request.body)),
  });

  listRoute(app, '/configurations', {
    config: { permission: ['configurations', 'read'] },
    tags: ['configurations'],
    summary: 'List configurations in scope; reseller_id, template and merchant_id narrow it',
    querystring: ListQuery,
    item: Configuration,
    list: (request, { reseller_id, template, merchant_id }, page) =>
      configurations.list(request.principal, { reseller_id, template, merchant_id }, page.limit, page.offset),
    view: configurationView,
  });

  app.get('/configurations/:id', {
    config: { permission: ['configurations', 'read'] },
    schema: { tags: ['configurations'], summary: 'Read a configuration', params: IdParams, response: { 200: Configuration, ...problems(401, 403, 404) } },
    handler: async (request) => configurationView(await configurations.get(request.principal, request.params.id)),
  });

  app.put('/configurations/:id', {
    config: { permission: ['configurations', 'write'] },
    schema: {
      tags: ['configurations'],
      summary: 'Replace a configuration: the full object including id; omitted optional fields take their defaults',
      params: IdParams,
      body: ReplaceConfigurationBody,
      response: { 200: Configuration, ...problems(400, 401, 403, 404, 409) },
    },
    handler: async (request) => {
      const { created_at: _c, updated_at: _u, ...body } = request.body;
      return configurationView(await configurations.replace(request.principal, request.params.id, body));
    },
  });

  app.delete('/configurations/:id', {
    config: { permission: ['configurations', 'write'] },
    schema: {
      tags: ['configurations'],
      summary: 'Delete a configuration; its leads wait until a configuration exists again',
      params: IdParams,
      response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...problems(401, 403, 404) },
    },
    handler: async (request) => {
      const row = await configurations.delete(request.principal, request.params.id);
      return { id: row.id, deleted: true as const };
    },
  });
}
