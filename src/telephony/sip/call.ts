/**
 * One outbound SIP call as a user agent client: the INVITE (with the SDP offer) and its
 * provisional responses, digest authentication on 401/407, CANCEL, the ACK of the answer, and the
 * dialog that follows (BYE either side, re-INVITE/UPDATE answered with the same SDP, INFO and
 * OPTIONS acknowledged), and the cold transfer: a REFER to the far side (RFC 3515), whose progress
 * comes back in NOTIFYs of message/sipfrag.
 */
import { randomBytes } from 'node:crypto';
import type { CallEnd } from '../../lifecycle/index.js';
import { authorization, parseChallenge } from './digest.js';
import { newBranch, newTag, type ClientTransaction, type Destination, type SipEndpoint } from './endpoint.js';
import { addressUri, cseq, header, param, responseTo, uriHostPort, type SipRequest, type SipResponse } from './message.js';

export interface OutboundCallOptions {
  /** The trunk: where requests go. */
  proxy: Destination;
  /** Request-URI user (the dialled number) and host (the trunk's domain). */
  toUser: string;
  domain: string;
  /** Caller ID user and its domain (the trunk's from_domain). */
  fromUser: string;
  fromDomain: string;
  credentials?: { username: string; password: string };
  /** The SDP offer. */
  sdp: string;
}

/** How the INVITE ended: answered (with the far side's SDP) or a final failure status. */
export type InviteResult = { answered: true; sdp: string } | { answered: false; status: number; reason: string; canceled: boolean };

export class OutboundCall {
  // Letters, digits and dashes only: the Call-ID is the lead's call_id and names its recording.
  readonly callId = `dialer-${randomBytes(12).toString('hex')}`;
  private readonly localTag = newTag();
  private remoteTag: string | undefined;
  private remoteTarget: string;
  private cseqNumber = 1;
  private readonly requestUri: string;
  /** The trunk's domain (the Request-URI's host): where the dialled numbers live. */
  get domain(): string {
    return this.options.domain;
  }
  private invite: SipRequest | undefined;
  private inviteTransaction: ClientTransaction | undefined;
  private provisional = false;
  private cancelWanted = false;
  private canceled = false;
  private ackFor2xx: SipRequest | undefined;
  private dialogUp = false;
  private ended = false;
  /** Ends start()'s wait with a failure of our own (the trunk never answered the INVITE). */
  private giveUp: ((result: InviteResult) => void) | undefined;
  /** SIP statuses seen, in order (the lead's metaData keeps them). */
  readonly statuses: number[] = [];
  /** When the last INVITE went out (performance.now()): the call's setup time counts from it. */
  inviteSentAt = 0;
  /** The far side hung up (BYE). */
  onBye: (() => void) | undefined;
  /** The far side is ringing or has early media (18x). */
  onProgress: ((status: number) => void) | undefined;
  /** A NOTIFY about our REFER: the status line of the transfer's call, and whether it is the last. */
  onTransferProgress: ((fragment: { status: number; line: string; final: boolean }) => void) | undefined;

  constructor(private readonly endpoint: SipEndpoint, private readonly options: OutboundCallOptions) {
    this.requestUri = `sip:${options.toUser}@${options.domain}`;
    this.remoteTarget = this.requestUri;
    endpoint.onDialog(this.callId, (request, from) => this.inDialog(request, from));
  }

  private get contact(): string {
    return this.endpoint.contactFor(this.options.fromUser, this.options.proxy);
  }

  private request(method: string, uri: string, seq: number, extra: Array<[string, string]> = [], body = '', branch = newBranch()): SipRequest {
    const headers = new Map<string, string[]>([
      ['via', [`${this.endpoint.viaFor(this.options.proxy)};branch=${branch};rport`]],
      ['max-forwards', ['70']],
      ['from', [`<sip:${this.options.fromUser}@${this.options.fromDomain}>;tag=${this.localTag}`]],
      ['to', [`<sip:${this.options.toUser}@${this.options.domain}>${this.remoteTag ? `;tag=${this.remoteTag}` : ''}`]],
      ['call-id', [this.callId]],
      ['cseq', [`${seq} ${method}`]],
      ['user-agent', ['Dialer']],
    ]);
    for (const [name, value] of extra) headers.set(name, [...(headers.get(name) ?? []), value]);
    return { kind: 'request', method, uri, headers, body };
  }

