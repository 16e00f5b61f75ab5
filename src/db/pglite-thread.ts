/**
 * The embedded database's own thread: PGlite (PostgreSQL compiled to WebAssembly) runs here, so a
 * long statement never holds up the main thread's event loop, which paces every live call's audio.
 * The main thread talks to it through pglite.ts; the messages are in pglite-messages.ts.
 *
 * Loaded by pglite-thread.mjs (which gives this thread the TypeScript loader).
 */
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, parse, protocol, types, type Results } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { toThreadError, type ThreadOptions, type ThreadReply, type ThreadRequest } from './pglite-messages.js';

// Same conventions as the pg driver (see postgres.ts): int8 as number, numeric as string.
const parsers = {
  [types.INT8]: (value: string) => Number(value),
  [types.NUMERIC]: (value: string) => value,
};

interface Prepared {
  name: string;
  paramTypes: number[];
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function rowCountOf(result: Results): number {
  // PGlite counts no rows for a SELECT; pg (and the Db interface) count the rows returned.
  return result.affectedRows || result.rows.length;
}

class DatabaseThread {
  /** Requests not yet run, in arrival order. */
  private readonly waiting: ThreadRequest[] = [];
  private running = false;
  /** The open transaction's number: only its requests run until it ends. */
  private openTx: number | undefined;
  /** A transaction whose BEGIN failed: its statements fail, its end runs nothing. */
  private failedTx: number | undefined;
  private readonly prepared = new Map<string, Prepared>();
  private readonly listeners = new Map<string, () => Promise<void>>();

  constructor(
    private readonly pg: PGlite,
    private readonly send: (reply: ThreadReply, transfer?: ArrayBuffer[]) => void,
  ) {}

  receive(request: ThreadRequest): void {
    this.waiting.push(request);
    void this.pump();
  }

