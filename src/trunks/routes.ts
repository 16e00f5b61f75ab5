import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { listRoute, IdParams, NullableTimestamp, PageQuery, problems, Timestamp } from '../http/index.js';
import { badRequest } from '../lib/errors.js';
import { isoRequired } from '../lib/time.js';
import { RATE_WINDOW_SECONDS, type TrunkFailureRow, type TrunkRow } from './repository.js';
import type { TrunksService } from './service.js';

const Codec = Type.Union([Type.Literal('PCMU'), Type.Literal('PCMA')]);
const Transport = Type.Union([Type.Literal('udp'), Type.Literal('tcp'), Type.Literal('tls')], { description: 'How SIP reaches the trunk: udp, tcp (connections reused per trunk), or tls (the certificate is verified against the trunk host; DIALER_SIP_TLS_CA adds a private CA). Port 5060 when the address names none, 5061 for tls. RTP is UDP in every case.' });
const TransferMethod = Type.Union([Type.Literal('refer'), Type.Literal('bridge')], {
  description: "How the agent's transfer reaches the human: refer asks the carrier to call them (SIP REFER, a cold transfer); bridge has Dialer call them on this trunk and join the two calls (a warm transfer)",
});
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));

const Fields = {
  reseller_id: Type.String({ minLength: 1, maxLength: 64 }),
  name: Type.String({ minLength: 1, maxLength: 100 }),
  address: Type.String({ minLength: 1, maxLength: 255, description: 'host or host:port (5060 when absent); the outbound address policy applies' }),
  transport: Transport,
  username: Nullable(Type.String({ minLength: 1, maxLength: 128 })),
  password: Nullable(Type.String({ minLength: 1, maxLength: 256, description: 'For digest authentication; write-only (never returned). Left out on update: kept.' })),
  from_domain: Nullable(Type.String({ minLength: 1, maxLength: 255, description: "The From header's domain (default: the trunk's host)" })),
  codecs: Type.Array(Codec, { minItems: 1, maxItems: 2, default: ['PCMU', 'PCMA'], description: 'Offered in this order' }),
  max_channels: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 100_000 }), Type.Null()], { description: 'Concurrent calls' })),
  max_calls_per_second: Type.Optional(Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 10_000 }), Type.Null()])),
  failover_trunk_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], { description: 'A trunk of the same reseller' })),
  transfer_method: Type.Optional({ ...TransferMethod, default: 'refer' }),
};

