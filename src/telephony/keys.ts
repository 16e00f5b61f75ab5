/**
 * Keys pressed on Dialer's side of a live call (an extension right after the answer, or the agent
 * working through a phone menu), by the provider's own way when it has one (Twilio: new call
 * instructions with `<Play digits>`, Plivo: its DTMF API), else as in-band tones on the media stream.
 * Each send is recorded for the lead's `metaData.dtmf_sent`.
 */
import type { Context } from '@opentelemetry/api';
import { dtmfTones, DTMF_SEQUENCE } from '../lib/tones.js';
import type { CallIO } from '../voice/index.js';
import type { ProviderKit } from './provider.js';

/** How long a provider that replaces the media stream to play keys may take to open the next one. */
const RECONNECT_TIMEOUT_MS = 15_000;

export interface KeysSent {
  digits: string;
  /** `dial`: the lead's dial_digits after the answer; `agent`: the agent's send_dtmf. */
  by: 'dial' | 'agent';
  /** `provider`: the provider played them; `inband`: Dialer played their tones on the stream. */
  via: 'provider' | 'inband';
  at: string;
  error?: string;
}

/** What KeySender needs of the call session. */
export interface KeySession {
  readonly kit: ProviderKit;
  readonly liveCallId: string | undefined;
  /** The call's trace: the provider's request is traced under it. */
  readonly context: { readonly traceContext?: Context | undefined };
  readonly urls: { stream: string };
  awaitReplacement(replace: () => Promise<void>, timeoutMs: number): Promise<boolean>;
}

export class KeySender {
  private readonly sent: KeysSent[] = [];
  /** Sends run one after another, in the order asked. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly session: KeySession) {}

  /** Plays `digits` (0-9, *, #, w) to the callee; resolves once they have been played. Throws when they could not be. */
  send(io: CallIO, digits: string, by: KeysSent['by']): Promise<void> {
    const run = this.queue.then(() => this.sendNow(io, digits, by));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async sendNow(io: CallIO, digits: string, by: KeysSent['by']): Promise<void> {
    const { kit, liveCallId } = this.session;
    const entry: KeysSent = { digits, by, via: kit.keys.live === 'inband' ? 'inband' : 'provider', at: new Date().toISOString() };
    this.sent.push(entry);
    try {
      if (!DTMF_SEQUENCE.test(digits)) throw new Error(`${JSON.stringify(digits)} is not a key sequence (0-9, *, #, w)`);
      if (io.signal.aborted) throw new Error('the call is over');
      if (kit.keys.live !== 'inband' && kit.sendDigits && liveCallId) {
        const play = () => kit.sendDigits!(liveCallId, digits, this.session.urls.stream, this.session.context.traceContext);
        if (kit.keys.live === 'api') return await play();
        if (!(await this.session.awaitReplacement(play, RECONNECT_TIMEOUT_MS))) throw new Error(`${kit.label} played the keys but the media stream did not come back`);
        return;
      }
      const result = await io.play(dtmfTones(digits, { sampleRateHz: io.sampleRateHz }));
      if (result !== 'played') throw new Error(`the keys' tones were ${result === 'cleared' ? 'cut off' : 'not played: the call ended'}`);
    } catch (err) {
      entry.error = (err as Error).message;
      throw err;
    }
  }

  /** The keys sent, for the call's metaData (nothing when none were). */
  record(): { dtmf_sent?: KeysSent[] } {
    return this.sent.length ? { dtmf_sent: this.sent } : {};
  }
}
