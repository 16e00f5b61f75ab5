import type { Db } from '../db/index.js';
import type { OnFinished } from '../lifecycle/index.js';
import type { RecordingStore } from '../recordings/index.js';
import type { App } from '../http/index.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import { registerLeadRoutes } from './routes.js';
import { registerLeadReadRoutes } from './read-routes.js';
import { registerRecordingRoutes } from './recording-routes.js';
import { LeadsService } from './service.js';
import { IdempotencyKeys } from './idempotency.js';
import type { Logger } from '../lib/logger.js';
import { LeadWatch, registerLeadEvents } from './events.js';

export { LeadsService } from './service.js';
export { leadView } from './routes.js';
export type { LeadRow } from '../lifecycle/index.js';
export { EXECUTION_MODES, LEAD_STATUSES, type ExecutionMode } from './schema.js';

export { LeadList } from './routes.js';
export { Attempt } from './read-routes.js';
export { LeadEvent, LiveEvent, TranscriptEvent } from './events.js';
export { LiveTranscripts, forgetLiveLines, type LiveLine } from './live-transcript.js';
export { RecordingLink, RecordingPeaks } from './recording-routes.js';
export { LeadListQuery, SORT_KEYS, COUNT_CAP } from './list-query.js';
export { ImportPreview, PreviewBody } from './import-preview.js';
export { checkColumns, toPushBody, describeRejection, CsvHeaderError, TOP_LEVEL_COLUMNS } from './csv-rows.js';

/** The leads feature's only door: push (single and batch), read, list, search, export, attempts, abort, recordings. */
export function registerLeads(
  app: App,
  deps: {
    db: Db;
    recordings?: RecordingStore | undefined;
    onFinished: OnFinished;
    /** Key of the signed recording links an <audio> element plays. */
    linkKey: Buffer;
    /** The public URL the API is reached at (the links include it), and the API's prefix. */
    publicBase: string;
    prefix: string;
    /** The outbound URL policy: URLs a tenant writes on a lead are checked with it. */
    policy: OutboundPolicy;
  },
): void {
  const leads = new LeadsService(deps.db, deps.onFinished, deps.policy, app.initialConfig.bodyLimit);
  registerLeadRoutes(app, leads, new IdempotencyKeys(deps.db, app.log as Logger));
  registerLeadReadRoutes(app, leads);
  const watch = new LeadWatch(deps.db);
  app.addHook('preClose', async () => watch.close());
  registerLeadEvents(app, watch);
  registerRecordingRoutes(app, { leads, recordings: deps.recordings, linkKey: deps.linkKey, publicBase: deps.publicBase, prefix: deps.prefix });
}
