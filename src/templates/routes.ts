import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { listRoute, Id, IdParams, PageQuery, problems, Timestamp } from '../http/index.js';
import { isoRequired } from '../lib/time.js';
import { FlowSchema, type Flow } from '../voice/flow/index.js';
import { AgentChoiceSchema, AgentOptionsSchema } from '../voice/index.js';
import type { TemplateRow } from './repository.js';
import type { TemplatesService } from './service.js';

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Unique within the reseller; used when pushing leads' });
const NullableId = Type.Union([Id, Type.Null()]);

export const Template = Type.Object({
  id: Type.String(),
  name: Type.String(),
  reseller_id: Type.String(),
  merchant_id: Type.Union([Type.String(), Type.Null()], { description: 'null for a reseller-level template, shared with its merchants' }),
  flow: FlowSchema,
  agent: Type.Optional(AgentChoiceSchema),
  created_at: Timestamp,
  updated_at: Timestamp,
});

// The flow's structure is checked by validateFlow (all problems at once, with JSON pointers), so
// the body schema only insists on an object; the response schema documents the shape.
const FlowBody = Type.Object({}, { additionalProperties: true, description: 'initial_node and nodes; see the Template response schema' });
const AgentBody = Type.Optional(Type.Union([AgentChoiceSchema, Type.Null()], { description: 'Omitted or null: the service defaults' }));

const EXAMPLE_FLOW: Flow = {
  initial_node: 'confirm',
  nodes: [
    {
      node_name: 'confirm',
      role_messages: [{ role: 'system', content: 'You are a friendly assistant calling on behalf of {clinic_name}. Keep answers short.' }],
      task_messages: [{ role: 'system', content: 'Ask {customer_name} to confirm the appointment on {appointment_date}.' }],
      functions: [
        {
          name: 'confirm_appointment',
          description: 'The customer confirmed the appointment',
          properties: { note: { type: 'string', description: 'Anything the customer added' } },
          required: [],
          transition_to: 'goodbye',
          hooks: [
            {
              name: 'crm_update',
              http_request: {
                url: 'https://crm.example.com/appointments/{appointment_id}',
                method: 'PATCH',
                headers: { Authorization: 'Bearer {crm_token}' },
                body: { status: 'confirmed' },
                timeout: 10,
              },
            },
          ],
        },
      ],
      respond_immediately: true,
    },
    {
      node_name: 'goodbye',
      task_messages: [{ role: 'system', content: 'Thank the customer and say goodbye.' }],
      pre_actions: [{ type: 'tts_say', text: 'Thank you, see you then!' }],
      post_actions: [{ type: 'end_conversation', outcome: 'confirmed' }],
      outcome: 'confirmed',
    },
  ],
};

const CreateBody = Type.Object(
  {
    name: Name,
    reseller_id: Id,
    merchant_id: Type.Optional(NullableId),
    flow: FlowBody,
    agent: AgentBody,
  },
  {
    additionalProperties: false,
    examples: [{ name: 'appointment-confirmation', reseller_id: 'a-reseller-id', merchant_id: null, flow: EXAMPLE_FLOW }],
  },
);

const ReplaceBody = Type.Object(
  {
    id: Id,
    name: Name,
    reseller_id: Type.Optional(Id),
    merchant_id: Type.Optional(NullableId),
    flow: FlowBody,
    agent: AgentBody,
    created_at: Type.Optional(Type.String({ description: 'Accepted and ignored' })),
    updated_at: Type.Optional(Type.String({ description: 'Accepted and ignored' })),
  },
  {
    additionalProperties: false,
    examples: [{ id: 'the-template-id', name: 'appointment-confirmation', reseller_id: 'a-reseller-id', merchant_id: null, flow: EXAMPLE_FLOW }],
  },
);

const ListQuery = Type.Intersect([
  PageQuery,
  Type.Object({ reseller_id: Type.Optional(Id), merchant_id: Type.Optional(Id), name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }),
]);

const templateView = (t: TemplateRow) => ({
  id: t.id,
  name: t.name,
  reseller_id: t.reseller_id,
  merchant_id: t.merchant_id,
  flow: t.flow,
  // Only a template that chose has the field: one that never did reads as it always has.
  ...(t.agent ? { agent: t.agent } : {}),
  created_at: isoRequired(t.created_at),
  updated_at: isoRequired(t.updated_at),
});

/** Templates. */
export function registerTemplateRoutes(app: App, templates: TemplatesService): void {
  app.post('/templates', {
    config: { permission: ['templates', 'write'] },
    schema: {
      tags: ['templates'],
      summary: 'Create a template (a merchant token creates for its own merchant)',
      body: CreateBody,
      response: { 200: Template, ...problems(400, 401, 403, 409) },
    },
    handler: async (request) => {
      const body = request.body;
      return templateView(await templates.create(request.principal, { ...body, name: body.name.trim() }));
    },
  });

  listRoute(app, '/templates', {
    config: { permission: ['templates', 'read'] },
    tags: ['templates'],
    summary: 'List templates in scope; reseller_id, merchant_id and name only narrow it',
    querystring: ListQuery,
    item: Template,
    list: (request, { reseller_id, merchant_id, name }, page) => templates.list(request.principal, { reseller_id, merchant_id, name }, page.limit, page.offset),
    view: templateView,
  });

  app.get('/templates/:id', {
    config: { permission: ['templates', 'read'] },
    schema: { tags: ['templates'], summary: 'Read a template', params: IdParams, response: { 200: Template, ...problems(401, 403, 404) } },
    handler: async (request) => templateView(await templates.get(request.principal, request.params.id)),
  });

  app.put('/templates/:id', {
    config: { permission: ['templates', 'write'] },
    schema: {
      tags: ['templates'],
      summary: 'Replace a template: the whole object including id (no partial updates; reseller_id cannot change)',
      params: IdParams,
      body: ReplaceBody,
      response: { 200: Template, ...problems(400, 401, 403, 404, 409) },
    },
    handler: async (request) => {
      const { created_at: _created, updated_at: _updated, ...body } = request.body;
      return templateView(await templates.replace(request.principal, request.params.id, { ...body, name: body.name.trim() }));
    },
  });

  app.get('/agent-options', {
    config: { permission: ['templates', 'read'] },
    schema: {
      tags: ['templates'],
      summary: "What a template's `agent` may choose: the voices, LLM models and speech-to-text languages this service has configured, with the defaults",
      response: { 200: AgentOptionsSchema, ...problems(401, 403) },
    },
    handler: async () => templates.agentOptions,
  });

  app.delete('/templates/:id', {
    config: { permission: ['templates', 'write'] },
    schema: {
      tags: ['templates'],
      summary: 'Delete a template no lead or configuration refers to (409 otherwise)',
      params: IdParams,
      response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...problems(401, 403, 404, 409) },
    },
    handler: async (request) => {
      const row = await templates.delete(request.principal, request.params.id);
      return { id: row.id, deleted: true as const };
    },
  });
}