export const TrunkBody = Type.Object(Fields, {
  additionalProperties: false,
  examples: [{ reseller_id: 'r_123', name: 'Carrier A', address: 'sip.carrier.example:5060', transport: 'udp', username: 'dialer', password: 'secret', codecs: ['PCMU', 'PCMA'], max_channels: 30 }],
});
const ReplaceBody = Type.Object(
  { id: Type.Optional(Type.String()), ...Fields, has_password: Type.Optional(Type.Boolean()), sandbox: Type.Optional(Type.Boolean()), channels_in_use: Type.Optional(Type.Integer()), calls_per_second: Type.Optional(Type.Number()), created_at: Type.Optional(Type.String()), updated_at: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

export const Trunk = Type.Object({
  id: Type.String(),
  reseller_id: Type.String(),
  name: Type.String(),
  address: Type.String(),
  transport: Transport,
  username: Type.Union([Type.String(), Type.Null()]),
  has_password: Type.Boolean({ description: 'A password is stored (it is never returned)' }),
  from_domain: Type.Union([Type.String(), Type.Null()]),
  codecs: Type.Array(Codec),
  max_channels: Type.Union([Type.Integer(), Type.Null()]),
  max_calls_per_second: Type.Union([Type.Number(), Type.Null()]),
  failover_trunk_id: Type.Union([Type.String(), Type.Null()]),
  transfer_method: TransferMethod,
  sandbox: Type.Boolean({ description: "The sandbox line's trunk (made by POST /sandbox/call over SIP): its far side is the simulated customer inside Dialer; it cannot be changed or deleted" }),
  channels_in_use: Type.Integer({ description: 'Live calls holding the trunk now, across all workers' }),
  calls_per_second: Type.Number({ description: `Calls started through the trunk per second, over the last ${RATE_WINDOW_SECONDS} seconds` }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const TrunkFailure = Type.Object({
  lead_id: Type.String(),
  attempt: Type.Integer(),
  started_at: Timestamp,
  ended_at: NullableTimestamp,
  outcome: Type.Union([Type.String(), Type.Null()], { description: "The attempt's outcome (a failover's attempt: how the call on the next trunk ended)" }),
  sip_status: Type.Integer({ description: 'The final SIP status this trunk answered the INVITE with (408 when it answered nothing)' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: "The status's reason, or the attempt's error text" }),
  sip_statuses: Type.Union([Type.Array(Type.Integer()), Type.Null()], { description: 'Every status after 100 of the call on this trunk, in order (null for a refusal before a failover)' }),
  failed_over_to: Type.Union([Type.String(), Type.Null()], { description: 'The trunk that took the call after this one refused it, or null' }),
});

const FailuresQuery = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }) }, { additionalProperties: false });

const failureView = (f: TrunkFailureRow) => ({ ...f, started_at: isoRequired(f.started_at), ended_at: f.ended_at ? isoRequired(f.ended_at) : null });

const ListQuery = Type.Intersect([PageQuery, Type.Object({ reseller_id: Type.Optional(Type.String({ maxLength: 64 })) })]);

const view = ({ password, ...t }: TrunkRow) => ({ ...t, has_password: password !== null, channels_in_use: t.channels_in_use ?? 0, calls_per_second: t.calls_per_second ?? 0, created_at: isoRequired(t.created_at), updated_at: isoRequired(t.updated_at) });

/** SIP trunks. */
export function registerTrunkRoutes(app: App, trunks: TrunksService): void {
  app.post('/trunks', {
    config: { permission: ['trunks', 'write'] },
    schema: { tags: ['trunks'], summary: 'Add a SIP trunk (an extension of the interface)', body: TrunkBody, response: { 200: Trunk, ...problems(400, 401, 403, 409) } },
    handler: async (request) => view(await trunks.create(request.principal, request.body)),
  });

  listRoute(app, '/trunks', {
    config: { permission: ['trunks', 'read'] },
    tags: ['trunks'],
    summary: 'List SIP trunks in scope',
    querystring: ListQuery,
    item: Trunk,
    list: (request, { reseller_id }, page) => trunks.list(request.principal, reseller_id, page.limit, page.offset),
    view,
  });

  app.get('/trunks/:id', {
    config: { permission: ['trunks', 'read'] },
    schema: { tags: ['trunks'], summary: 'Read a SIP trunk', params: IdParams, response: { 200: Trunk, ...problems(401, 403, 404) } },
    handler: async (request) => view(await trunks.get(request.principal, request.params.id)),
  });

  app.get('/trunks/:id/failures', {
    config: { permission: ['trunks', 'read'] },
    schema: {
      tags: ['trunks'],
      summary: "A SIP trunk's recent failed calls, newest first: the INVITEs it refused (with their SIP status and reason), and the calls it refused before its failover trunk took them",
      params: IdParams,
      querystring: FailuresQuery,
      response: { 200: Type.Object({ data: Type.Array(TrunkFailure) }), ...problems(400, 401, 403, 404) },
    },
    handler: async (request) => ({ data: (await trunks.failures(request.principal, request.params.id, request.query.limit)).map(failureView) }),
  });

  app.put('/trunks/:id', {
    config: { permission: ['trunks', 'write'] },
    schema: { tags: ['trunks'], summary: 'Replace a SIP trunk (a password left out is kept)', params: IdParams, body: ReplaceBody, response: { 200: Trunk, ...problems(400, 401, 403, 404, 409) } },
    handler: async (request) => {
      const { id, has_password: _h, sandbox: _s, channels_in_use: _n, calls_per_second: _r, created_at: _c, updated_at: _u, ...input } = request.body;
      if (id !== undefined && id !== request.params.id) throw badRequest(`id ${id} must equal the id in the path`, [{ path: '/id', message: `must equal ${request.params.id}` }]);
      return view(await trunks.replace(request.principal, request.params.id, input));
    },
  });

  app.delete('/trunks/:id', {
    config: { permission: ['trunks', 'write'] },
    schema: {
      tags: ['trunks'],
      summary: 'Delete a SIP trunk (409 while a configuration dials through it)',
      params: IdParams,
      response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...problems(401, 403, 404, 409) },
    },
    handler: async (request) => {
      const row = await trunks.delete(request.principal, request.params.id);
      return { id: row.id, deleted: true as const };
    },
  });
}
