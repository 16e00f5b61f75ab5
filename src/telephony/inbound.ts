/**
 * Inbound calls: someone dials one of our numbers. The configuration that answers is the one of
 * the last lead we called that person from that number (a call back); failing that, the most
 * recently changed configuration with `enable_inbound`. Inside its inbound window the agent
 * answers on a new lead (`call_direction` INBOUND); outside it, or with inbound disabled, the
 * block message is spoken and the call redirected (REDIRECT) or ended (REJECT, MESSAGE; HANGUP
 * ends it without a word).
 *
 * The rules are decided here once (decideInbound) and the answered call's lead opened here once
 * (openInboundCall), for the hosted providers' calls (their markup, handleInbound) and for calls
 * from SIP trunks (Dialer's own user agent, sip/inbound.ts).
 */
import { findInboundConfiguration, type InboundConfiguration } from '../configurations/index.js';
import type { Db } from '../db/index.js';
import { openInbound, type RetryPolicy } from '../lifecycle/index.js';
import { notFound } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { inWindow } from '../lib/windows.js';
import type { CallContext } from '../voice/index.js';
import type { CallResult } from './driver.js';
import type { AnswerInfo, Markup, ProviderKit } from './provider.js';
import type { Telephony } from './service.js';

/** An inbound call is one attempt: whoever called us is not called back by Dialer. */
const NO_RETRY: RetryPolicy = { max_retry: 0, retry_offset: 0 };

const UNAVAILABLE_MESSAGE = 'Sorry, we cannot take your call right now. Please try again later.';

/** What the inbound rules say of a call. */
export type InboundDecision =
  /** No agent to answer with: the caller hears `message` rather than silence. */
  | { kind: 'unavailable'; message: string }
  /** The number called is not one of ours (of the provider asked). */
  | { kind: 'unknown_number' }
  /** Not answered by the agent: `message` spoken (when any), then redirected to `redirectTo` (caller ID `callerId`) or ended. */
  | { kind: 'block'; message?: string; redirectTo?: string; callerId?: string }
  | { kind: 'answer'; config: InboundConfiguration };

export interface InboundCall {
  /** Our number that was called, and the caller's. */
  to: string;
  from: string;
  /** Only a number of this provider counts as ours (SIP: a trunk's call reaches SIP numbers only). */
  provider?: string;
  /** Only this reseller's configurations answer (a trunk's calls reach its own reseller's). */
  resellerId?: string;
}

export async function decideInbound(telephony: Telephony, db: Db, call: InboundCall): Promise<InboundDecision> {
  if (!telephony.status().ready) return { kind: 'unavailable', message: UNAVAILABLE_MESSAGE };
  const config = await findInboundConfiguration(db, call.to, call.from, { provider: call.provider, resellerId: call.resellerId });
  if (config === 'unknown_number') return { kind: 'unknown_number' };
  if (!config) return { kind: 'block' };
  const start = config.inbound_call_start_time ?? '00:00';
  const end = config.inbound_call_end_time ?? '00:00';
  const open = config.enable_inbound && inWindow(new Date(), start, end, config.inbound_call_timezone ?? 'UTC');
  if (open) return { kind: 'answer', config };
  const message = config.inbound_block_message ?? undefined;
  if (config.inbound_block_action === 'REDIRECT' && config.inbound_redirect_number) {
    return { kind: 'block', ...(message ? { message } : {}), redirectTo: config.inbound_redirect_number, callerId: call.to };
  }
  return { kind: 'block', ...(message && config.inbound_block_action !== 'HANGUP' ? { message } : {}) };
}

/** An answered inbound call's lead and attempt: what its agent knows, and how its end is written. */
export interface OpenedInbound {
  leadId: string;
  context: CallContext;
  /** Writes the call's end (never retried); resolves once written or logged as failed. */
  finish(result: CallResult): Promise<void>;
}

/**
 * Opens the lead (INBOUND, PROCESSING, attempt 1, call id `callId`) and its attempt for a call the
 * agent answers under `config`. A call through a SIP trunk (`trunkId`) holds one of its channels:
 * undefined when the trunk has none free (nothing is written).
 */
export async function openInboundCall(
  telephony: Telephony,
  db: Db,
  call: { config: InboundConfiguration; callId: string; provider: string; to: string; from: string; trunkId?: string },
): Promise<OpenedInbound | undefined> {
  const { config, callId, provider } = call;
  const leadId = newId();
  const payload = { customer_mobile_number: call.from };
  const opened = await db.tx((q) =>
    openInbound(
      q,
      {
        id: leadId,
        resellerId: config.reseller_id,
        merchantId: config.merchant_id,
        templateId: config.template_id,
        templateName: config.template_name,
        callSid: callId,
        provider,
        numberId: config.number_id,
        payload,
        ...(call.trunkId ? { trunkId: call.trunkId } : {}),
      },
      newId(),
    ),
  );
  if (!opened) return undefined;
  const attempt = telephony.inboundAttempts.begin(
    { leadId, attempt: 1, requestId: `inbound-${callId}`, template: config.template_name, templateId: config.template_id, provider, direction: 'inbound' },
    // (No lease to lose: nothing hangs an inbound call up but shutdown, through its session.)
    () => {},
  );
  attempt.span.callId(callId);
  const context: CallContext = {
    callId,
    leadId,
    templateId: config.template_id,
    payload,
    direction: 'inbound',
    ourNumber: call.to,
    theirNumber: call.from,
    traceContext: attempt.span.context,
  };
  return {
    leadId,
    context,
    // Finished as any attempt is, without a lease (nobody claimed it) and never retried (the caller hung up).
    finish: async (result) => {
      try {
        await attempt.finish(result, NO_RETRY);
      } catch (err) {
        telephony.deps.log.error({ leadId, err }, 'could not finish an inbound lead');
      } finally {
        attempt.close();
      }
    },
  };
}

/** A hosted provider's inbound call: the rules, then the provider's markup (block, or the agent's stream). */
export async function handleInbound(deps: { telephony: Telephony; db: Db; kit: ProviderKit; info: AnswerInfo }): Promise<Markup> {
  const { telephony, db, kit, info } = deps;
  const decision = await decideInbound(telephony, db, { to: info.to, from: info.from });
  if (decision.kind === 'unknown_number') throw notFound(`Number ${info.to}`, 'unknown_number');
  if (decision.kind === 'unavailable') return kit.blockMarkup({ message: decision.message });
  if (decision.kind === 'block') {
    const { kind: _kind, ...block } = decision;
    return kit.blockMarkup(block);
  }
  // (No trunk: a hosted provider's call is always opened.)
  const opened = (await openInboundCall(telephony, db, { config: decision.config, callId: info.callSid, provider: kit.slot, to: info.to, from: info.from }))!;
  const { callId: _callId, ...context } = opened.context;
  const session = telephony.open(kit, context, info.callSid);
  void session.ended.then((callEnd) => opened.finish({ callId: info.callSid, end: callEnd }));
  return session.answer(info);
}
