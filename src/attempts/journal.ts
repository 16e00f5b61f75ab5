/**
 * The journal of attempt ends not yet written: a call that ended while the database could not be
 * reached keeps its end (outcome, transcript and metaData, recording reference, the retry policy it
 * is judged by) here, on the local disk, until the finish commits, so that neither the outage nor
 * the process's death loses it.
 *
 * One append-only file per runner (a scheduler, a process's WebRTC sessions, its inbound calls):
 * `<dir>/ends-<pid>-<random>.jsonl`, one end per line, flushed to the disk (fsync) before the end
 * is written again. The file is removed once every end it kept is written. A file whose process is
 * gone (an orphan) is read by the next recovery on the machine (any worker sharing the directory),
 * which writes its ends in the same transaction as it recovers expired leases, and then removes it.
 * Lines of ends written meanwhile are harmless: writing an end twice changes nothing (see
 * `FinishItem.late`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { Batcher } from '../lib/batcher.js';
import type { FinishItem } from '../lifecycle/index.js';

const FILE = /^ends-(\d+)-[0-9a-f]+\.jsonl$/;
/** This process's own journal files (another process may reuse a dead one's pid). */
const own = new Set<string>();

const keyOf = (item: FinishItem) => `${item.leadId}:${item.attempt}`;

export class EndJournal {
  readonly file: string;
  private readonly kept = new Map<string, FinishItem>();
  private handle: FileHandle | undefined;
  /** File operations, one at a time (appends, the file's removal). */
  private chain: Promise<unknown> = Promise.resolve();
  /** Ends kept in the same turn are appended and flushed together (one fsync). */
  private readonly appender: Batcher<FinishItem, void>;

  constructor(readonly dir: string) {
    const name = `ends-${process.pid}-${randomBytes(4).toString('hex')}.jsonl`;
    this.file = path.join(dir, name);
    own.add(name);
    this.appender = new Batcher((items) => this.serially(() => this.append(items)), { sameTurn: true });
  }

  /** Keeps an end on the disk; resolves once it is flushed there. */
  keep(item: FinishItem): Promise<void> {
    this.kept.set(keyOf(item), item);
    return this.appender.submit(item);
  }

  /** Its end is written: once no end is kept, the file goes. */
  drop(item: FinishItem): Promise<void> {
    this.kept.delete(keyOf(item));
    return this.serially(async () => {
      if (this.kept.size > 0 || !this.handle) return;
      await this.handle.close();
      this.handle = undefined;
      await fs.promises.rm(this.file, { force: true });
    });
  }

  private serially<T>(op: () => Promise<T>): Promise<T> {
    const next = this.chain.then(op);
    this.chain = next.catch(() => {});
    return next;
  }

  private async append(items: FinishItem[]): Promise<void[]> {
    if (!this.handle) {
      await fs.promises.mkdir(this.dir, { recursive: true });
      this.handle = await fs.promises.open(this.file, 'a', 0o600);
      // The new file's name must survive a crash too.
      const dir = await fs.promises.open(this.dir, 'r');
      await dir.sync().finally(() => dir.close());
    }
    await this.handle.appendFile(items.map((item) => `${JSON.stringify(item)}\n`).join(''));
    await this.handle.datasync();
    return items.map(() => undefined);
  }
}

/** The journals of runners whose process is gone, in `dir`: their files and the ends they kept. */
export async function readOrphans(dir: string): Promise<{ files: string[]; ends: FinishItem[] }> {
  const names = await fs.promises.readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  const files: string[] = [];
  const ends = new Map<string, FinishItem>();
  for (const name of names) {
    const match = FILE.exec(name);
    if (!match || own.has(name) || isAlive(Number(match[1]))) continue;
    const file = path.join(dir, name);
    files.push(file);
    const text = await fs.promises.readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      // (A line cut short by the crash was never flushed: its end was never written again either.)
      const item = parse(line);
      if (item) ends.set(keyOf(item), item);
    }
  }
  return { files, ends: [...ends.values()] };
}

/** Removes orphan journals whose ends are written. */
export async function forgetOrphans(files: readonly string[]): Promise<void> {
  await Promise.all(files.map((file) => fs.promises.rm(file, { force: true })));
}

/** Sets aside orphan journals whose ends cannot be written (kept for an operator, never read again). */
export async function setAsideOrphans(files: readonly string[]): Promise<void> {
  await Promise.all(files.map((file) => fs.promises.rename(file, `${file}.failed`).catch(() => {})));
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parse(line: string): FinishItem | undefined {
  if (!line.trim()) return undefined;
  try {
    const item = JSON.parse(line) as FinishItem;
    return typeof item.leadId === 'string' && typeof item.attempt === 'number' && item.result?.end ? item : undefined;
  } catch {
    return undefined;
  }
}
