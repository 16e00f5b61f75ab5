import type { App } from '../http/index.js';
import { problems } from '../http/index.js';
import { iso } from '../lib/time.js';
import type { RetentionSettings } from './retention.js';
import type { RetentionRow } from './repository.js';
import { ErasureBody, ErasureResult, ExportDocument, ExportQuery, Retention, RetentionBody, RetentionQuery } from './schema.js';
import type { PrivacyService } from './service.js';

const retentionView = (r: RetentionRow) => ({ ...r, updated_at: iso(r.updated_at) });

/** Subject access, erasure and retention. */
export function registerPrivacyRoutes(app: App, privacy: PrivacyService, retention: RetentionSettings): void {
  app.post('/privacy/erasure', {
    config: { permission: ['privacy', 'write'], audit: 'erasure' },
    schema: {
      tags: ['compliance'],
      summary: 'Erase a person: every lead of a number (or of a lead\'s number) in scope loses its personal content and recordings',
      description:
        'Payload fields (except reporting_webhook_url), transcript, analysis and what the callee said or keyed are removed; recordings are deleted from local storage and the bucket; ' +
        'the number is kept only as a one-way hash, also on the blacklist, so that an earlier opt-out still refuses a later push. Status, outcome and figures stay: analytics counts are unchanged. ' +
        'A waiting lead is finished (aborted, "erased on request"). 404 when nothing about the number is in scope; 409 while a call to it is live. The audit trail records the erasure without the number.',
      body: ErasureBody,
      response: { 200: ErasureResult, ...problems(400, 401, 403, 404, 409, 503) },
    },
    handler: async (request) => privacy.erase(request.principal, request.body),
  });

  app.get('/privacy/export', {
    config: { permission: ['privacy', 'read'] },
    schema: {
      tags: ['compliance'],
      summary: 'Subject access: everything Dialer holds about a number in scope (leads, calls, transcripts, recording links, consent, opt-outs, list entries), as one JSON document',
      querystring: ExportQuery,
      response: { 200: ExportDocument, ...problems(400, 401, 403) },
    },
    handler: async (request) => privacy.export(request.principal, request.query.phone_number),
  });

  app.get('/privacy/retention', {
    config: { permission: ['privacy', 'read'] },
    schema: {
      tags: ['compliance'],
      summary: "A reseller's retention of recordings and transcripts (an admin names the reseller)",
      querystring: RetentionQuery,
      response: { 200: Retention, ...problems(400, 401, 403) },
    },
    handler: async (request) => retentionView(await retention.get(request.principal, request.query.reseller_id)),
  });

  app.put('/privacy/retention', {
    config: { permission: ['privacy', 'write'] },
    schema: {
      tags: ['compliance'],
      summary: "Set a reseller's retention: recordings and transcripts of calls that ended more than so many days ago are deleted by the hourly retention job (null: kept)",
      body: RetentionBody,
      response: { 200: Retention, ...problems(400, 401, 403) },
    },
    handler: async (request) => retentionView(await retention.set(request.principal, request.body)),
  });
}
