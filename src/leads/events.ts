/**
 * GET /events: server-sent events for a page that shows leads. A client names the leads it shows
 * (`leads=id,id`) and whether it wants the count of calls in progress (`live=true`); it hears
 * `lead` when one of them changes (status, outcome, attempts, call), `transcript` for each line a
 * live call of one of them adds (src/leads/live-transcript.ts), and `live` when the count does.
 * One watcher per process reads every watched lead in one statement a second, only while someone
 * watches; a client that stays connected through any process sees changes made by every process.
 */
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { inScope, scopeCondition, type Principal } from '../auth/index.js';
import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { problems } from '../http/index.js';
import { badRequest } from '../lib/errors.js';
import { LiveTranscripts } from './live-transcript.js';
import { LeadWatchRepository, type LeadState } from './watch-repository.js';

const MAX_WATCHED = 500;
const KEEPALIVE_MS = 15_000;

export const LeadEvent = Type.Object(
  {
    id: Type.String(),
    status: Type.String(),
    outcome: Type.Union([Type.String(), Type.Null()]),
    attempt_count: Type.Integer(),
    call_id: Type.Union([Type.String(), Type.Null()]),
    updated_at: Type.String(),
  },
  { description: 'data of a `lead` event' },
);
export const TranscriptEvent = Type.Object(
  {
    id: Type.String({ description: 'the lead' }),
    seq: Type.Integer({ description: "the line's place in the live call's transcript, from 1" }),
    role: Type.String(),
    content: Type.String(),
    at_ms: Type.Optional(Type.Integer({ description: "milliseconds into the call's recording" })),
  },
  { description: 'data of a `transcript` event: a line a live call of a watched lead added' },
);
export const LiveEvent = Type.Object({ live_calls: Type.Integer() }, { description: 'data of a `live` event' });

interface Watcher {
  principal: Principal;
  ids: readonly string[];
  live: boolean;
  seen: Map<string, string>;
  /** The last live transcript line sent, per lead being called. */
  lines: Map<string, number>;
  liveCalls: number | undefined;
  send(event: string, data: unknown): void;
  /** Ends the client's stream (the service is closing). */
  end(): void;
}

const fingerprint = (s: LeadState) => `${s.status}|${s.outcome}|${s.attempt_count}|${s.call_id}|${new Date(s.updated_at).getTime()}`;

export class LeadWatch {
  private readonly watchers = new Set<Watcher>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly repo: LeadWatchRepository;

  constructor(
    private readonly db: Db,
    private readonly intervalMs = 1000,
  ) {
    this.repo = new LeadWatchRepository(db);
  }

