/**
 * The corpus of `npm run bench:turns`: scripted caller behaviours, made into 8 kHz audio by code in
 * this repository, the same on every run (fixed texts, fixed pauses, seeded noise).
 *
 * Terminology
 * - clip: one stretch of the caller's sound (a line of speech or a noise), trimmed to where the
 *   sound starts and ends, with the time each word ends (for the local speech-to-text's interim
 *   results);
 * - turn behaviour: the caller takes a turn while the agent is quiet (clips with pauses between);
 * - barge-in behaviour: the caller makes a sound while the agent speaks (a backchannel, an
 *   interruption, a noise).
 *
 * Speech comes from one function, `speak` in test/helpers/clips.ts (the repository's synthesiser), so
 * the corpus follows the voice the repository uses; noises are generated numerically from a seed.
 */
import { prng } from '../../src/lib/random.js';
import { RATE_HZ, speechClip, type Clip } from '../../test/helpers/clips.js';

export type { Clip } from '../../test/helpers/clips.js';

export type BehaviourKind = 'pause' | 'complete' | 'continued' | 'backchannel' | 'interruption' | 'noise';
export const TURN_KINDS: readonly BehaviourKind[] = ['pause', 'complete', 'continued'];

export interface Behaviour {
  id: string;
  kind: BehaviourKind;
  /** What the caller does, in order: clips, and silences between them. */
  parts: Array<{ clip: Clip } | { pauseMs: number }>;
  /** Barge-in behaviours: the sound starts once the agent has been heard speaking this long. */
  afterAgentMs?: number;
}

// ---------------------------------------------------------------------------------------------
// Noises, from a seed

function envelope(pcm: Float32Array, attackMs: number, releaseMs: number): void {
  const a = (attackMs * RATE_HZ) / 1000;
  const r = (releaseMs * RATE_HZ) / 1000;
  for (let i = 0; i < pcm.length; i++) pcm[i]! *= Math.min(1, i / a, (pcm.length - i) / r);
}

function toPcm(f: Float32Array, peak: number): Int16Array {
  let max = 1e-9;
  for (const v of f) max = Math.max(max, Math.abs(v));
  const out = new Int16Array(f.length);
  for (let i = 0; i < f.length; i++) out[i] = Math.round((f[i]! / max) * peak);
  // Never a silent first or last sample (the line's silence is exact zeros).
  out[0] ||= 64;
  out[out.length - 1] ||= 64;
  return out;
}

/** White noise, or low-passed ("pink-ish") with `smooth` in (0, 1). */
function noise(random: () => number, ms: number, smooth = 0): Float32Array {
  const out = new Float32Array((ms * RATE_HZ) / 1000);
  let last = 0;
  for (let i = 0; i < out.length; i++) {
    const white = random() * 2 - 1;
    last = smooth * last + (1 - smooth) * white;
    out[i] = last;
  }
  return out;
}

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}

/** A cough: a sharp burst of breathy noise with a low voiced buzz under it, then a softer tail. */
function cough(random: () => number): Float32Array {
  const burst = noise(random, 140, 0.55);
  for (let i = 0; i < burst.length; i++) burst[i]! += 0.6 * Math.sign(Math.sin((2 * Math.PI * 160 * i) / RATE_HZ)) * (random() * 0.5 + 0.5);
  envelope(burst, 8, 110);
  const tail = noise(random, 220, 0.7);
  envelope(tail, 20, 180);
  for (let i = 0; i < tail.length; i++) tail[i]! *= 0.35;
  return concat([burst, tail]);
}

function noiseClip(id: string, f: Float32Array, peak: number): Clip {
  const pcm = toPcm(f, peak);
  return { id, text: '', pcm, words: [], durationMs: (pcm.length * 1000) / RATE_HZ };
}

/** The noises of the corpus, from `seed`. */
export function noises(seed: number): Clip[] {
  const random = prng(seed);
  const silence = (ms: number) => new Float32Array((ms * RATE_HZ) / 1000);
  const burst = noise(random, 300);
  envelope(burst, 5, 40);
  const rumble = noise(random, 800, 0.9);
  envelope(rumble, 80, 200);
  const knock = concat([0, 1, 2].flatMap(() => {
    const k = noise(random, 40, 0.3);
    for (let i = 0; i < k.length; i++) k[i]! *= Math.exp(-i / 40);
    return [k, silence(140)];
  }));
  const breath = noise(random, 600, 0.2);
  envelope(breath, 150, 250);
  const tone = new Float32Array((700 * RATE_HZ) / 1000);
  for (let i = 0; i < tone.length; i++) tone[i] = Math.sin((2 * Math.PI * 440 * i) / RATE_HZ) + 0.5 * Math.sin((2 * Math.PI * 880 * i) / RATE_HZ);
  envelope(tone, 10, 10);
  return [
    noiseClip('noise-burst', burst, 6000),
    noiseClip('noise-rumble', rumble, 4000),
    noiseClip('noise-knock', knock, 9000),
    noiseClip('noise-breath', breath, 2500),
    noiseClip('noise-cough', cough(random), 9000),
    noiseClip('noise-double-cough', concat([cough(random), silence(180), cough(random)]), 9000),
    noiseClip('noise-tone', tone, 3000),
  ];
}

// ---------------------------------------------------------------------------------------------
// The scripts

/** Pauses inside one utterance (must not end the turn). */
const PAUSES: Array<[string, number, string]> = [
  ["I'd like to", 600, 'move it to Thursday.'],
  ['My number is', 700, 'five five five, one two three four.'],
  ['Can you send it to', 500, 'my office address?'],
  ['I think', 800, 'Thursday would be better.'],
  ['The best time for me is', 900, 'after five in the evening.'],
  ['I was wondering if', 450, 'you could call me back tomorrow.'],
  ['Um', 600, 'let me check my calendar first.'],
  ['Yes, and', 700, 'please add my wife to the booking.'],
  ["It's the order with the", 550, 'blue chair.'],
  ['Because', 350, 'I will not be at home on Monday.'],
  ['We would rather have it on', 850, 'the twelfth.'],
  ['So', 650, 'what happens if I miss the delivery?'],
];

