/**
 * One call coming in from a trunk, as a user agent server (RFC 3261 13.3 and 17.2.1): 100 Trying
 * at once, 180 Ringing, then one final response. The answer (200 with Dialer's SDP) and a refusal
 * (3xx-6xx) are sent again (timer G: 500 ms doubling to 4 s) until their ACK comes, for at most
 * 32 s (timer H: an answer never acknowledged is ended with a BYE). A CANCEL before the final
 * response ends the INVITE with 487. Then the dialog: BYE from either side, re-INVITE/UPDATE
 * answered with the same SDP, a REFER of ours for a cold transfer (its NOTIFYs read), INFO and
 * OPTIONS acknowledged.
 *
 * In-dialog requests of ours go to the address the INVITE came from: the trunk, which stays on the
 * path of its calls (and is the address its admission checked), whatever Contact it names.
 */
import { randomBytes } from 'node:crypto';
import { newBranch, newTag, T1_MS, T2_MS, TIMEOUT_MS, type Destination, type SipEndpoint } from './endpoint.js';
import { addressUri, cseq, header, param, responseTo, type SipRequest, type SipResponse } from './message.js';

const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, INFO, REFER, NOTIFY';
/** Extensions Dialer supports: session refreshes are answered (re-INVITE, UPDATE); no reliable provisional responses (100rel). */
const SUPPORTED = ['timer'];

/** The user part of a SIP or tel URI (`sip:+1415…@host;user=phone` -> `+1415…`), unescaped. */
export function uriUser(uri: string): string | undefined {
  const match = /^(?:sips?:([^@;>]+)@|tel:([^;>]+))/i.exec(uri.trim());
  const user = match?.[1] ?? match?.[2];
  if (user === undefined) return undefined;
  try {
    return decodeURIComponent(user);
  } catch {
    return user;
  }
}

export class InboundCall {
  /** The Call-ID the trunk chose (kept as `sip_call_id`). */
  readonly sipCallId: string;
  // Letters, digits and dashes only: the lead's call_id, which names its recording (a trunk's Call-ID may hold any character).
  readonly callId = `dialer-${randomBytes(12).toString('hex')}`;
  /** The statuses Dialer answered the INVITE with, in order (100 left out). */
  readonly statuses: number[] = [];
  private readonly localTag = newTag();
  private cseqNumber = 0;
  private readonly inviteSeq: number;
  private remoteTarget: string;
  /** The last response to the INVITE, sent again when the INVITE comes again. */
  private last: SipResponse | undefined;
  private final = false;
  private acked = false;
  private timer: NodeJS.Timeout | undefined;
  private answerSdp = '';
  private dialogUp = false;
  private ended = false;
  /** The caller gave up before the answer (CANCEL). */
  canceled = false;
  /** Resolves with whether the final response was acknowledged (false: timer H ran out). */
  readonly acknowledged: Promise<boolean>;
  private settle!: (acked: boolean) => void;
  /** Where the dialled numbers live (REFER targets): the trunk's host, once the trunk is known. */
  domain: string;
  onCancel: (() => void) | undefined;
  onBye: (() => void) | undefined;
  onTransferProgress: ((fragment: { status: number; line: string; final: boolean }) => void) | undefined;

  constructor(
    private readonly endpoint: SipEndpoint,
    private readonly invite: SipRequest,
    /** Where the INVITE came from: responses and our requests go there. */
    readonly source: Destination,
  ) {
    this.domain = source.host;
    this.sipCallId = header(invite, 'call-id') ?? '';
    this.inviteSeq = cseq(invite).seq;
    const contact = header(invite, 'contact');
    this.remoteTarget = contact ? addressUri(contact) : addressUri(header(invite, 'from') ?? invite.uri);
    this.acknowledged = new Promise((resolve) => (this.settle = resolve));
    endpoint.onDialog(this.sipCallId, (request, from) => this.receive(request, from));
    this.endpoint.send(responseTo(invite, 100, 'Trying'), source);
  }

  /** The number dialled (the Request-URI's user, else the To header's). */
  get toUser(): string | undefined {
    return uriUser(this.invite.uri) ?? uriUser(addressUri(header(this.invite, 'to') ?? ''));
  }

