/**
 * What the scheduler hands a telephony driver for a claimed lead and what it reads back: the
 * call's options from its configuration, a dial that always yields an outcome, and the attempt's
 * figures for /metrics.
 */
import { attemptsEnded, providerErrors, turnLatency, turnOverhead } from '../metrics/index.js';
import { leadZone } from '../lib/windows.js';
import type { CallResult, DialRequest, Driver } from '../telephony/index.js';
import type { Claimed } from './claim-rules.js';

/** What the configuration says about the call's edges: a machine that answers, an opt-out, the lead's zone. */
export function callOptions(configuration: Claimed['configuration'], payload: Record<string, unknown>): Pick<DialRequest, 'voicemail' | 'optOut' | 'timeZone'> {
  return {
    voicemail: { action: configuration.voicemail_action, ...(configuration.voicemail_message ? { message: configuration.voicemail_message } : {}) },
    optOut: configuration.opt_out_enabled,
    timeZone: leadZone(payload, configuration.call_timezone, configuration.window_timezone),
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
