/**
 * The live transcript of calls in progress: each line a call's agent adds (what the agent said,
 * what the caller said, once final) is written as it comes, so that GET /events can send it to a
 * page watching the lead, whichever process carries the call. Lines are written a handful at a
 * time (one statement per turn of the event loop for all live calls), never on the audio path.
 */
import type { Db, Queryable } from '../db/index.js';
import type { Logger } from '../lib/logger.js';

export interface LiveLine {
  role: 'user' | 'assistant';
  content: string;
  /** Milliseconds into the call's recording, when it is recorded. */
  at_ms?: number | undefined;
}

export interface StoredLiveLine extends LiveLine {
  lead_id: string;
  seq: number;
}

/** How long live lines are kept after they were written (the lead keeps the whole transcript). */
const KEEP_HOURS = 24;
const PRUNE_EVERY_MS = 10 * 60_000;

export class LiveTranscripts {
  private pending: StoredLiveLine[] = [];
  private flushing: Promise<void> | undefined;
  private lastPrune = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /**
   * A call's line sink: numbers the call's lines from 1 and drops what an earlier call of the lead
   * left (a retry starts a new live transcript).
   */
  sink(leadId: string): (line: LiveLine) => void {
    let seq = 0;
    return (line) => {
      this.pending.push({ lead_id: leadId, seq: ++seq, role: line.role, content: line.content, at_ms: line.at_ms });
      this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
    };
  }

  private async flush(): Promise<void> {
    const lines = this.pending;
    this.pending = [];
    try {
      await this.db.tx(async (q) => {
        const firsts = lines.filter((l) => l.seq === 1).map((l) => l.lead_id);
        if (firsts.length > 0) await q.query('DELETE FROM live_transcript_lines WHERE lead_id = ANY($1::text[])', [firsts]);
        await q.query(
          `INSERT INTO live_transcript_lines (lead_id, seq, role, content, at_ms)
           SELECT x.lead_id, x.seq, x.role, x.content, x.at_ms FROM jsonb_to_recordset($1::jsonb) AS x (lead_id text, seq integer, role text, content text, at_ms integer)
           ON CONFLICT (lead_id, seq) DO UPDATE SET role = excluded.role, content = excluded.content, at_ms = excluded.at_ms, created_at = now()`,
          [JSON.stringify(lines)],
        );
        if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) {
          this.lastPrune = Date.now();
          await q.query(`DELETE FROM live_transcript_lines WHERE created_at < now() - make_interval(hours => ${KEEP_HOURS})`);
        }
      });
    } catch (err) {
      // A live view only: the call's transcript is written with its lead whatever happens here.
      this.log.warn({ err, lines: lines.length }, 'could not write live transcript lines');
    } finally {
      this.flushing = undefined;
      if (this.pending.length > 0) this.flushing = this.flush();
    }
  }

  /** The live lines of these leads, in order. */
  static async of(db: Db, leadIds: readonly string[]): Promise<StoredLiveLine[]> {
    if (leadIds.length === 0) return [];
    const { rows } = await db.query<StoredLiveLine & { at_ms: number | null }>(
      'SELECT lead_id, seq, role, content, at_ms FROM live_transcript_lines WHERE lead_id = ANY($1::text[]) ORDER BY lead_id, seq',
      [leadIds],
      { prepare: true },
    );
    return rows.map((r) => ({ ...r, at_ms: r.at_ms ?? undefined }));
  }
}

/** Erasure: the live lines of these leads deleted; returns how many. */
export async function forgetLiveLines(q: Queryable, leadIds: readonly string[]): Promise<number> {
  if (leadIds.length === 0) return 0;
  const { rows } = await q.query<{ n: number }>('WITH d AS (DELETE FROM live_transcript_lines WHERE lead_id = ANY($1::text[]) RETURNING 1) SELECT count(*)::int AS n FROM d', [leadIds]);
  return rows[0]?.n ?? 0;
}
