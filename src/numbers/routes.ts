import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { listRoute, IdParams, PageQuery, problems, Timestamp } from '../http/index.js';
import { badRequest } from '../lib/errors.js';
import { isoRequired } from '../lib/time.js';
import type { NumberWithHealth, OutboundNumberRow } from './row.js';
import type { NumbersService } from './service.js';

/** SIP (an extension): a caller ID of a SIP trunk. */
const Provider = Type.Union([Type.Literal('PROVIDER_A'), Type.Literal('PROVIDER_B'), Type.Literal('PROVIDER_C'), Type.Literal('SIP')]);
const Status = Type.Union([Type.Literal('AVAILABLE'), Type.Literal('IN_USE'), Type.Literal('DISABLED')]);

const Fields = {
  phone_number: Type.String({ minLength: 1, maxLength: 32, description: 'E.164, e.g. +14155550123; formatted numbers are refused' }),
  provider: Provider,
  status: Type.Union([Type.Literal('AVAILABLE'), Type.Literal('DISABLED'), Type.Literal('IN_USE')], {
    default: 'AVAILABLE',
    description: 'AVAILABLE or DISABLED; IN_USE is set only by the dialler while a call holds the number',
  }),
  channel: Type.String({ minLength: 1, maxLength: 32, default: 'voice' }),
};
export const CreateBody = Type.Object(Fields, {
  additionalProperties: false,
  examples: [{ phone_number: '+14155550123', provider: 'PROVIDER_A', status: 'AVAILABLE', channel: 'voice' }],
});
const ReplaceBody = Type.Object(
  {
    id: Type.Optional(Type.String({ description: 'When given, must equal the id in the path' })),
    ...Fields,
    lead_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Accepted and ignored' })),
    created_at: Type.Optional(Type.String({ description: 'Accepted and ignored' })),
    updated_at: Type.Optional(Type.String({ description: 'Accepted and ignored' })),
    health: Type.Optional(Type.Unknown({ description: 'Accepted and ignored (the health is measured, not written)' })),
  },
  { additionalProperties: false },
);

const rate = (description: string) => Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description });

/** An extension: clients that never read it are unaffected. */
const Health = Type.Object(
  {
    calls: Type.Integer({ description: "Dialled calls in the number's window (its latest calls within the window's hours, since its last rest)" }),
    answer_rate: rate('Share of those calls answered (a conversation took place); null without calls'),
    short_call_rate: rate('Share of the answered calls shorter than the short-call threshold; null without answered calls'),
    pool_answer_rate: rate("The answer rate of the provider's other numbers over their windows; null without calls"),
    measured_at: Type.Union([Timestamp, Type.Null()], { description: 'When a worker last measured it; null: not yet' }),
    rested_until: Type.Union([Timestamp, Type.Null()], { description: 'Resting (the dialler skips it) until then; null: not resting' }),
    rest_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it rests: its figures against its pool, or an operator' }),
  },
  { description: 'Extension: the caller ID health (docs/leads.md, "Outbound number")' },
);

