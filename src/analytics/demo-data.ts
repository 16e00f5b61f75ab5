/**
 * Realistic finished leads for the demo and the benchmarks: outcomes, attempts, durations,
 * sentiments, providers and call times over a number of days, with weekday and office-hour
 * rhythms. Deterministic for a given seed (IDs aside).
 */
import { randomUUID } from 'node:crypto';
import type { ExecutionMode, FinishedLeadRow } from '../lifecycle/index.js';
import { prng } from '../lib/random.js';

export interface DemoScope {
  resellerId: string;
  /** Merchants to spread leads over; `null` for reseller-level leads. */
  merchantIds: (string | null)[];
  templates: { id: string; name: string }[];
}

export interface DemoOptions {
  count: number;
  days: number;
  /** Leads fall in the `days` whole UTC days before the day of `now`. */
  now: Date;
  seed: number;
  batchSize: number;
}

function picker<T>(random: () => number, weighted: readonly (readonly [T, number])[]): () => T {
  const total = weighted.reduce((s, [, w]) => s + w, 0);
  return () => {
    let r = random() * total;
    for (const [value, w] of weighted) if ((r -= w) < 0) return value;
    return weighted[weighted.length - 1]![0];
  };
}

/** reached: a conversation took place; unreached: dialled, nobody talked; skipped: never dialled. */
type Kind = 'reached' | 'unreached' | 'skipped';
const OUTCOMES: readonly (readonly [readonly [string, Kind, number], number])[] = [
  [['confirmed', 'reached', 0.75], 30],
  [['rescheduled', 'reached', 0.6], 10],
  [['not_interested', 'reached', 0.28], 12],
  [['callback_requested', 'reached', 0.55], 6],
  [['no_answer', 'unreached', 0], 18],
  [['busy', 'unreached', 0], 7],
  [['voicemail', 'unreached', 0], 7],
  [['failed', 'unreached', 0], 4],
  [['error', 'unreached', 0], 1],
  [['PRECHECK_FAILED', 'skipped', 0], 2],
  [['BLACKLISTED', 'skipped', 0], 1],
  [['aborted', 'skipped', 0], 2],
];
const MODES: readonly (readonly [readonly [ExecutionMode, boolean], number])[] = [
  [['TELEPHONY', false], 90],
  [['WEBRTC', false], 6],
  [['TELEPHONY_TEST', false], 2],
  [['WEBRTC_TEST', false], 1],
  [['WEBRTC', true], 1],
];
const PROVIDERS = [['PROVIDER_A', 55], ['PROVIDER_B', 30], ['PROVIDER_C', 15]] as const;
const CAMPAIGNS = [
  ['spring_promo', 30], ['renewal', 20], ['winback', 15], ['vip_upgrade', 10], ['loyalty', 8], ['reactivation', 7], ['survey', 6], ['referral', 4],
] as const;
const LANGUAGES = [['en', 70], ['es', 20], ['hi', 10]] as const;
const REGIONS = [['north', 1], ['south', 1], ['east', 1], ['west', 1]] as const;
const NAMES = ['Ana', 'Ben', 'Chen', 'Dara', 'Eli', 'Fatima', 'Gus', 'Hana', 'Ivan', 'Jo', 'Kofi', 'Lena', 'Maya', 'Nils', 'Omar', 'Priya'];
// Calls cluster in office hours (UTC), with a lull at lunch.
const HOURS = [0.01, 0.01, 0.01, 0.01, 0.01, 0.02, 0.05, 0.2, 0.5, 0.85, 1, 1, 0.7, 0.65, 0.85, 0.95, 1, 0.9, 0.7, 0.5, 0.3, 0.1, 0.03, 0.01].map(
  (w, h) => [h, w] as const,
);
const WEEKDAY_WEIGHT = [0.3, 1, 1, 1, 1, 0.95, 0.5]; // Sunday first, as getUTCDay
const DAY_MS = 86_400_000;

