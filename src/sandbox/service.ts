import { scopeCondition, systemPrincipal, type Principal } from '../auth/index.js';
import type { ConfigurationsService, Provider } from '../configurations/index.js';
import type { Db } from '../db/index.js';
import type { LeadsService } from '../leads/index.js';
import { badRequest, conflict, notFound } from '../lib/errors.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import { NumbersService } from '../numbers/index.js';
import type { SandboxStatus } from '../telephony/index.js';
import { findTemplateByName, TemplatesService } from '../templates/index.js';
import { SIP_PROVIDER } from '../telephony/index.js';
import { TrunksService } from '../trunks/index.js';
import { tenantsService, type TenantsService } from '../tenants/index.js';
import type { Flow } from '../voice/flow/schema.js';
import { SANDBOX_CUSTOMER_NUMBER } from './line.js';
import { SANDBOX_CHANNEL, SANDBOX_RESELLER_NAME, SANDBOX_SIP_TEMPLATE_NAME, SANDBOX_TEMPLATE_NAME, SandboxRepository } from './repository.js';

/** Who the sandbox acts as when it makes its own reseller, template and configuration, whoever asked for the call. */
const SANDBOX_ACTOR = systemPrincipal('sandbox', 'sandbox line');

/**
 * The sandbox line's caller IDs in the number pool (provider to number): available for the
 * providers it serves; disabled for those that now have real credentials (a real call must never
 * go out with a made-up caller ID).
 */
export async function syncSandboxNumbers(db: Db, served: ReadonlyMap<string, string>, allProviders: readonly string[]): Promise<void> {
  // Real trunks' calls take their caller IDs from the same SIP numbers: with real ones in the pool,
  // sandbox SIP calls use those (no phone rings either way), and the sandbox's own stays out.
  const kept = new Map(served);
  if (kept.has(SIP_PROVIDER) && (await new SandboxRepository(db).hasRealNumbers(SIP_PROVIDER))) kept.delete(SIP_PROVIDER);
  return new NumbersService(db).syncChannel(SANDBOX_CHANNEL, kept, allProviders);
}

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

export interface SandboxDeps {
  leads: LeadsService;
  /** Saves the sandbox configuration as any other (releasing the template's held leads). */
  configurations: ConfigurationsService;
  policy: OutboundPolicy;
  status: () => SandboxStatus;
}

export class SandboxService {
  private readonly repo: SandboxRepository;
  private readonly templates: TemplatesService;
  private readonly tenants: TenantsService;
  private readonly leads: LeadsService;
  private readonly configurations: ConfigurationsService;
  private readonly trunks: TrunksService;
  private readonly status: () => SandboxStatus;

  constructor(
    private readonly db: Db,
    deps: SandboxDeps,
  ) {
    this.repo = new SandboxRepository(db);
    this.templates = new TemplatesService(db, deps.policy);
    this.tenants = tenantsService(db);
    this.trunks = new TrunksService(db, deps.policy);
    ({ leads: this.leads, configurations: this.configurations, status: this.status } = deps);
  }

  /** The reseller an admin's sandbox calls belong to (an admin has none of its own). */
  private async resellerOf(caller: Principal): Promise<string> {
    return caller.resellerId ?? (await this.tenants.ensureReseller(SANDBOX_RESELLER_NAME)).id;
  }

  state() {
    return this.status();
  }

  /** The caller's sandbox template, if made. */
  async templateOf(caller: Principal): Promise<{ id: string; name: string } | undefined> {
    const found = await findTemplateByName(this.db, await this.resellerOf(caller), SANDBOX_TEMPLATE_NAME);
    return found && { id: found.id, name: found.name };
  }

  /**
   * "Call a simulated customer": pushes a lead that dials the sandbox line, with the caller's own
   * template (whose configuration must dial on a sandbox provider, or through the sandbox trunk) or
   * the sandbox template (made, with its configuration, in the caller's reseller the first time; an
   * admin's goes to the Sandbox reseller). `provider` picks the sandbox template's provider (the
   * first the line serves by default); SIP calls through the reseller's sandbox trunk.
   */
  async call(caller: Principal, templateId?: string, provider?: string): Promise<SandboxCall> {
    const { providers } = this.status();
    if (providers.length === 0) {
      throw conflict('The sandbox line is off: every provider has credentials, or DIALER_SANDBOX=false. Push a lead to call a real phone.', 'sandbox_off');
    }
    if (provider !== undefined && templateId) {
      throw badRequest("provider is for the sandbox template; a template of yours calls on its configuration's provider", [{ path: '/provider', message: 'must not be given with template_id' }]);
    }
    if (provider !== undefined && !providers.includes(provider)) {
      throw conflict(`${provider} is not on the sandbox line; it serves ${providers.join(', ')}`, 'not_on_sandbox');
    }
    let template: { id: string; name: string; reseller_id: string; merchant_id: string | null };
    let dialsOn: string;
    if (templateId) {
      const params: unknown[] = [];
      const found = await this.repo.templateAndProvider(templateId, scopeCondition(caller, TEMPLATE_SCOPE, params, { resellerWide: true }), params);
      if (!found) throw notFound(`Template ${templateId}`);
      const onLine = found.provider !== null && providers.includes(found.provider) && (found.provider !== SIP_PROVIDER || found.sandbox_trunk);
      if (!onLine) {
        throw conflict(
          found.provider === SIP_PROVIDER
            ? `Template ${found.name} dials through a SIP trunk of yours, which calls real phones. Point its configuration's trunk_id at the sandbox line's trunk to call the simulated customer.`
            : found.provider
              ? `Template ${found.name} dials on ${found.provider}, which calls real phones; the sandbox line serves ${providers.join(', ')}. Change its configuration's calling_provider to call the simulated customer.`
              : `Template ${found.name} has no configuration; create one whose calling_provider is ${providers.join(' or ')}.`,
          'not_on_sandbox',
        );
      }
      template = found;
      dialsOn = found.provider!;
    } else {
      const resellerId = await this.resellerOf(caller);
      dialsOn = provider ?? providers[0]!;
      const sip = dialsOn === SIP_PROVIDER;
      const made = await this.templates.ensure(SANDBOX_ACTOR, { name: sip ? SANDBOX_SIP_TEMPLATE_NAME : SANDBOX_TEMPLATE_NAME, reseller_id: resellerId, merchant_id: null, flow: SANDBOX_FLOW });
      // Dialling on the sandbox provider (or through the sandbox trunk) all day, with no retries.
      await this.configurations.ensure(SANDBOX_ACTOR, {
        reseller_id: resellerId,
        template: made.id,
        calling_provider: dialsOn as Provider,
        ...(sip ? { trunk_id: (await this.trunks.ensureSandbox(resellerId)).id } : {}),
        call_start_time: '00:00',
        call_end_time: '00:00',
        max_retry: 0,
        initial_offset: 0,
      });
      template = { id: made.id, name: made.name, reseller_id: resellerId, merchant_id: null };
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
      provider: dialsOn,
      message: `Calling the simulated customer on the sandbox line (${dialsOn}): no phone rings.`,
    };
  }
}
