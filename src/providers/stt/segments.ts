/**
 * A speech-to-text that transcribes each VAD segment once it ends (OpenAI-compatible
 * transcription, Google's `speech:recognize`): the segment's audio is kept (silence before the
 * speech stays out, all but a short lead-in, since transcription is billed by audio length and the
 * pipeline streams the line continuously), and when the segment ends it is handed to `transcribe`,
 * one segment after another; its words come as one final, then `utterance_end`.
 */
import { rms } from '../../lib/audio.js';
import { PcmBlocks, PcmRing } from '../../lib/pcm-buffers.js';
import type { SttEvent, SttStream } from '../../voice/services.js';
import { EventQueue } from '../queue.js';

/** Kept before the first loud audio of a segment. */
const LEAD_IN_SECONDS = 0.3;
/** Below this level (RMS) audio before a segment's speech counts as silence. */
const LEAD_IN_LEVEL = 150;

/** `transcribe`: the segment's words (empty when none) and the language it heard them in, if it says; or a thrown ServiceError, which ends the stream. */
export function segmentStream(rateHz: number, transcribe: (audio: Int16Array) => Promise<{ text: string; confidence?: number; language?: string } | undefined>): SttStream {
  const queue = new EventQueue<SttEvent>();
  // Copied out of the frames (see lib/pcm-buffers): at most the last 30 s, a segment longer than that is not one turn.
  const segment = new PcmBlocks(rateHz, rateHz * 30);
  const leadIn = new PcmRing(rateHz * LEAD_IN_SECONDS);
  let work: Promise<void> = Promise.resolve();
  const run = async (audio: Int16Array) => {
    const words = await transcribe(audio);
    if (words === undefined) return; // given up (the call ended)
    if (words.text) queue.put({ type: 'final', text: words.text, ...(words.confidence !== undefined ? { confidence: words.confidence } : {}), ...(words.language ? { language: words.language } : {}) });
    queue.put({ type: 'utterance_end' });
  };
  return {
    write(pcm) {
      if (segment.length === 0 && rms(pcm) < LEAD_IN_LEVEL) {
        leadIn.append(pcm);
        return;
      }
      if (segment.length === 0 && leadIn.length > 0) {
        segment.append(leadIn.last());
        leadIn.clear();
      }
      segment.append(pcm);
    },
    endSegment() {
      const audio = segment.take();
      segment.clear();
      if (audio.length < rateHz / 10) return; // under 100 ms: nothing to transcribe
      work = work.then(() => run(audio)).catch((err: unknown) => queue.end(err));
    },
    events: queue,
    async close() {
      await work.catch(() => undefined);
      queue.end();
    },
  };
}
