/**
 * Template test suites: a template's test cases (a scripted callee, the lead's variables, the
 * expectations its call must meet) and their runs, each case played as a call to the sandbox
 * line's simulated customer and judged against what the call left. The feature's only door.
 */
import { ConfigurationsService, type OnCallingEnabled } from '../configurations/index.js';
import type { Db } from '../db/index.js';
import type { CalleeScript } from '../emulator/index.js';
import type { App } from '../http/index.js';
import { LeadsService } from '../leads/index.js';
import type { OnFinished } from '../lifecycle/index.js';
import type { Logger } from '../lib/logger.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import type { SandboxStatus } from '../telephony/index.js';
import { TemplatesService } from '../templates/index.js';
import type { LLM } from '../voice/index.js';
import { llmJudge } from './judge.js';
import { llmPersona } from './persona.js';
import { registerTemplateTestRoutes } from './routes.js';
import { TemplateTestsService } from './service.js';

export { TestRun, TestCase, TestCaseBody, RunBody, EXPECTATION_KINDS } from './schema.js';

export interface TemplateTestsDeps {
  db: Db;
  log: Logger;
  onFinished: OnFinished;
  onCallingEnabled: OnCallingEnabled;
  policy: OutboundPolicy;
  sandbox: () => SandboxStatus;
  /** The sandbox line's simulated customers (undefined: this process runs no sandbox line). */
  callees: { script(number: string, script: CalleeScript): void } | undefined;
  /** The LLM that judges free-text criteria (undefined: none is configured). */
  llm: LLM | undefined;
  publicBase: string;
}

/** Mounts the routes; the returned close() stops watching runs (they are marked interrupted). */
export function registerTemplateTests(app: App, deps: TemplateTestsDeps): { close(): Promise<void> } {
  const service = new TemplateTestsService(deps.db, {
    templates: new TemplatesService(deps.db, deps.policy),
    leads: new LeadsService(deps.db, deps.onFinished, deps.policy),
    configurations: new ConfigurationsService(deps.db, deps.policy, deps.onCallingEnabled),
    sandbox: deps.sandbox,
    callees: deps.callees,
    judge: deps.llm ? llmJudge(deps.llm) : undefined,
    persona: deps.llm ? llmPersona(deps.llm) : undefined,
    publicBase: deps.publicBase,
    log: deps.log,
  });
  registerTemplateTestRoutes(app, service);
  return service;
}