  /** Sends the INVITE; resolves with its final outcome (authenticating once when challenged). */
  start(): Promise<InviteResult> {
    return new Promise((resolve) => {
      this.giveUp = resolve;
      let authenticated = false;
      const send = (auth?: [string, string]) => {
        const extra: Array<[string, string]> = [
          ['contact', this.contact],
          ['allow', 'INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, INFO, REFER, NOTIFY'],
          ['supported', 'timer'],
          ['content-type', 'application/sdp'],
        ];
        if (auth) extra.push(auth);
        this.invite = this.request('INVITE', this.requestUri, this.cseqNumber, extra, this.options.sdp);
        this.provisional = false;
        this.inviteSentAt = performance.now();
        this.inviteTransaction = this.endpoint.request(this.invite, this.options.proxy, (response) => onResponse(response));
      };
      const onResponse = (response: SipResponse) => {
        if (this.ended) return;
        const status = response.status;
        if (status < 200) {
          if (status > 100) this.statuses.push(status);
          this.provisional = true;
          if (status > 100) this.onProgress?.(status);
          if (this.cancelWanted) this.sendCancel();
          return;
        }
        if (status < 300) {
          // The answer (and its retransmissions): ACK each.
          if (!this.dialogUp) {
            this.statuses.push(status);
            this.dialogUp = true;
            this.remoteTag = param(header(response, 'to'), 'tag');
            const contact = header(response, 'contact');
            if (contact) this.remoteTarget = addressUri(contact);
            this.ackFor2xx = this.request('ACK', this.remoteTarget, cseq(response).seq);
            if (this.cancelWanted) {
              // The answer crossed our CANCEL: the call is up; end it at once.
              this.sendAck();
              void this.bye();
              resolve({ answered: false, status: 487, reason: 'Request Terminated (answered after the ring timeout)', canceled: true });
              return;
            }
            this.sendAck();
            resolve({ answered: true, sdp: response.body });
          } else this.sendAck();
          return;
        }
        this.statuses.push(status);
        this.ackFailure(response);
        this.inviteTransaction?.stop();
        const challenge = status === 401 ? header(response, 'www-authenticate') : status === 407 ? header(response, 'proxy-authenticate') : undefined;
        if (challenge && this.options.credentials && !authenticated && !this.cancelWanted) {
          const parsed = parseChallenge(challenge);
          if (parsed) {
            authenticated = true;
            this.cseqNumber++;
            send([status === 401 ? 'authorization' : 'proxy-authorization', authorization(parsed, this.options.credentials, 'INVITE', this.requestUri)]);
            return;
          }
        }
        this.endpoint.offDialog(this.callId);
        this.ended = true;
        resolve({ answered: false, status, reason: response.reason, canceled: this.canceled });
      };
      send();
    });
  }

  /** The ACK of a non-2xx final response: same branch as the INVITE, hop by hop (RFC 3261 17.1.1.3). */
  private ackFailure(response: SipResponse): void {
    const invite = this.invite!;
    const headers = new Map<string, string[]>([
      ['via', [invite.headers.get('via')![0]!]],
      ['max-forwards', ['70']],
      ['from', [header(invite, 'from')!]],
      ['to', [header(response, 'to') ?? header(invite, 'to')!]],
      ['call-id', [this.callId]],
      ['cseq', [`${cseq(invite).seq} ACK`]],
    ]);
    this.endpoint.send({ kind: 'request', method: 'ACK', uri: invite.uri, headers, body: '' }, this.options.proxy);
  }

  private sendAck(): void {
    if (this.ackFor2xx) this.endpoint.send(this.ackFor2xx, this.targetAddress());
  }

  /** Where in-dialog requests go: the trunk (it stays on the path of calls through a carrier's proxy). */
  private targetAddress(): Destination {
    return this.options.proxy;
  }

  /**
   * Gives up on an INVITE the trunk has not answered at all (not even 100 Trying): the trunk is
   * taken as unreachable, the INVITE stops and start() ends with a 408 of ours. False when the
   * trunk has answered something meanwhile (the call goes on).
   */
  abandonUnheard(afterSeconds: number): boolean {
    if (this.provisional || this.dialogUp || this.ended || this.statuses.length > 0) return false;
    this.ended = true;
    this.inviteTransaction?.stop();
    this.endpoint.offDialog(this.callId);
    this.statuses.push(408);
    this.giveUp?.({ answered: false, status: 408, reason: `Request Timeout (the trunk did not answer the INVITE in ${afterSeconds} s)`, canceled: false });
    return true;
  }