  /** The caller (the From header's user). */
  get fromUser(): string | undefined {
    return uriUser(addressUri(header(this.invite, 'from') ?? ''));
  }

  /** The offer's SDP (empty when the INVITE carries none). */
  get offer(): string {
    return this.invite.body;
  }

  private get contact(): string {
    return this.endpoint.contactFor(this.toUser ?? 'dialer', this.source);
  }

  private respond(status: number, reason: string, extra: { headers?: Array<[string, string]>; body?: string } = {}): void {
    // The dialog's routes come back in the answer and its provisional responses (RFC 3261 12.1.1).
    const routes = status > 100 && status < 300 ? (this.invite.headers.get('record-route') ?? []).map((r): [string, string] => ['record-route', r]) : [];
    const response = responseTo(this.invite, status, reason, { ...(status > 100 ? { toTag: this.localTag } : {}), ...extra, headers: [...routes, ...(extra.headers ?? [])] });
    if (status > 100) this.statuses.push(status);
    this.last = response;
    this.endpoint.send(response, this.source);
  }

  ringing(): void {
    if (!this.final) this.respond(180, 'Ringing', { headers: [['contact', this.contact]] });
  }

  /** Option tags the INVITE requires that Dialer does not support (RFC 3261 8.2.2.3: answered 420). */
  get unsupported(): string[] {
    const required = (this.invite.headers.get('require') ?? []).map((t) => t.trim().toLowerCase()).filter(Boolean);
    return required.filter((tag) => !SUPPORTED.includes(tag));
  }

  /** Answers with `sdp`; resolves with whether the ACK came. */
  answer(sdp: string): Promise<boolean> {
    if (this.final) return Promise.resolve(false);
    this.answerSdp = sdp;
    this.dialogUp = true;
    this.finalResponse(200, 'OK', {
      headers: [['contact', this.contact], ['allow', ALLOW], ['supported', 'timer'], ['content-type', 'application/sdp']],
      body: sdp,
    });
    return this.acknowledged;
  }

  /** Refuses the call (3xx-6xx; a 302's Contact among `headers`). */
  refuse(status: number, reason: string, headers: Array<[string, string]> = []): void {
    if (this.final) return;
    this.finalResponse(status, reason, { headers });
    void this.acknowledged.then(() => this.forget());
  }

  private finalResponse(status: number, reason: string, extra: { headers?: Array<[string, string]>; body?: string }): void {
    this.final = true;
    this.respond(status, reason, extra);
    const startedAt = Date.now();
    let interval = T1_MS;
    const again = () => {
      if (this.acked || this.ended) return;
      if (Date.now() - startedAt >= TIMEOUT_MS) {
        this.settle(false);
        return;
      }
      this.endpoint.send(this.last!, this.source);
      interval = Math.min(interval * 2, T2_MS);
      this.timer = setTimeout(again, interval);
    };
    this.timer = setTimeout(again, interval);
  }

  private forget(): void {
    clearTimeout(this.timer);
    this.endpoint.offDialog(this.sipCallId);
  }

  private request(method: string, extra: Array<[string, string]> = []): SipRequest {
    const headers = new Map<string, string[]>([
      ['via', [`${this.endpoint.viaFor(this.source)};branch=${newBranch()};rport`]],
      ['max-forwards', ['70']],
      ['from', [`${header(this.invite, 'to')!};tag=${this.localTag}`]],
      ['to', [header(this.invite, 'from')!]],
      ['call-id', [this.sipCallId]],
      ['cseq', [`${++this.cseqNumber} ${method}`]],
      ['user-agent', ['Dialer']],
    ]);
    // The UAS keeps the INVITE's Record-Route in its order as the dialog's route set (RFC 3261 12.1.1).
    const routes = this.invite.headers.get('record-route');
    if (routes?.length) headers.set('route', [...routes]);
    for (const [name, value] of extra) headers.set(name, [...(headers.get(name) ?? []), value]);
    return { kind: 'request', method, uri: this.remoteTarget, headers, body: '' };
  }

