import { scopeCondition, type Principal } from '../auth/index.js';
import type { Db } from '../db/index.js';
import type { LeadsService } from '../leads/index.js';
import { conflict, notFound } from '../lib/errors.js';
import type { SandboxStatus } from '../telephony/index.js';
import type { Flow } from '../voice/flow/schema.js';
import { SANDBOX_CUSTOMER_NUMBER } from './line.js';
import { SandboxRepository } from './repository.js';

/** The sandbox template: with an LLM it greets, asks how the customer is, listens and says goodbye; without one the greeter carries the call. */
export const SANDBOX_FLOW: Flow = {
  initial_node: 'greet',
  nodes: [
    {
      node_name: 'greet',
      role_messages: [
        { role: 'system', content: "You are a friendly assistant from Dialer calling {customer_name}. This is a test call on Dialer's sandbox line: keep every answer to one short sentence." },
      ],
      task_messages: [{ role: 'system', content: 'Greet {customer_name}, ask how they are, listen to the answer, then call end_call.' }],
      functions: [{ name: 'end_call', description: 'The customer answered how they are; the call can end', properties: {}, required: [], transition_to: 'goodbye' }],
      respond_immediately: true,
    },
    {
      node_name: 'goodbye',
      task_messages: [{ role: 'system', content: 'Say goodbye.' }],
      pre_actions: [
        { type: 'tts_say', text: 'Thank you {customer_name}, goodbye!' },
        { type: 'end_conversation', outcome: 'conversation_completed' },
      ],
    },
  ],
};

export interface SandboxCall {
  lead_id: string;
  request_id: string;
  template_id: string;
  template: string;
  provider: string;
  message: string;
}

const TEMPLATE_SCOPE = { reseller: 't.reseller_id', merchant: 't.merchant_id' };

export class SandboxService {
  private readonly repo: SandboxRepository;

  constructor(
    db: Db,
    private readonly leads: LeadsService,
    private readonly status: () => SandboxStatus,
  ) {
    this.repo = new SandboxRepository(db);
  }

  state() {
    return this.status();
  }

  /** The caller's sandbox template, if made. */
  async templateOf(caller: Principal): Promise<{ id: string; name: string } | undefined> {
    const resellerId = caller.resellerId ?? (await this.repo.sandboxReseller());
    return this.repo.findTemplate(resellerId);
  }

  /**
   * "Call a simulated customer": pushes a lead that dials the sandbox line, with the caller's own
   * template (whose configuration must dial on a sandbox provider) or the sandbox template (made,
   * with its configuration, in the caller's reseller the first time; an admin's goes to the
   * Sandbox reseller).
   */
  async call(caller: Principal, templateId?: string): Promise<SandboxCall> {
    const { providers } = this.status();
    if (providers.length === 0) {
      throw conflict('The sandbox line is off: every provider has credentials, or DIALER_SANDBOX=false. Push a lead to call a real phone.', 'sandbox_off');
    }
    let template: { id: string; name: string; reseller_id: string; merchant_id: string | null };
    let provider: string;
    if (templateId) {
      const params: unknown[] = [];
      const found = await this.repo.templateAndProvider(templateId, scopeCondition(caller, TEMPLATE_SCOPE, params, { resellerWide: true }), params);
      if (!found) throw notFound(`Template ${templateId}`);
      if (!found.provider || !providers.includes(found.provider as never)) {
        throw conflict(
          found.provider
            ? `Template ${found.name} dials on ${found.provider}, which calls real phones; the sandbox line serves ${providers.join(', ')}. Change its configuration's calling_provider to call the simulated customer.`
            : `Template ${found.name} has no configuration; create one whose calling_provider is ${providers.join(' or ')}.`,
          'not_on_sandbox',
        );
      }
      template = found;
      provider = found.provider;
    } else {
      const resellerId = caller.resellerId ?? (await this.repo.sandboxReseller());
      const made = await this.repo.template(resellerId, SANDBOX_FLOW);
      provider = providers[0]!;
      await this.repo.configuration(resellerId, made.id, provider);
      template = { ...made, reseller_id: resellerId, merchant_id: null };
    }
    const requestId = `sandbox-${new Date().toISOString().replace(/[-:.TZ]/g, '').slice(0, 14)}`;
    const merchantId = template.merchant_id ?? caller.merchantId;
    const pushed = await this.leads.push(caller, {
      request_id: requestId,
      template: template.name,
      reseller_id: template.reseller_id,
      ...(merchantId ? { merchant_id: merchantId } : {}),
      payload: { customer_mobile_number: SANDBOX_CUSTOMER_NUMBER, customer_name: 'Sam' },
    });
    return {
      lead_id: pushed.lead_call_tracker_id,
      request_id: requestId,
      template_id: template.id,
      template: template.name,
      provider,
      message: `Calling the simulated customer on the sandbox line (${provider}): no phone rings.`,
    };
  }
}
