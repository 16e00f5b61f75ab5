/**
 * Inbound calls: someone dials one of our numbers. The configuration that answers is the one of
 * the last lead we called that person from that number (a call back); failing that, the most
 * recently changed configuration with `enable_inbound`. Inside its inbound window the agent
 * answers on a new lead (`call_direction` INBOUND); outside it, or with inbound disabled, the
 * block message is spoken and the call redirected (REDIRECT) or ended (REJECT, MESSAGE; HANGUP
 * ends it without a word).
 */
import { findInboundConfiguration } from '../configurations/index.js';
import type { Db } from '../db/index.js';
import { openInbound, type RetryPolicy } from '../lifecycle/index.js';
import { notFound } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { inWindow } from '../lib/windows.js';
import type { AnswerInfo, Markup, ProviderKit } from './provider.js';
import type { Telephony } from './service.js';

/** An inbound call is one attempt: whoever called us is not called back by Dialer. */
const NO_RETRY: RetryPolicy = { max_retry: 0, retry_offset: 0 };

export async function handleInbound(deps: { telephony: Telephony; db: Db; kit: ProviderKit; info: AnswerInfo }): Promise<Markup> {
  const { telephony, db, kit, info } = deps;
  // No agent to answer with: say so rather than pick up into silence.
  if (!telephony.status().ready) return kit.blockMarkup({ message: 'Sorry, we cannot take your call right now. Please try again later.' });
  const config = await findInboundConfiguration(db, info.to, info.from);
  if (config === 'unknown_number') throw notFound(`Number ${info.to}`, 'unknown_number');
  if (!config) return kit.blockMarkup({});
  const start = config.inbound_call_start_time ?? '00:00';
  const end = config.inbound_call_end_time ?? '00:00';
  const open = config.enable_inbound && inWindow(new Date(), start, end, config.inbound_call_timezone ?? 'UTC');
  if (!open) {
    const message = config.inbound_block_message ?? undefined;
    if (config.inbound_block_action === 'REDIRECT' && config.inbound_redirect_number) {
      return kit.blockMarkup({ message, redirectTo: config.inbound_redirect_number, callerId: info.to });
    }
    return kit.blockMarkup({ message: config.inbound_block_action === 'HANGUP' ? undefined : message });
  }
  const leadId = newId();
  const payload = { customer_mobile_number: info.from };
  await db.tx((q) =>
    openInbound(
      q,
      {
        id: leadId,
        resellerId: config.reseller_id,
        merchantId: config.merchant_id,
        templateId: config.template_id,
        templateName: config.template_name,
        callSid: info.callSid,
        provider: kit.slot,
        numberId: config.number_id,
        payload,
      },
      newId(),
    ),
  );
  const attempt = telephony.inboundAttempts.begin(
    { leadId, attempt: 1, requestId: `inbound-${info.callSid}`, template: config.template_name, templateId: config.template_id, provider: kit.slot, direction: 'inbound' },
    // (No lease to lose: nothing hangs an inbound call up but shutdown, through its session.)
    () => {},
  );
  attempt.span.callId(info.callSid);
  const session = telephony.open(
    kit,
    { leadId, templateId: config.template_id, payload, direction: 'inbound', ourNumber: info.to, theirNumber: info.from, traceContext: attempt.span.context },
    info.callSid,
  );
  // Finished as any attempt is, without a lease (nobody claimed it) and never retried (the caller hung up).
  void session.ended
    .then((callEnd) => attempt.finish({ callId: info.callSid, end: callEnd }, NO_RETRY))
    .catch((err: unknown) => telephony.deps.log.error({ leadId, err }, 'could not finish an inbound lead'))
    .finally(() => attempt.close());
  return session.answer(info);
}
