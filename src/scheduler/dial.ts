/**
 * What the scheduler hands a telephony driver for a claimed lead and what it reads back: the
 * call's options from its configuration, a dial that always yields an outcome, and the attempt's
 * figures for /metrics.
 */
import { attemptsEnded, providerErrors, turnLatency, turnOverhead } from '../metrics/index.js';
import { leadZone } from '../lib/windows.js';
import type { CallResult, DialRequest, Driver } from '../telephony/index.js';
import type { Claimed } from './claim-rules.js';

type Disclosure = NonNullable<Claimed['configuration']['disclosure']>;

/**
 * The disclosure in the call's language: the lead's payload.language (es-MX: the text for es-MX,
 * else for es), else the configuration's default text.
 */
export function disclosureFor(disclosure: Disclosure, payload: Record<string, unknown>): NonNullable<DialRequest['disclosure']> {
  const wanted = typeof payload.language === 'string' ? payload.language.trim().toLowerCase().replace('_', '-') : '';
  const byLanguage = new Map(Object.entries(disclosure.languages ?? {}).map(([code, text]) => [code.toLowerCase().replace('_', '-'), { code, text }]));
  const found = wanted ? (byLanguage.get(wanted) ?? byLanguage.get(wanted.split('-')[0]!)) : undefined;
  return found ? { text: found.text, language: found.code } : { text: disclosure.text };
}

/** What the configuration says about the call's edges: its disclosure, a machine that answers, an opt-out, the lead's zone. */
export function callOptions(configuration: Claimed['configuration'], payload: Record<string, unknown>): Pick<DialRequest, 'voicemail' | 'optOut' | 'timeZone' | 'disclosure'> {
  return {
    voicemail: { action: configuration.voicemail_action, ...(configuration.voicemail_message ? { message: configuration.voicemail_message } : {}) },
    optOut: configuration.opt_out_enabled,
    timeZone: leadZone(payload, configuration.call_timezone, configuration.window_timezone),
    ...(configuration.disclosure ? { disclosure: disclosureFor(configuration.disclosure, payload) } : {}),
  };
}

/** A driver that throws (it should not) still yields an attempt outcome. */
export async function dialSafely(driver: Driver, request: DialRequest): Promise<CallResult> {
  try {
    return await driver.dial(request);
  } catch (err) {
    return { end: { kind: 'error', error: `the ${driver.label} driver failed: ${(err as Error).message}` } };
  }
}

/** The attempt's outcome, turn latencies and telephony errors, for /metrics. */
export function countAttempt(provider: string, result: CallResult): void {
  const { end } = result;
  attemptsEnded.inc({ provider, kind: end.kind });
  if (end.kind === 'error') providerErrors.inc({ service: 'telephony', provider, retryable: 'true' });
  if (end.kind !== 'completed') return;
  const seconds = (key: string) => {
    const values = end.metaData?.[key];
    return Array.isArray(values) ? values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v)).map((v) => v / 1000) : [];
  };
  for (const v of seconds('turn_latency_ms')) turnLatency.observe(v);
  for (const v of seconds('turn_overhead_ms')) turnOverhead.observe(v);
}