/** Yields the demo leads in batches, in time order. */
export function* generateDemoLeads(scope: DemoScope, options: DemoOptions): Generator<FinishedLeadRow[]> {
  const random = prng(options.seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const outcome = picker(random, OUTCOMES);
  const mode = picker(random, MODES);
  const provider = picker(random, PROVIDERS);
  const campaign = picker(random, CAMPAIGNS);
  const language = picker(random, LANGUAGES);
  const region = picker(random, REGIONS);
  const hour = picker(random, HOURS);

  const today = Math.floor(options.now.getTime() / DAY_MS) * DAY_MS;
  const first = today - options.days * DAY_MS;
  // Leads per day: weekday rhythm and a slow growth over the period; the sum is exactly `count`.
  const weights = Array.from({ length: options.days }, (_, d) => WEEKDAY_WEIGHT[new Date(first + d * DAY_MS).getUTCDay()]! * (0.8 + (0.4 * d) / options.days));
  const weightSum = weights.reduce((s, w) => s + w, 0);
  const perDay = weights.map((w) => Math.floor((options.count * w) / weightSum));
  perDay[perDay.length - 1]! += options.count - perDay.reduce((s, n) => s + n, 0);

  let batch: FinishedLeadRow[] = [];
  let seq = 0;
  for (let d = 0; d < options.days; d++) {
    const times = Array.from({ length: perDay[d]! }, () => first + d * DAY_MS + hour() * 3_600_000 + Math.floor(random() * 3_600_000)).sort((a, b) => a - b);
    for (const at of times) {
      seq++;
      const [name, kind, mood] = outcome();
      const [executionMode, isPlayground] = mode();
      const webrtc = executionMode.startsWith('WEBRTC');
      const template = scope.templates[Math.floor(random() * scope.templates.length)]!;
      const attempts = kind === 'skipped' ? 0 : kind === 'reached' ? (random() < 0.7 ? 1 : random() < 0.67 ? 2 : 3) : random() < 0.8 ? 3 : random() < 0.75 ? 2 : 1;
      const duration =
        kind === 'reached'
          ? Math.min(1200, Math.round(20 + Math.exp(4.1 + 0.6 * gauss())))
          : name === 'voicemail'
            ? 10 + Math.floor(random() * 35)
            : kind === 'unreached'
              ? 0
              : null;
      const callStart = kind === 'skipped' ? null : at;
      // Pushed before the first attempt; each retry waited about an hour.
      const createdAt = at - (attempts > 1 ? (attempts - 1) * 3_600_000 : 0) - Math.floor(random() * 6 * 3_600_000);
      batch.push({
        id: randomUUID(),
        reseller_id: scope.resellerId,
        merchant_id: scope.merchantIds[Math.floor(random() * scope.merchantIds.length)] ?? null,
        template_id: template.id,
        template_name: template.name,
        request_id: `demo-${options.seed}-${seq}`,
        outcome: name,
        attempt_count: attempts,
        call_id: callStart === null ? null : webrtc ? `room-${seq.toString(36)}` : `CA${randomUUID().replace(/-/g, '')}`,
        call_initiated_time: callStart === null ? null : new Date(callStart),
        call_end_time: callStart === null ? null : new Date(callStart + (duration ?? 0) * 1000),
        duration_seconds: duration,
        cost: duration === null || webrtc ? null : ((Math.ceil(duration / 60) || 0) * 0.014).toFixed(4),
        sentiment: kind === 'reached' ? Math.round(Math.min(1, Math.max(0, mood + 0.13 * gauss())) * 1000) / 1000 : null,
        provider: callStart === null || webrtc ? null : provider(),
        execution_mode: executionMode,
        is_playground: isPlayground,
        payload: {
          customer_mobile_number: `+1555${String(Math.floor(random() * 1e7)).padStart(7, '0')}`,
          customer_name: NAMES[Math.floor(random() * NAMES.length)],
          campaign: campaign(),
          language: language(),
          region: region(),
        },
        meta_data: kind === 'reached' ? { call_ended_by: random() < 0.7 ? 'agent' : 'customer' } : {},
        created_at: new Date(createdAt),
      });
      if (batch.length >= options.batchSize) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}