export const OutboundNumber = Type.Object({
  id: Type.String(),
  phone_number: Type.String(),
  provider: Provider,
  status: Status,
  channel: Type.String(),
  lead_id: Type.Union([Type.String(), Type.Null()], { description: 'The lead whose call holds the number while IN_USE' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  health: Type.Optional(Health),
});

const RestBody = Type.Object(
  { rest_seconds: Type.Integer({ minimum: 1, maximum: 30 * 86_400, description: 'How long the number rests (at most 30 days)' }) },
  { additionalProperties: false, examples: [{ rest_seconds: 14_400 }] },
);

const ListQuery = Type.Intersect([
  PageQuery,
  Type.Object({ provider: Type.Optional(Provider), status: Type.Optional(Status), phone_number: Type.Optional(Type.String({ maxLength: 32 })) }),
]);

const share = (part: number | null, whole: number | null) => (part === null || !whole ? null : Math.round((part / whole) * 10_000) / 10_000);

const view = (n: OutboundNumberRow | NumberWithHealth) => {
  const { rested_until, rest_reason, ...row } = n;
  const resting = rested_until !== null && rested_until.getTime() > Date.now();
  const base = { id: row.id, phone_number: row.phone_number, provider: row.provider, status: row.status, channel: row.channel, lead_id: row.lead_id, created_at: isoRequired(row.created_at), updated_at: isoRequired(row.updated_at) };
  if (!('calls' in n)) return base;
  return {
    ...base,
    health: {
      calls: n.calls ?? 0,
      answer_rate: share(n.answered, n.calls),
      short_call_rate: share(n.short_calls, n.answered),
      pool_answer_rate: share(n.pool_answered, n.pool_calls),
      measured_at: n.measured_at ? isoRequired(n.measured_at) : null,
      rested_until: resting ? isoRequired(rested_until) : null,
      rest_reason: resting ? rest_reason : null,
    },
  };
};

/** Outbound numbers. */
export function registerNumberRoutes(app: App, numbers: NumbersService): void {
  app.post('/numbers', {
    config: { permission: ['numbers', 'write'] },
    schema: { tags: ['numbers'], summary: 'Add an outbound number', body: CreateBody, response: { 200: OutboundNumber, ...problems(400, 401, 403, 409) } },
    handler: async (request) => view(await numbers.create(request.body)),
  });

  listRoute(app, '/numbers', {
    config: { permission: ['numbers', 'read'] },
    tags: ['numbers'],
    summary: 'List outbound numbers; provider, status and phone_number narrow it',
    querystring: ListQuery,
    item: OutboundNumber,
    list: (_request, { provider, status, phone_number }, page) => numbers.list({ provider, status, phone_number }, page.limit, page.offset),
    view,
  });

  app.get('/numbers/:id', {
    config: { permission: ['numbers', 'read'] },
    schema: { tags: ['numbers'], summary: 'Read an outbound number', params: IdParams, response: { 200: OutboundNumber, ...problems(401, 403, 404) } },
    handler: async (request) => view(await numbers.get(request.params.id)),
  });

  app.post('/numbers/:id/rest', {
    config: { permission: ['numbers', 'write'], audit: 'rest' },
    schema: {
      tags: ['numbers'],
      summary: 'Extension: rest a number (the dialler skips it) for rest_seconds; it comes back by itself',
      params: IdParams,
      body: RestBody,
      response: { 200: OutboundNumber, ...problems(400, 401, 403, 404) },
    },
    handler: async (request) => view(await numbers.rest(request.params.id, request.body.rest_seconds)),
  });

  app.delete('/numbers/:id/rest', {
    config: { permission: ['numbers', 'write'], audit: 'unrest' },
    schema: {
      tags: ['numbers'],
      summary: 'Extension: end a number\'s rest now (its health is measured afresh from now)',
      params: IdParams,
      response: { 200: OutboundNumber, ...problems(401, 403, 404) },
    },
    handler: async (request) => view(await numbers.rest(request.params.id, null)),
  });

  app.put('/numbers/:id', {
    config: { permission: ['numbers', 'write'] },
    schema: {
      tags: ['numbers'],
      summary: 'Replace an outbound number (409 while a call holds it)',
      params: IdParams,
      body: ReplaceBody,
      response: { 200: OutboundNumber, ...problems(400, 401, 403, 404, 409) },
    },
    handler: async (request) => {
      const { id, phone_number, provider, status, channel } = request.body;
      if (id !== undefined && id !== request.params.id) {
        throw badRequest(`id ${id} must equal the id in the path`, [{ path: '/id', message: `must equal ${request.params.id}` }]);
      }
      return view(await numbers.replace(request.params.id, { phone_number, provider, status, channel }));
    },
  });

  app.delete('/numbers/:id', {
    config: { permission: ['numbers', 'write'] },
    schema: {
      tags: ['numbers'],
      summary: 'Delete an outbound number (409 while a call holds it)',
      params: IdParams,
      response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...problems(401, 403, 404, 409) },
    },
    handler: async (request) => {
      const row = await numbers.delete(request.params.id);
      return { id: row.id, deleted: true as const };
    },
  });
}
