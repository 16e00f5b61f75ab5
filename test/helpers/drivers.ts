/**
 * A telephony driver for lifecycle tests: it implements the Driver interface (the seam between
 * the scheduler and a provider) with a scripted callee, and logs every dial so that tests can
 * check who was dialled, from which number, and when. Real providers are the telephony issue's.
 */
import type { CallEnd } from '../../src/lifecycle/index.js';
import type { CallResult, DialRequest, Driver } from '../../src/telephony/index.js';

export interface DialRecord {
  leadId: string;
  attempt: number;
  from: string;
  to: string;
  callId: string;
  startedAt: number;
  endedAt?: number;
}

export type Script = (request: DialRequest) => CallEnd | Promise<CallEnd>;

export class ScriptedDriver implements Driver {
  readonly label = 'scripted test driver';
  readonly dials: DialRecord[] = [];

  constructor(
    readonly provider: string,
    private readonly script: Script = () => ({ kind: 'completed', outcome: 'confirmed', durationSeconds: 42 }),
  ) {}

  async dial(request: DialRequest): Promise<CallResult> {
    const callId = `CA-${request.leadId}-${request.attempt}`;
    const record: DialRecord = { leadId: request.leadId, attempt: request.attempt, from: request.from, to: request.to, callId, startedAt: performance.now() };
    this.dials.push(record);
    request.onCallId(callId);
    const end = await this.script(request);
    record.endedAt = performance.now();
    return { callId, end };
  }
}

/** A gate calls wait at until the test opens it. */
export function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}
