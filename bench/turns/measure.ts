/**
 * What `npm run bench:turns` measures, from what the callee heard: the emulator's timeline of the
 * caller's sounds (when each clip began and ended on the line) and the spans in which the agent's
 * voice was heard (its audio above speech level, in 20 ms frames). Nothing is taken from Dialer's
 * own record.
 *
 * - false end (turn behaviours): the agent's voice was heard while the caller was mid-utterance,
 *   i.e. between the start of its first clip and the end of its last one.
 * - reply latency (turn behaviours without a false end): from the end of the caller's last clip to
 *   the first agent voice after it.
 * - false barge-in (backchannels and noises over the agent): the agent's reply stopped: no agent
 *   voice in the 600 ms after the sound ended. A pause that resumes within that time is not a stop;
 *   600 ms is also less than the services need for any new reply (STT 150 + LLM 350 + TTS 120), so
 *   a new reply after a stop cannot pass for a resumed one.
 * - missed barge-in (interruptions): the agent's voice was still heard 500 ms after the
 *   interruption began (or later while the caller was still speaking, up to 300 ms after it).
 * A barge-in behaviour counts only if the agent was heard speaking when it began.
 */
import type { Behaviour } from './corpus.js';

/** A behaviour as measured: its kind and how many clips it plays. */
export type Played = Pick<Behaviour, 'id' | 'kind'> & { clips: number };

export interface Heard {
  /** Caller clips on the line, by label `${behaviour}#${part}`, ms since the stream started. */
  timeline: Array<{ label: string; fromMs: number; toMs?: number }>;
  /** The agent's voice as the callee heard it, ms since the stream started. */
  voiced: Array<{ fromMs: number; toMs: number }>;
}

export interface Outcome {
  id: string;
  kind: Behaviour['kind'];
  /** Whether the behaviour happened as scripted (a barge-in landed on agent speech; a turn was played out). */
  valid: boolean;
  falseEnd?: boolean;
  latencyMs?: number;
  /** The caller's first turn in the call (after the greeting). */
  firstTurn?: boolean;
  stopped?: boolean;
  missed?: boolean;
  /** Interruptions: from the start of the caller's sound to the last agent voice heard after it. */
  stopAfterMs?: number;
}

const overlaps = (s: { fromMs: number; toMs: number }, from: number, to: number) => s.fromMs < to && s.toMs > from;

/** The outcomes of one call's behaviours, in the order they were played. */
export function measureCall(behaviours: Played[], heard: Heard): Outcome[] {
  const out: Outcome[] = [];
  let turns = 0;
  for (const b of behaviours) {
    const clips = heard.timeline.filter((t) => t.label.startsWith(`${b.id}#`));
    if (clips.length < b.clips || clips.some((c) => c.toMs === undefined || Number.isNaN(c.fromMs))) {
      out.push({ id: b.id, kind: b.kind, valid: false });
      continue;
    }
    const from = clips[0]!.fromMs;
    const to = clips[clips.length - 1]!.toMs!;
    if (b.kind === 'pause' || b.kind === 'complete' || b.kind === 'continued') {
      const falseEnd = heard.voiced.some((s) => overlaps(s, from + 20, to));
      const next = heard.voiced.find((s) => s.fromMs >= to);
      out.push({
        id: b.id,
        kind: b.kind,
        valid: true,
        falseEnd,
        firstTurn: turns++ === 0,
        ...(!falseEnd && next ? { latencyMs: next.fromMs - to } : {}),
      });
      continue;
    }
    // Speaking: its voice was heard up to (at most 300 ms before) the start of the sound; voiced
    // frames of speech have gaps (quiet consonants, pauses between words).
    const speaking = heard.voiced.some((s) => s.fromMs <= from && s.toMs >= from - 300);
    if (!speaking) {
      out.push({ id: b.id, kind: b.kind, valid: false });
      continue;
    }
    if (b.kind === 'interruption') {
      const missed = heard.voiced.some((s) => overlaps(s, from + 500, Math.max(from + 520, to + 300)));
      const lastVoice = heard.voiced.filter((s) => s.fromMs < to + 300 && s.toMs > from).reduce((m, s) => Math.max(m, s.toMs), from);
      out.push({ id: b.id, kind: b.kind, valid: true, missed, stopAfterMs: lastVoice - from });
    } else {
      const stopped = !heard.voiced.some((s) => overlaps(s, to, to + 600));
      out.push({ id: b.id, kind: b.kind, valid: true, stopped });
    }
  }
  return out;
}

export function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export interface Summary {
  falseEnd: { n: number; of: number };
  falseBargeIn: { n: number; of: number };
  missedBargeIn: { n: number; of: number };
  invalid: number;
  latencies: number[];
  firstTurnLatencies: number[];
  laterTurnLatencies: number[];
  stopAfterMs: number[];
}

export function summarise(outcomes: Outcome[]): Summary {
  const valid = outcomes.filter((o) => o.valid);
  const turns = valid.filter((o) => o.falseEnd !== undefined);
  const quiet = valid.filter((o) => o.stopped !== undefined);
  const cuts = valid.filter((o) => o.missed !== undefined);
  const lat = (list: Outcome[]) => list.flatMap((o) => (o.latencyMs !== undefined ? [o.latencyMs] : []));
  return {
    falseEnd: { n: turns.filter((o) => o.falseEnd).length, of: turns.length },
    falseBargeIn: { n: quiet.filter((o) => o.stopped).length, of: quiet.length },
    missedBargeIn: { n: cuts.filter((o) => o.missed).length, of: cuts.length },
    invalid: outcomes.length - valid.length,
    latencies: lat(turns),
    firstTurnLatencies: lat(turns.filter((o) => o.firstTurn)),
    laterTurnLatencies: lat(turns.filter((o) => !o.firstTurn)),
    stopAfterMs: cuts.map((o) => o.stopAfterMs!),
  };
}
