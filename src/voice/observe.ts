/**
 * Live events for a client that watches a conversation (the WebRTC playground): the caller's words
 * as the STT hears them, and the flow record's new lines (spoken text, nodes entered, function
 * calls) as they appear. Telephony calls have no observer and pay nothing for this.
 */
import type { CallEvent } from './agent.js';
import type { FlowRecord } from './flow/types.js';
import type { Direction, Frame } from './frames.js';
import { FrameProcessor } from './pipeline.js';

/** Passes every frame on; tells the observer about the caller's interim and final words. */
export class TranscriptTap extends FrameProcessor {
  readonly name = 'transcript-tap';

  constructor(private readonly observe: (event: CallEvent) => void) {
    super();
  }

  protected process(f: Frame, direction: Direction): void {
    if (f.kind === 'transcription' && f.text.trim()) this.observe({ type: 'transcript', role: 'user', text: f.text, final: false });
    this.push(f, direction);
  }
}

/**
 * Publishes what the flow record gained since the last look. The record is the source of truth
 * (spoken assistant text is only there once heard), so it is read, not re-derived from frames.
 */
export class RecordPublisher {
  private seen = { transcription: 0, nodes: 0, functions: 0 };
  private readonly timer: NodeJS.Timeout;

  /** `publishedLines`: the record's first lines the client was already told of (the disclosure, as it was spoken). */
  constructor(
    private readonly record: FlowRecord,
    private readonly observe: (event: CallEvent) => void,
    intervalMs = 150,
    publishedLines = 0,
  ) {
    this.seen.transcription = publishedLines;
    this.timer = setInterval(() => this.publish(), intervalMs);
    this.timer.unref?.();
  }

  publish(): void {
    const r = this.record;
    for (; this.seen.nodes < r.node_traversal.length; this.seen.nodes++) this.observe({ type: 'node', node: r.node_traversal[this.seen.nodes]! });
    for (; this.seen.transcription < r.transcription.length; this.seen.transcription++) {
      const line = r.transcription[this.seen.transcription]!;
      this.observe({ type: 'transcript', role: line.role, text: line.content, final: true, ...(line.at_ms === undefined ? {} : { at_ms: line.at_ms }) });
    }
    for (; this.seen.functions < r.function_calls.length; this.seen.functions++) {
      const call = r.function_calls[this.seen.functions]!;
      this.observe({
        type: 'function_call',
        name: call.name,
        arguments: call.arguments,
        result: call.error ? { error: call.error } : call.hooks.map((h) => ({ name: h.name, status: h.status, ok: h.ok })),
        ...(call.transition_to ? { transition_to: call.transition_to } : {}),
      });
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.publish();
  }
}
