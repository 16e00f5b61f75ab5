/** What one conversation measures about itself: turn latencies and interruptions (for trace_scores). */
export class ConversationMetrics {
  /** When the caller stopped speaking, by the agent turn that answers it. */
  private readonly turnStarts = new Map<number, number>();
  readonly turnLatenciesMs: number[] = [];
  /** Latency minus the AI services' time: what the engine itself added. */
  readonly turnOverheadsMs: number[] = [];
  /** Time the AI services spent per turn (first LLM token + first TTS audio), subtracted for the engine's own overhead. */
  readonly serviceMs = new Map<number, number>();
  interruptions = 0;
  /** 20 ms frames of agent audio handed to the transport, and of those, how many came late (see TtsProcessor). */
  outputFrames = 0;
  outputFramesLate = 0;

  /** `onLatency` hears each turn's latency and engine overhead as it is measured (the turn's span). */
  constructor(private readonly onLatency?: (turn: number, latencyMs: number, overheadMs: number) => void) {}

  turnStarted(turn: number, speechEndedAt: number): void {
    this.turnStarts.set(turn, speechEndedAt);
  }

  /** Agent audio of `frames` 20 ms frames went to the transport; `late`: after the caller's playout had run dry. */
  output(frames: number, late: boolean): void {
    this.outputFrames += frames;
    if (late) this.outputFramesLate += frames;
  }

  /** The first audio of `turn` went to the transport. */
  firstAudio(turn: number, at: number): void {
    const start = this.turnStarts.get(turn);
    if (start === undefined) return;
    this.turnStarts.delete(turn);
    const overhead = Math.max(0, at - start - (this.serviceMs.get(turn) ?? 0));
    this.turnLatenciesMs.push(at - start);
    this.turnOverheadsMs.push(overhead);
    this.onLatency?.(turn, at - start, overhead);
  }

  /** A speculative turn was cancelled before it was heard: it has no latency. */
  dropTurn(turn: number): void {
    this.turnStarts.delete(turn);
    this.serviceMs.delete(turn);
  }

  addServiceTime(turn: number, ms: number): void {
    this.serviceMs.set(turn, (this.serviceMs.get(turn) ?? 0) + ms);
  }
}

export function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}