  /** Ends the answered call from our side; resolves when the trunk answered the BYE (or gave up). */
  bye(): Promise<void> {
    if (!this.dialogUp || this.ended) return Promise.resolve();
    this.ended = true;
    clearTimeout(this.timer);
    const request = this.request('BYE');
    return new Promise<void>((resolve) => {
      const transaction = this.endpoint.request(request, this.source, (response) => {
        if (response.status >= 200) done();
      });
      const timer = setTimeout(done, 8000);
      function done() {
        clearTimeout(timer);
        transaction.stop();
        resolve();
      }
    }).finally(() => this.endpoint.offDialog(this.sipCallId));
  }

  /** Asks the trunk to call `target` and hand the caller over (cold transfer, RFC 3515); rejects when refused. */
  refer(target: string): Promise<void> {
    if (!this.dialogUp || this.ended) return Promise.reject(new Error('the call is over'));
    const request = this.request('REFER', [
      ['contact', this.contact],
      ['refer-to', `<${target}>`],
      ['referred-by', `<${addressUri(header(this.invite, 'to')!)}>`],
    ]);
    return new Promise((resolve, reject) => {
      const transaction = this.endpoint.request(request, this.source, (response) => {
        if (response.status < 200) return;
        transaction.stop();
        if (response.status < 300) resolve();
        else reject(new Error(`the far side refused the transfer: SIP ${response.status} ${response.reason}`.trim()));
      });
    });
  }

  private receive(request: SipRequest, from: Destination): void {
    const reply = (status: number, reason: string, extra: { headers?: Array<[string, string]>; body?: string } = {}) =>
      this.endpoint.send(responseTo(request, status, reason, { toTag: this.localTag, ...extra }), from);
    const initial = !param(header(request, 'to'), 'tag');
    switch (request.method) {
      case 'ACK':
        if (cseq(request).seq === this.inviteSeq && this.final && !this.acked) {
          this.acked = true;
          clearTimeout(this.timer);
          this.settle(true);
        }
        return;
      case 'CANCEL':
        this.endpoint.send(responseTo(request, 200, 'OK', { toTag: this.localTag }), from);
        if (!this.final) {
          this.canceled = true;
          this.refuse(487, 'Request Terminated');
          this.onCancel?.();
        }
        return;
      case 'BYE':
        reply(200, 'OK');
        if (this.dialogUp && !this.ended) {
          this.ended = true;
          this.forget();
          // (A BYE tells that the answer arrived, ACK or not.)
          this.settle(true);
          this.onBye?.();
        }
        return;
      case 'INVITE':
      case 'UPDATE': {
        // The INVITE again (its response was lost): the last response again.
        if (request.method === 'INVITE' && initial && cseq(request).seq === this.inviteSeq) {
          if (this.last) this.endpoint.send(this.last, from);
          return;
        }
        // A re-INVITE or UPDATE (a session refresh or a hold): Dialer's stream stays as it was answered.
        const contact = header(request, 'contact');
        if (contact) this.remoteTarget = addressUri(contact);
        const withSdp = request.method === 'INVITE' || request.body !== '';
        reply(200, 'OK', withSdp ? { headers: [['contact', this.contact], ['content-type', 'application/sdp']], body: this.answerSdp } : { headers: [['contact', this.contact]] });
        return;
      }
      case 'NOTIFY': {
        reply(200, 'OK');
        const line = /^SIP\/2\.0 (\d{3})[^\r\n]*/.exec(request.body);
        if ((header(request, 'event') ?? '').toLowerCase().startsWith('refer') && line) {
          const status = Number(line[1]);
          const final = status >= 200 || (header(request, 'subscription-state') ?? '').toLowerCase().startsWith('terminated');
          this.onTransferProgress?.({ status, line: line[0], final });
        }
        return;
      }
      case 'OPTIONS':
      case 'INFO':
        reply(200, 'OK');
        return;
      default:
        reply(405, 'Method Not Allowed', { headers: [['allow', ALLOW]] });
    }
  }

  /** Forgets the call without signalling (the endpoint is closing). */
  drop(): void {
    this.ended = true;
    this.settle(this.acked);
    this.forget();
  }
}
