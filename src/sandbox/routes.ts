import { Type, type Static } from 'typebox';
import type { App } from '../http/index.js';
import { Id, problems } from '../http/index.js';
import { SANDBOX_CUSTOMER_NUMBER } from './line.js';
import type { SandboxService } from './service.js';

export const SandboxInfo = Type.Object({
  enabled: Type.Boolean({ description: 'Some provider is served by the sandbox line' }),
  providers: Type.Array(Type.String(), { description: 'The providers whose calls reach the simulated customer (SIP: calls through a sandbox trunk)' }),
  agent: Type.String({ description: 'The agent sandbox calls run (greeter until an LLM is configured)' }),
  agent_missing: Type.Union([Type.String(), Type.Null()], { description: 'Why the template agent cannot run, and what to set so it can' }),
  customer_number: Type.String({ description: 'The number sandbox leads call (any number reaches the simulated customer)' }),
  template_id: Type.Union([Type.String(), Type.Null()], { description: 'The sandbox template of the caller\'s reseller, once made' }),
});
export type SandboxInfo = Static<typeof SandboxInfo>;

export const SandboxCallResult = Type.Object({
  lead_id: Type.String(),
  request_id: Type.String(),
  template_id: Type.String(),
  template: Type.String(),
  provider: Type.String(),
  message: Type.String(),
});

/** GET /sandbox, POST /sandbox/call. */
export function registerSandboxRoutes(app: App, sandbox: SandboxService): void {
  app.get('/sandbox', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['sandbox'],
      summary: 'The sandbox line: which providers reach the simulated customer inside Dialer (no phone rings), and the agent its calls run',
      response: { 200: SandboxInfo, ...problems(401, 403) },
    },
    handler: async (request): Promise<SandboxInfo> => {
      const s = sandbox.state();
      const template = s.providers.length > 0 ? await sandbox.templateOf(request.principal) : undefined;
      return {
        enabled: s.providers.length > 0,
        providers: s.providers,
        agent: s.agent,
        agent_missing: s.agentMissing ?? null,
        customer_number: SANDBOX_CUSTOMER_NUMBER,
        template_id: template?.id ?? null,
      };
    },
  });

  app.post('/sandbox/call', {
    config: { permission: ['leads', 'write'] },
    schema: {
      tags: ['sandbox'],
      summary: 'Call a simulated customer: push a lead that dials the sandbox line (with the sandbox template, made the first time, or one of yours on a sandbox provider or the sandbox trunk)',
      description: "409: the sandbox line is off, the provider is not on it, or the template does not dial on it. 404: no such template in scope. Over SIP the call goes through the reseller's sandbox trunk (made the first time): its far side is the simulated customer inside Dialer.",
      body: Type.Object(
        {
          template_id: Type.Optional(Id),
          provider: Type.Optional(
            Type.String({ minLength: 1, maxLength: 32, description: "The provider the sandbox template's call goes on (one of GET /sandbox's providers; SIP calls through the reseller's sandbox trunk). Default: the first. Not with template_id (the template's configuration decides)." }),
          ),
        },
        { additionalProperties: false },
      ),
      response: { 201: SandboxCallResult, ...problems(400, 401, 403, 404, 409) },
    },
    handler: async (request, reply) => reply.code(201).send(await sandbox.call(request.principal, request.body.template_id, request.body.provider)),
  });
}