/** Complete answers (should get a reply fast). */
const COMPLETE = [
  'Yes, please confirm it.',
  'No, thank you.',
  'Yes.',
  "That's right.",
  'Thursday works for me.',
  'Sure, go ahead.',
  "No, that's not my address.",
  'Can you send it again?',
  'My name is Ana Silva.',
  'I already paid for it.',
  'Please call me tomorrow morning.',
  'That sounds good, thank you.',
];

/** A complete sentence, then more after a pause: the hard case. */
const CONTINUED: Array<[string, number, string]> = [
  ['Yes.', 400, 'And change the address too.'],
  ['No.', 600, 'I want to cancel the whole order.'],
  ["That's fine.", 500, 'But please deliver it after six.'],
  ['Okay.', 700, 'Can you also send me a receipt?'],
  ['Thursday works.', 800, 'Actually, make it Friday.'],
  ['Yes, please.', 450, 'And send the invoice to my office.'],
  ['I paid already.', 900, 'Last week, by card.'],
  ['Sounds good.', 650, 'What time will the driver come?'],
];

/** Backchannels while the agent speaks (must not stop it). */
const BACKCHANNELS = ['Mm-hmm.', 'Yeah.', 'Okay.', 'Right.', 'Uh-huh.', 'I see.', 'Sure.', 'Got it.', 'Okay, okay.', 'Yes.'];

/** Real interruptions (must stop it within 300 ms, and certainly before 500 ms). */
const INTERRUPTIONS = [
  "No, wait, that's wrong.",
  'Stop, I already paid.',
  'Sorry, can I ask something?',
  "Hold on, that's not my order.",
  'Wait, what was the date again?',
  'Excuse me, I need to go now.',
  'Actually, I want to cancel.',
  "That's not what I said.",
  "No no, that's the wrong address.",
];

/** When a barge-in starts, ms of agent speech heard before it: spread over the reply's first seconds. */
const AFTER_AGENT_MS = [1200, 1500, 1800, 1300, 1600, 1900, 1400, 1700];

export const CORPUS_SEED = 20_261_125;

export async function buildCorpus(seed = CORPUS_SEED): Promise<Behaviour[]> {
  const behaviours: Behaviour[] = [];
  let n = 0;
  const id = (kind: string) => `${kind}-${String(++n).padStart(2, '0')}`;
  for (const [a, pauseMs, b] of PAUSES) {
    const key = id('pause');
    behaviours.push({ id: key, kind: 'pause', parts: [{ clip: await speechClip(`${key}a`, a) }, { pauseMs }, { clip: await speechClip(`${key}b`, b) }] });
  }
  for (const text of COMPLETE) {
    const key = id('complete');
    behaviours.push({ id: key, kind: 'complete', parts: [{ clip: await speechClip(key, text) }] });
  }
  for (const [a, pauseMs, b] of CONTINUED) {
    const key = id('continued');
    behaviours.push({ id: key, kind: 'continued', parts: [{ clip: await speechClip(`${key}a`, a) }, { pauseMs }, { clip: await speechClip(`${key}b`, b) }] });
  }
  let k = 0;
  const after = () => AFTER_AGENT_MS[k++ % AFTER_AGENT_MS.length]!;
  for (const text of BACKCHANNELS) {
    const key = id('backchannel');
    behaviours.push({ id: key, kind: 'backchannel', parts: [{ clip: await speechClip(key, text) }], afterAgentMs: after() });
  }
  for (const text of INTERRUPTIONS) {
    const key = id('interruption');
    behaviours.push({ id: key, kind: 'interruption', parts: [{ clip: await speechClip(key, text) }], afterAgentMs: after() });
  }
  for (const clip of noises(seed)) behaviours.push({ id: id(clip.id), kind: 'noise', parts: [{ clip }], afterAgentMs: after() });
  return behaviours;
}

export const clipsOf = (b: Behaviour): Clip[] => b.parts.flatMap((p) => ('clip' in p ? [p.clip] : []));

/**
 * The corpus split into calls: each call alternates a barge-in behaviour (over the agent's
 * greeting or its last reply) and a turn behaviour (which the agent answers), so every barge-in
 * has an agent reply to land on. Deterministic: the same calls every run.
 */
export function planCalls(behaviours: Behaviour[], calls: number): Behaviour[][] {
  const bargeIns = behaviours.filter((b) => !TURN_KINDS.includes(b.kind));
  const turns = behaviours.filter((b) => TURN_KINDS.includes(b.kind));
  // Interleave kinds so each call gets a mix.
  const spread = (list: Behaviour[]) => {
    const byKind = new Map<string, Behaviour[]>();
    for (const b of list) byKind.set(b.kind, [...(byKind.get(b.kind) ?? []), b]);
    const out: Behaviour[] = [];
    for (let i = 0; out.length < list.length; i++) for (const group of byKind.values()) if (group[i]) out.push(group[i]!);
    return out;
  };
  const b = spread(bargeIns);
  const t = spread(turns);
  const plan: Behaviour[][] = Array.from({ length: calls }, () => []);
  const pairs = Math.max(b.length, t.length);
  for (let i = 0; i < pairs; i++) {
    const call = plan[i % calls]!;
    if (b[i]) call.push(b[i]!);
    if (t[i]) call.push(t[i]!);
  }
  return plan;
}
