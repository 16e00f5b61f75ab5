import { Readable } from 'node:stream';
import type { App } from '../http/index.js';
import { listRoute, IdParams, PageQuery, paged, problems, toPage } from '../http/index.js';
import { iso, isoRequired } from '../lib/time.js';
import type { CampaignRow } from './repository.js';
import { resultView } from './results.js';
import { Campaign, CampaignListQuery, CampaignSummary, CreateCampaignBody, ResultList } from './schema.js';
import type { CampaignsService, Progress } from './service.js';

function summaryView(c: CampaignRow) {
  return {
    id: c.id,
    name: c.name,
    reseller_id: c.reseller_id,
    merchant_id: c.merchant_id,
    template: c.template_name,
    template_id: c.template_id,
    status: c.status,
    paused_reason: c.state === 'paused' ? c.paused_reason : null,
    max_concurrent_calls: c.max_concurrent_calls,
    max_calls_per_second: c.max_calls_per_second,
    start_at: iso(c.start_at),
    end_at: iso(c.end_at),
    circuit_breaker:
      c.breaker_failure_ratio === null
        ? null
        : { failure_ratio: c.breaker_failure_ratio, window_seconds: c.breaker_window_seconds!, min_calls: c.breaker_min_calls! },
    stopped_at: iso(c.stopped_at),
    created_at: isoRequired(c.created_at),
    updated_at: isoRequired(c.updated_at),
  };
}

const view = (c: CampaignRow, progress: Progress) => ({ ...summaryView(c), progress });

const ACTIONS = {
  pause: 'Pause: no new call of the campaign starts on any worker once this answers; calls in flight end normally. 409 when it is completed, stopped or already paused',
  resume: 'Resume a paused campaign where it stopped (clears paused_reason, the breaker’s too). 409 when it is not paused',
  stop: 'Stop for good: its queued leads finish with outcome aborted and cancellation_reason "campaign stopped"; calls in flight end normally. 409 when it is completed or stopped',
} as const;

/** Campaigns. `base`: the API's public URL, for the links in the results. */
export function registerCampaignRoutes(app: App, campaigns: CampaignsService, base: string): void {
  app.post('/campaigns', {
    config: { permission: ['campaigns', 'write'] },
    schema: {
      tags: ['campaigns'],
      summary: 'Create a campaign: a named set of leads of one template with a cap, a pace, dates and a circuit breaker',
      description:
        'Leads join it with campaign_id on POST /leads or POST /leads/batch. 400: a bad field (a cap below 1, a pace of 0 or less, end_at not after start_at or in the past). ' +
        '403: the reseller/merchant is outside the token. 404: no such template under the reseller/merchant.',
      body: CreateCampaignBody,
      response: { 201: Campaign, ...problems(400, 401, 403, 404) },
    },
    handler: async (request, reply) => {
      const c = await campaigns.create(request.principal, request.body);
      return reply.code(201).send(view(c, await campaigns.progress(c.id)));
    },
  });

  listRoute(app, '/campaigns', {
    config: { permission: ['campaigns', 'read'] },
    tags: ['campaigns'],
    summary: 'List campaigns in scope, newest first (without progress: GET /campaigns/{id} has it)',
    querystring: CampaignListQuery,
    item: CampaignSummary,
    list: (request, query, page) => campaigns.list(request.principal, query, page.limit, page.offset),
    view: summaryView,
  });

  app.get('/campaigns/:id', {
    config: { permission: ['campaigns', 'read'] },
    schema: { tags: ['campaigns'], summary: 'Read a campaign: its status and progress', params: IdParams, response: { 200: Campaign, ...problems(401, 403, 404) } },
    handler: async (request) => {
      const c = await campaigns.get(request.principal, request.params.id);
      return view(c, await campaigns.progress(c.id));
    },
  });

  for (const action of ['pause', 'resume', 'stop'] as const) {
    app.post(`/campaigns/:id/${action}`, {
      config: { permission: ['campaigns', 'write'], audit: action },
      schema: { tags: ['campaigns'], summary: ACTIONS[action], params: IdParams, response: { 200: Campaign, ...problems(401, 403, 404, 409) } },
      handler: async (request) => {
        const c = await campaigns[action](request.principal, request.params.id);
        return view(c, await campaigns.progress(c.id));
      },
    });
  }

  app.get('/campaigns/:id/results', {
    config: { permission: ['campaigns', 'read'] },
    schema: {
      tags: ['campaigns'],
      summary: 'A row per lead: request id, number, status, outcome, attempts, duration, cost, the post-call analysis, links to the lead and its recording',
      description: 'With Accept: text/csv, every lead as CSV (the analysis fields each their own column), in the order they were pushed (then by id); JSON pages otherwise.',
      params: IdParams,
      querystring: PageQuery,
      produces: ['application/json', 'text/csv'],
      response: { 200: ResultList, ...problems(400, 401, 403, 404) },
    },
    handler: async (request, reply) => {
      const c = await campaigns.get(request.principal, request.params.id);
      const columns = await campaigns.resultColumns(c);
      if (/\btext\/csv\b/i.test(request.headers.accept ?? '')) {
        reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="campaign-${c.id}-results.csv"`);
        // A stream is sent as it is: the JSON schema of 200 is not applied to it.
        return reply.send(Readable.from(campaigns.resultsCsv(c, columns, base)) as never);
      }
      const page = toPage(request.query);
      const { rows, total } = await campaigns.results(c, page.limit, page.offset);
      return { ...paged(rows.map((r) => resultView(r, base)), total, page), columns };
    },
  });
}

