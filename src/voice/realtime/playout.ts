/**
 * The realtime agent's playout: the audio handed to the call, when all of it has been heard, and
 * how much of each of the model's items the caller heard (where a barge-in truncates it). A piece
 * counts as heard when the transport says it played; the model sends audio faster than real time,
 * so most of a reply may still be queued when the caller speaks.
 */
import type { CallIO } from '../agent.js';

/** A model item a barge-in cut: the caller heard `playedMs` of the `sentMs` sent to the call. */
export interface Cut {
  itemId: string;
  responseId: string;
  playedMs: number;
  sentMs: number;
}

/** A piece of a reply that reaches the call this long after the audio before it ran out is heard late. */
const OUTPUT_LATE_MS = 20;

export class Playout {
  /** 20 ms frames of the model's audio handed to the call, and of those, how many came late (a gap the caller heard within a reply). */
  outputFrames = 0;
  outputFramesLate = 0;
  private outstanding = 0;
  /** When the audio handed to the call so far ends playing, and the response it belonged to. */
  private playoutEndsAt = 0;
  private playingResponse: string | undefined;
  private waiters: Array<() => void> = [];
  private readonly items = new Map<string, { responseId: string; sentMs: number; playedMs: number }>();
  /** Responses cut by a barge-in: the rest of their audio is dropped. */
  private readonly cutResponses = new Set<string>();

  /** `quiet`: everything handed to the call has played (or was cleared). */
  constructor(
    private readonly io: CallIO,
    private readonly quiet: () => void,
  ) {}

  get playing(): boolean {
    return this.outstanding > 0;
  }

  /** Resolves once everything handed to the call has played (or was cleared). */
  drained(): Promise<void> {
    return this.outstanding === 0 ? Promise.resolve() : new Promise<void>((r) => this.waiters.push(r));
  }

  /** Plays a line of the flow's own; `heard` says whether it played to its end. */
  play(pcm: Int16Array, heard?: (played: boolean) => void): void {
    this.outstanding++;
    void this.io.play(pcm).then((result) => {
      this.outstanding--;
      heard?.(result === 'played');
      if (this.outstanding > 0) return;
      for (const w of this.waiters.splice(0)) w();
      this.quiet();
    });
  }

  /** Plays the model's audio of item `itemId`; false (dropped) when a barge-in cut its response. */
  model(responseId: string, itemId: string, pcm: Int16Array): boolean {
    if (this.cutResponses.has(responseId)) return false;
    let item = this.items.get(itemId);
    if (!item) this.items.set(itemId, (item = { responseId, sentMs: 0, playedMs: 0 }));
    const ms = (pcm.length * 1000) / this.io.sampleRateHz;
    // Within a response (not its first audio, which the turn latency measures), audio handed over
    // after the caller's playout ran dry is a gap they hear.
    const now = performance.now();
    this.outputFrames += Math.ceil(ms / 20);
    if (this.playingResponse === responseId && now - this.playoutEndsAt > OUTPUT_LATE_MS) this.outputFramesLate += Math.ceil(ms / 20);
    this.playingResponse = responseId;
    this.playoutEndsAt = Math.max(now, this.playoutEndsAt) + ms;
    item.sentMs += ms;
    const it = item;
    this.play(pcm, (played) => played && (it.playedMs += ms));
    return true;
  }

  /** Barge-in: clears the call's playout; returns the model's items it cut, each with what was heard. */
  interrupt(): Cut[] {
    this.io.clear();
    this.playoutEndsAt = 0;
    this.playingResponse = undefined;
    const cuts: Cut[] = [];
    for (const [itemId, item] of this.items) {
      if (item.playedMs >= item.sentMs || this.cutResponses.has(item.responseId)) continue;
      this.cutResponses.add(item.responseId);
      cuts.push({ itemId, ...item });
    }
    return cuts;
  }

  /** The call is over: nothing waits for the playout any more. */
  close(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