  private next(): ThreadRequest | undefined {
    const at =
      this.openTx === undefined
        ? 0
        : this.waiting.findIndex((r) => ('tx' in r && r.tx === this.openTx) || r.op === 'close');
    if (at < 0 || at >= this.waiting.length) return undefined;
    return this.waiting.splice(at, 1)[0];
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let request = this.next(); request; request = this.next()) {
        try {
          await this.run(request);
        } catch (err) {
          this.send({ id: request.id, ok: false, error: toThreadError(err) });
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async run(r: ThreadRequest): Promise<void> {
    if (r.op !== 'end' && 'tx' in r && r.tx !== undefined && r.tx === this.failedTx) throw new Error('the transaction could not begin');
    switch (r.op) {
      case 'query': {
        const { rows, rowCount } = r.prepare ? await this.runPrepared(r.sql, r.params) : await this.runQuery(r.sql, r.params);
        this.send({ id: r.id, ok: true, rows, rowCount });
        return;
      }
      case 'exec':
        await this.pg.exec(r.sql);
        this.send({ id: r.id, ok: true });
        return;
      case 'begin':
        // Open before BEGIN runs: the transaction's statements (already sent) wait for its end
        // even when BEGIN fails, and then fail too.
        this.openTx = r.tx;
        try {
          await this.pg.exec('BEGIN');
        } catch (err) {
          this.failedTx = r.tx;
          throw err;
        }
        this.send({ id: r.id, ok: true });
        return;
      case 'end':
        this.openTx = undefined;
        if (this.failedTx === r.tx) {
          this.failedTx = undefined;
          if (r.commit) throw new Error('the transaction could not begin');
        } else {
          await this.pg.exec(r.commit ? 'COMMIT' : 'ROLLBACK');
        }
        this.send({ id: r.id, ok: true });
        return;
      case 'listen': {
        if (!this.listeners.has(r.channel)) {
          const channel = r.channel;
          this.listeners.set(channel, await this.pg.listen(channel, () => this.send({ notify: channel })));
        }
        this.send({ id: r.id, ok: true });
        return;
      }
      case 'unlisten': {
        const stop = this.listeners.get(r.channel);
        this.listeners.delete(r.channel);
        await stop?.();
        this.send({ id: r.id, ok: true });
        return;
      }
      case 'dump': {
        const blob = await this.pg.dumpDataDir('none');
        const data = await blob.arrayBuffer();
        this.send({ id: r.id, ok: true, data }, [data]);
        return;
      }
      case 'close':
        if (this.openTx !== undefined) await this.pg.exec('ROLLBACK').catch(() => undefined);
        await this.pg.close();
        this.send({ id: r.id, ok: true });
        return;
    }
  }

  private async runQuery(sql: string, params: readonly unknown[]): Promise<{ rows: unknown[]; rowCount: number }> {
    // (Our parsers are PGlite's own, set at creation: parsers passed per query are merged into a
    // copy of its table of a few hundred types on every call, which took a quarter of this
    // thread's time for small statements.)
    const result = await this.pg.query<Record<string, unknown>>(sql, params as unknown[]);
    return { rows: result.rows, rowCount: rowCountOf(result) };
  }

  /**
   * A hot statement as a named prepared statement, as pg does on PostgreSQL: parsed and planned
   * once, then each run is one bind-and-execute round into PostgreSQL (PGlite's `query` parses,
   * describes, binds, describes and executes in five rounds every time).
   */
  private async runPrepared(sql: string, params: readonly unknown[]): Promise<{ rows: unknown[]; rowCount: number }> {
    const { serialize } = protocol;
    let statement = this.prepared.get(sql);
    if (!statement) {
      const name = `dialer_${this.prepared.size + 1}`;
      const described = await this.pg.execProtocolStream(
        concat([serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync()]),
        { syncToFs: false },
      );
      statement = { name, paramTypes: parse.parseDescribeStatementResults(described) };
      this.prepared.set(sql, statement);
    }
    const { paramTypes } = statement;
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const serializer = this.pg.serializers[paramTypes[i] ?? 0];
      return serializer ? serializer(value) : String(value);
    });
    const messages = await this.pg.execProtocolStream(
      concat([
        serialize.bind({ statement: statement.name, values }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
        serialize.sync(),
      ]),
    );
    const result = parse.parseResults(messages, this.pg.parsers)[0] ?? { rows: [], fields: [] };
    return { rows: result.rows, rowCount: rowCountOf(result) };
  }
}

/**
 * How much lower this thread's CPU priority is than the main thread's (a nice value, Linux only).
 * When the machine is busy, the main thread, which paces every live call's audio, gets the CPU
 * first, and bulk database work (an import, an analytics query) waits; when it is not, the
 * database has the CPU it wants, as before.
 */
const THREAD_NICENESS = 10;

/** Lowers this thread's priority, where the platform lets a thread have its own (Linux: per-thread nice values). */
function yieldToCalls(): void {
  try {
    const tid = Number(/task\/(\d+)$/.exec(fs.readlinkSync('/proc/thread-self'))?.[1]);
    if (tid > 0) os.setPriority(tid, Math.min(19, os.getPriority(tid) + THREAD_NICENESS));
  } catch {
    // No /proc (macOS, Windows) or not allowed: the thread keeps the process's priority.
  }
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('pglite-thread.ts runs as a worker thread');
  yieldToCalls();
  const options = workerData as ThreadOptions;
  let pg: PGlite;
  try {
    pg = await PGlite.create({
      parsers,
      // pgvector, for the knowledge base's embeddings (docs/knowledge.md).
      extensions: { vector },
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.loadDataDir ? { loadDataDir: new Blob([options.loadDataDir]) } : {}),
    });
    // A new WAL segment (16 MB) is not filled with zeros when it is created: that write held the
    // thread 20 to 35 ms each time the WAL moved on to the next file, and every statement waited.
    // See docs/database.md, "Durability of the embedded database".
    await pg.exec('SET wal_init_zero = off');
  } catch (err) {
    port.postMessage({ startError: toThreadError(err) } satisfies ThreadReply);
    return;
  }
  const thread = new DatabaseThread(pg, (reply, transfer) => port.postMessage(reply, transfer));
  port.on('message', (request: ThreadRequest) => thread.receive(request));
  port.postMessage({ ready: true } satisfies ThreadReply);
}

await main();
