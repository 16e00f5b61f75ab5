/**
 * The dashboard's figures of calls, derived from POST /analytics in one place, for the overview and
 * the analytics page alike (and for the tests that hold them to the API).
 *
 * Terminology (docs/dashboard.md, "What the figures count")
 * - call: a dialled attempt; a lead dialled at least once is one call, at its latest attempt. A
 *   lead never dialled is none. Every count the dashboard shows asks with `calls_only`.
 * - live call: a call in progress (its lead is PROCESSING); ended call: any other call.
 * - answered: an ended call that connected (a duration above zero, a voicemail included).
 */
import type { AnalyticsBody } from '../api/types.js';

/** What every count of the dashboard asks for: calls, not leads. */
export const CALLS = { calls_only: true } as const;

type Share = { key: string; count: number };

/** The requests behind the day's figures (since `today`, a date in `timeZone`). */
export function dayRequests(today: string, timeZone: string) {
  const body = (query_type: 'call_count' | 'status_distribution' | 'call_duration', filters: Record<string, unknown> = {}): AnalyticsBody => ({
    query_type,
    filters: { date_from: today, ...filters },
    timezone: timeZone,
    ...CALLS,
  });
  return {
    calls: body('call_count'),
    statuses: body('status_distribution'),
    // Only a call has a duration; PROCESSING ones may hold an earlier attempt's and are left out below.
    connected: body('status_distribution', { min_duration: 1 }),
    duration: body('call_duration'),
  };
}

export type DayRequests = ReturnType<typeof dayRequests>;
export type DayAnswers = { calls: { count: number }[]; statuses: Share[]; connected: Share[]; duration: { avg: number | null }[] };

export interface DayFigures {
  calls: number;
  live: number;
  ended: number;
  answered: number;
  /** answered / ended; null until a call has ended (a live call is neither answered nor not). */
  answerRate: number | null;
  avgDurationSeconds: number | null;
}

const processing = (rows: Share[]) => rows.find((r) => r.key === 'PROCESSING')?.count ?? 0;

/** The day's figures from the answers to `dayRequests`. Only a dialled lead is PROCESSING, so live calls are its count. */
export function dayFigures(a: DayAnswers): DayFigures {
  const calls = a.calls[0]?.count ?? 0;
  const live = processing(a.statuses);
  const ended = calls - live;
  const answered = a.connected.reduce((sum, r) => sum + r.count, 0) - processing(a.connected);
  return { calls, live, ended, answered, answerRate: ended > 0 ? answered / ended : null, avgDurationSeconds: a.duration[0]?.avg ?? null };
}

/** Whether a series has nothing to draw (every bucket zero): a card then says so instead of drawing zeros. */
export const nothingIn = (rows: readonly { count: number }[] | undefined): boolean => rows !== undefined && rows.every((r) => r.count === 0);