  add(watcher: Watcher): () => void {
    this.watchers.add(watcher);
    this.timer ??= setInterval(() => void this.tick(), this.intervalMs);
    // The first look sets what each client starts from (it just read the page it shows).
    void this.tick();
    return () => {
      this.watchers.delete(watcher);
      if (this.watchers.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Ends every stream: open event streams would otherwise keep the server from closing. */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const w of this.watchers) w.end();
    this.watchers.clear();
  }

  private async tick(): Promise<void> {
    if (this.running || this.watchers.size === 0) return;
    this.running = true;
    try {
      const ids = new Set<string>();
      for (const w of this.watchers) for (const id of w.ids) ids.add(id);
      const states = ids.size > 0 ? new Map((await this.repo.states([...ids])).map((s) => [s.id, s])) : new Map<string, LeadState>();
      // Live lines only of leads being called (the others' transcript is on the lead).
      const live = [...states.values()].filter((s) => s.status === 'PROCESSING').map((s) => s.id);
      const lines = new Map<string, Awaited<ReturnType<typeof LiveTranscripts.of>>>();
      for (const line of await LiveTranscripts.of(this.db, live)) lines.set(line.lead_id, [...(lines.get(line.lead_id) ?? []), line]);
      const counts = new Map<string, Promise<number>>();
      for (const w of this.watchers) {
        for (const id of w.ids) {
          const s = states.get(id);
          if (!s || !inScope(w.principal, s.reseller_id, s.merchant_id)) continue;
          const print = fingerprint(s);
          const before = w.seen.get(id);
          w.seen.set(id, print);
          if (before !== undefined && before !== print) {
            w.send('lead', { id, status: s.status, outcome: s.outcome, attempt_count: s.attempt_count, call_id: s.call_id, updated_at: new Date(s.updated_at).toISOString() });
          }
          // Between calls nothing is sent; the next call numbers its lines from 1 again.
          if (s.status !== 'PROCESSING') w.lines.delete(id);
          const ofLead = lines.get(id) ?? [];
          const sent = w.lines.get(id) ?? 0;
          for (const line of ofLead) {
            if (line.seq <= sent) continue;
            w.send('transcript', { id, seq: line.seq, role: line.role, content: line.content, ...(line.at_ms === undefined ? {} : { at_ms: line.at_ms }) });
          }
          if (ofLead.length > 0) w.lines.set(id, ofLead.at(-1)!.seq);
        }
        if (!w.live) continue;
        // Watchers of the same scope share one count.
        const key = `${w.principal.role}:${w.principal.resellerId}:${w.principal.merchantId}`;
        if (!counts.has(key)) {
          const params: unknown[] = [];
          counts.set(key, this.repo.processing(scopeCondition(w.principal, { reseller: 'l.reseller_id', merchant: 'l.merchant_id' }, params), params));
        }
        const n = await counts.get(key)!;
        if (n !== w.liveCalls) {
          w.liveCalls = n;
          w.send('live', { live_calls: n });
        }
      }
    } catch {
      // A failed look is retried on the next tick; clients keep their connection.
    } finally {
      this.running = false;
    }
  }
}

const EventsQuery = Type.Object({
  leads: Type.Optional(Type.String({ maxLength: MAX_WATCHED * 65, description: `Comma-separated ids of the leads to watch (at most ${MAX_WATCHED})` })),
  live: Type.Optional(Type.Boolean({ default: false, description: 'Also send `live` with the number of calls in progress in scope' })),
});

function openStream(reply: FastifyReply, requestId: string): (event: string, data: unknown) => void {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': requestId,
  });
  res.write('retry: 3000\n\n');
  return (event, data) => {
    if (!res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
}

export function registerLeadEvents(app: App, watch: LeadWatch): void {
  app.get('/events', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: 'Server-sent events (text/event-stream): `lead` when a watched lead changes, `transcript` for each line its live call adds, `live` when the number of calls in progress changes',
      description:
        'Events carry JSON: lead {id, status, outcome, attempt_count, call_id, updated_at}; transcript {id, seq, role, content, at_ms} (an extension: the lines of a watched lead\'s call in progress, in order; a new call starts at seq 1); live {live_calls}; ready {} once watching. ' +
        'Leads out of the caller\'s scope are never reported. A comment line keeps idle connections open.',
      querystring: EventsQuery,
      produces: ['text/event-stream'],
      response: { ...problems(400, 401, 403) },
    },
    handler: async (request, reply) => {
      const ids = (request.query.leads ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      if (ids.length > MAX_WATCHED) throw badRequest(`At most ${MAX_WATCHED} leads can be watched at once`, [{ path: '/leads', message: `has ${ids.length} ids` }]);
      if (ids.some((id) => id.length > 64)) throw badRequest('A lead id is at most 64 characters', [{ path: '/leads', message: 'has an id that is too long' }]);
      const send = openStream(reply, request.id);
      const end = () => reply.raw.end();
      const stop = watch.add({ principal: request.principal, ids: [...new Set(ids)], live: request.query.live === true, seen: new Map(), lines: new Map(), liveCalls: undefined, send, end });
      send('ready', {});
      const keepalive = setInterval(() => reply.raw.write(': keepalive\n\n'), KEEPALIVE_MS);
      request.raw.on('close', () => {
        clearInterval(keepalive);
        stop();
      });
    },
  });
}