  /** Gives up on the ringing call (ring timeout, shutdown): CANCEL once a provisional response came. */
  cancel(): void {
    if (this.dialogUp || this.ended || this.cancelWanted) return;
    this.cancelWanted = true;
    if (this.provisional) this.sendCancel();
  }

  private sendCancel(): void {
    if (this.canceled || !this.invite) return;
    this.canceled = true;
    const invite = this.invite;
    const via = invite.headers.get('via')![0]!;
    const cancel = this.request('CANCEL', invite.uri, cseq(invite).seq, [], '', param(via, 'branch'));
    cancel.headers.set('to', [header(invite, 'to')!]);
    this.endpoint.request(cancel, this.options.proxy, () => undefined);
  }

  /** Ends the established call from our side; resolves when the far side answered the BYE (or gave up). */
  bye(): Promise<void> {
    if (!this.dialogUp || this.ended) return Promise.resolve();
    this.ended = true;
    this.inviteTransaction?.stop();
    const request = this.request('BYE', this.remoteTarget, ++this.cseqNumber);
    return new Promise<void>((resolve) => {
      const transaction = this.endpoint.request(request, this.targetAddress(), (response) => {
        if (response.status >= 200) done();
      });
      const timer = setTimeout(done, 8000);
      function done() {
        clearTimeout(timer);
        transaction.stop();
        resolve();
      }
    }).finally(() => this.endpoint.offDialog(this.callId));
  }

  /**
   * Asks the far side to call `target` and hand the callee over (cold transfer, RFC 3515).
   * Resolves when the REFER is accepted (2xx); rejects with its status when it is refused.
   */
  refer(target: string): Promise<void> {
    if (!this.dialogUp || this.ended) return Promise.reject(new Error('the call is over'));
    const request = this.request('REFER', this.remoteTarget, ++this.cseqNumber, [
      ['contact', this.contact],
      ['refer-to', `<${target}>`],
      ['referred-by', `<sip:${this.options.fromUser}@${this.options.fromDomain}>`],
    ]);
    return new Promise((resolve, reject) => {
      const transaction = this.endpoint.request(request, this.targetAddress(), (response) => {
        if (response.status < 200) return;
        transaction.stop();
        if (response.status < 300) resolve();
        else reject(new Error(`the far side refused the transfer: SIP ${response.status} ${response.reason}`.trim()));
      });
    });
  }

  private inDialog(request: SipRequest, from: Destination): void {
    const reply = (status: number, reason: string, extra: { headers?: Array<[string, string]>; body?: string } = {}) =>
      this.endpoint.send(responseTo(request, status, reason, { toTag: this.localTag, ...extra }), from);
    switch (request.method) {
      case 'ACK':
        return;
      case 'BYE':
        reply(200, 'OK');
        if (!this.ended) {
          this.ended = true;
          this.inviteTransaction?.stop();
          this.endpoint.offDialog(this.callId);
          this.onBye?.();
        }
        return;
      case 'INVITE':
      case 'UPDATE': {
        // A session refresh or a hold: Dialer's stream stays as it was offered.
        const withSdp = request.method === 'INVITE' || request.body !== '';
        const contact = header(request, 'contact');
        if (contact) this.remoteTarget = addressUri(contact);
        reply(200, 'OK', withSdp ? { headers: [['contact', this.contact], ['content-type', 'application/sdp']], body: this.options.sdp } : { headers: [['contact', this.contact]] });
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
        reply(405, 'Method Not Allowed', { headers: [['allow', 'INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, INFO, REFER, NOTIFY']] });
    }
  }

  /** Forgets the call without signalling (the endpoint is closing). */
  drop(): void {
    this.ended = true;
    this.inviteTransaction?.stop();
    this.endpoint.offDialog(this.callId);
  }
}

export { uriHostPort };

/** How a failed INVITE ends the attempt, by its final status. */
export function inviteFailure(status: number, reason: string, canceled: boolean, ringSeconds: number): CallEnd {
  const text = `SIP ${status} ${reason}`.trim();
  if (canceled) return { kind: 'no_answer', error: `no answer in ${ringSeconds} s (CANCEL sent; ${text})` };
  if (status === 486 || status === 600) return { kind: 'busy', error: text };
  if (status === 408 || status === 480 || status === 487) return { kind: 'no_answer', error: text };
  if (status === 603) return { kind: 'failed', error: `rejected: ${text}` };
  // The carrier's own trouble (5xx, and 401/403/407 we could not answer) may pass later.
  if (status >= 500 || status === 401 || status === 403 || status === 407) return { kind: 'error', error: `carrier error: ${text}` };
  return { kind: 'failed', error: text };
}
