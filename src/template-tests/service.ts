/**
 * Template test suites: the cases of a template (stored with its owners) and their runs. A run
 * plays each case as a real call on the sandbox line: a test lead (TELEPHONY_TEST, a playground
 * lead, so never counted in analytics) dialled by the scheduler through a sandbox provider, whose
 * simulated customer plays the case's callee. Cases run at once, as far as the line's numbers
 * allow (one call per sandbox provider at a time). When each lead finishes, its record (transcript,
 * nodes, functions, hooks, analysis, latencies) is judged against the case's expectations.
 */
import { systemPrincipal, type Principal } from '../auth/index.js';
import { findConfiguration, type ConfigurationsService, type Provider } from '../configurations/index.js';
import type { Db } from '../db/index.js';
import type { CalleeScript } from '../emulator/index.js';
import type { LeadsService } from '../leads/index.js';
import { AppError, conflict, isUniqueViolation, notFound, unprocessable } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { newId } from '../lib/ids.js';
import type { TemplatesService } from '../templates/index.js';
import type { SandboxStatus } from '../telephony/index.js';
import { calleeScript } from './callee.js';
import type { PersonaLine, PersonaPlayer } from './persona.js';
import { LiveTranscripts } from '../leads/index.js';
import { judgeCall, type CallEvidence, type Judge } from './expectations.js';
import { assertCase, emptyResult, NO_PERSONA_PLAYER } from './case-rules.js';
import { TemplateTestsRepository, type TestCaseRow, type TestRunRow, type WatchedLead } from './repository.js';
import type { CaseResult, RunBody, TestCaseBody, TestCasePatch } from './schema.js';

/** Who a run acts as when it pushes its test leads (their overrides are the run's, not the caller's). */
const TEST_RUNNER = systemPrincipal('template-tests', 'template test run');
/** How often a run looks at its leads. */
const WATCH_MS = 400;
/** A case whose call has not ended this long after the callee's own limit is given up. */
const GRACE_SECONDS = 60;
/** A case not dialled within this long (the line busy with other runs) is given up. */
const DIAL_WAIT_SECONDS = 600;

/**
 * The numbers the simulated customers of test runs answer on (+1 500 555 xxxx, fictional), one per
 * case in flight; 0100 is the sandbox line's own customer.
 */
let nextLine = Math.floor(Math.random() * 9000);
function testLine(): string {
  nextLine = (nextLine + 1) % 10_000;
  if (nextLine === 100) nextLine++;
  return `+1500555${String(nextLine).padStart(4, '0')}`;
}

export interface TemplateTestsDeps {
  templates: TemplatesService;
  leads: LeadsService;
  configurations: ConfigurationsService;
  /** The sandbox line's providers and agent. */
  sandbox: () => SandboxStatus;
  /** The line's simulated customers: a number's callee script (undefined: this process has no sandbox line). */
  callees: { script(number: string, script: CalleeScript): void } | undefined;
  /** Judges free-text criteria (undefined: no LLM is configured). */
  judge: Judge | undefined;
  /** Plays persona callees (undefined: no LLM is configured, and such cases are not runnable). */
  persona: PersonaPlayer | undefined;
  /** The API's public base URL: a case's recording link is under it. */
  publicBase: string;
  log: Logger;
}

interface Running {
  row: TestRunRow;
  /** Lead id -> index of its case. */
  leads: Map<string, number>;
  bodies: TestCaseBody[];
  maxSeconds: number[];
  /** When each case's call was first seen under way. */
  callingSince: Map<number, number>;
  startedAt: number;
}

export class TemplateTestsService {
  private readonly repo: TemplateTestsRepository;
  private readonly running = new Map<string, Running>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly deps: TemplateTestsDeps,
  ) {
    this.repo = new TemplateTestsRepository(db);
  }

  async list(caller: Principal, templateId: string): Promise<TestCaseRow[]> {
    await this.deps.templates.get(caller, templateId);
    return this.repo.cases(templateId);
  }

  async create(caller: Principal, templateId: string, body: TestCaseBody): Promise<TestCaseRow> {
    const template = await this.deps.templates.changeable(caller, templateId);
    assertCase(body);
    try {
      return await this.repo.insertCase({
        id: newId(),
        template_id: template.id,
        reseller_id: template.reseller_id,
        merchant_id: template.merchant_id,
        name: body.name,
        callee: body.callee,
        variables: body.variables ?? {},
        expectations: body.expectations,
      });
    } catch (err) {
      throw duplicateName(err, body.name) ?? err;
    }
  }

  async update(caller: Principal, templateId: string, id: string, patch: TestCasePatch): Promise<TestCaseRow> {
    await this.deps.templates.changeable(caller, templateId);
    const current = await this.repo.caseById(templateId, id);
    if (!current) throw notFound(`Test case ${id}`);
    const next = { name: patch.name ?? current.name, callee: patch.callee ?? current.callee, variables: patch.variables ?? current.variables, expectations: patch.expectations ?? current.expectations };
    assertCase(next);
    try {
      return (await this.repo.updateCase(id, next))!;
    } catch (err) {
      throw duplicateName(err, next.name) ?? err;
    }
  }

  async delete(caller: Principal, templateId: string, id: string): Promise<void> {
    await this.deps.templates.changeable(caller, templateId);
    if (!(await this.repo.caseById(templateId, id)) || !(await this.repo.deleteCase(id))) throw notFound(`Test case ${id}`);
  }

  async runs(caller: Principal, templateId: string, limit: number): Promise<TestRunRow[]> {
    await this.deps.templates.get(caller, templateId);
    return this.repo.runs(templateId, limit);
  }

  async getRun(caller: Principal, id: string): Promise<TestRunRow> {
    const run = this.running.get(id)?.row ?? (await this.repo.run(id));
    if (!run) throw notFound(`Test run ${id}`);
    // 404 when the template is out of scope: a run is as visible as its template.
    await this.deps.templates.get(caller, run.template_id).catch((err: unknown) => {
      throw err instanceof AppError && err.status === 404 ? notFound(`Test run ${id}`) : err;
    });
    return run;
  }

  /**
   * Starts a run of the template's cases (or of `body.cases`, not stored) and answers at once; the
   * run's cases are played and judged in the background (GET /test-runs/{id}).
   */
  async run(caller: Principal, templateId: string, body: RunBody): Promise<TestRunRow> {
    const template = await this.deps.templates.changeable(caller, templateId);
    if (body.cases && body.test_ids) throw unprocessable('Send cases or test_ids, not both', [{ path: '/cases', message: 'cannot be sent with test_ids' }]);
    let cases: Array<{ test_id: string | null; body: TestCaseBody }>;
    if (body.cases) {
      body.cases.forEach((c, i) => assertCase(c, `/cases/${i}`));
      cases = body.cases.map((c) => ({ test_id: null, body: c }));
    } else {
      const stored = await this.repo.cases(template.id);
      const chosen = body.test_ids ? stored.filter((c) => body.test_ids!.includes(c.id)) : stored;
      const unknown = (body.test_ids ?? []).filter((id) => !stored.some((c) => c.id === id));
      if (unknown.length > 0) throw unprocessable(`No test case ${unknown[0]} in template ${template.name}`, unknown.map((id) => ({ path: '/test_ids', message: `${id} is not a test case of this template` })));
      cases = chosen.map((c) => ({ test_id: c.id, body: { name: c.name, callee: c.callee, variables: c.variables, expectations: c.expectations } }));
    }
    if (cases.length === 0) throw conflict(`Template ${template.name} has no test cases: add some (POST /templates/${template.id}/tests) or send them with the run`, 'no_test_cases');
    const sandbox = this.deps.sandbox();
    // The emulator's providers: a case's callee is scripted on the emulator, per number.
    const providers = sandbox.emulated;
    if (providers.length === 0 || !this.deps.callees) {
      throw conflict(
        'Test runs call the simulated customer of the sandbox line, and it is off here (every provider has credentials, DIALER_SANDBOX=false, or this process does not place calls)',
        'sandbox_off',
      );
    }
    // The test leads need a configuration row to be dialled under; one made here never calls real leads.
    const configuration =
      (await findConfiguration(this.db, template.reseller_id, template.id)) ??
      (await this.deps.configurations.ensure(TEST_RUNNER, { reseller_id: template.reseller_id, template: template.id, calling_provider: providers[0] as Provider, enable_calling: false }));
    const notes: string[] = [];
    if (sandbox.agentMissing) {
      notes.push(`The calls ran the built-in greeter, not the template's flow, because ${sandbox.agentMissing}; expectations about the flow cannot pass and judged criteria are not judged.`);
    }
    const unplayable = this.deps.persona ? 0 : cases.filter((c) => c.body.callee.persona !== undefined).length;
    if (unplayable) notes.push(`${unplayable} case(s) not runnable: ${NO_PERSONA_PLAYER}.`);
    if (configuration.require_consent) notes.push('The configuration requires consent: the test leads carry a consent record of the test run.');

    const runId = newId();
    const results: CaseResult[] = cases.map((c) => emptyResult(c.test_id, c.body));
    const row = await this.repo.insertRun({
      id: runId,
      template_id: template.id,
      reseller_id: template.reseller_id,
      merchant_id: template.merchant_id,
      status: 'running',
      agent: sandbox.agentMissing ? 'greeter' : 'flow',
      note: notes.length ? notes.join(' ') : null,
      cases: results,
    });
    // The cases as this process changes them (the row read back holds a copy).
    row.cases = results;
    const running: Running = { row, leads: new Map(), bodies: cases.map((c) => c.body), maxSeconds: cases.map((c) => c.body.callee.max_seconds ?? 90), callingSince: new Map(), startedAt: Date.now() };
    this.running.set(runId, running);
    for (const [i, c] of cases.entries()) {
      const { persona, goal } = c.body.callee;
      if (persona !== undefined && !this.deps.persona) {
        Object.assign(results[i]!, { status: 'not_runnable', error: NO_PERSONA_PLAYER });
        continue;
      }
      const number = testLine();
      let leadId: string | undefined;
      const nextLine =
        persona !== undefined && goal !== undefined
          ? () => this.personaLine(results[i]!, { persona, goal }, leadId)
          : undefined;
      this.deps.callees.script(number, calleeScript(c.body.callee, nextLine));
      const provider = providers[i % providers.length]!;
      try {
        const pushed = await this.deps.leads.push(TEST_RUNNER, {
          request_id: `test-run:${runId}:${i + 1}`,
          template: template.name,
          reseller_id: template.reseller_id,
          ...(template.merchant_id ? { merchant_id: template.merchant_id } : {}),
          execution_mode: 'TELEPHONY_TEST',
          is_playground: true,
          configurations_override: testOverride(provider),
          ...(configuration.require_consent ? { consent: { source: 'template test run', captured_at: new Date().toISOString() } } : {}),
          payload: { ...(c.body.variables ?? {}), customer_mobile_number: number },
        });
        results[i]!.lead_id = leadId = pushed.lead_call_tracker_id;
        running.leads.set(pushed.lead_call_tracker_id, i);
      } catch (err) {
        results[i]!.status = 'error';
        results[i]!.error = err instanceof AppError ? `the test lead was refused: ${err.message}` : `the test lead could not be pushed: ${(err as Error).message}`;
      }
    }
    await this.settle(running);
    this.schedule();
    return running.row;
  }

  /** A persona's next line: the LLM asked with the call's transcript so far (as the live transcript has it). */
  private async personaLine(result: CaseResult, spec: { persona: string; goal: string }, leadId: string | undefined): Promise<PersonaLine> {
    try {
      const transcript = leadId ? await LiveTranscripts.of(this.db, [leadId]) : [];
      return await this.deps.persona!(spec, transcript);
    } catch (err) {
      result.error = `the persona's LLM gave no line: ${(err as Error).message}`;
      this.deps.log.warn({ err, leadId }, 'a persona callee could not get its next line; it hangs up');
      return { line: '', hangUp: true };
    }
  }

  private schedule(): void {
    if (this.closed || this.timer || this.running.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick().finally(() => this.schedule());
    }, WATCH_MS);
  }

  /** Looks at every running run's leads once; judges those that finished. */
  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      for (const run of [...this.running.values()]) {
        try {
          await this.watch(run);
        } catch (err) {
          this.deps.log.error({ err, runId: run.row.id }, 'a test run could not read its leads; it tries again');
        }
      }
    } finally {
      this.ticking = false;
    }
  }

  private async watch(run: Running): Promise<void> {
    const open = [...run.leads].filter(([, i]) => !isDone(run.row.cases[i]!)).map(([id]) => id);
    let changed = false;
    for (const lead of open.length ? await this.repo.leads(open) : []) {
      const i = run.leads.get(lead.id)!;
      const result = run.row.cases[i]!;
      if (lead.status === 'FINISHED') {
        await this.judge(result, lead, run.bodies[i]!);
        changed = true;
      } else if (lead.status === 'PROCESSING') {
        if (!run.callingSince.has(i)) (run.callingSince.set(i, Date.now()), (result.status = 'calling'), (changed = true));
        if (Date.now() - run.callingSince.get(i)! > (run.maxSeconds[i]! + GRACE_SECONDS) * 1000) {
          (result.status = 'error'), (result.error = `the call did not end within ${run.maxSeconds[i]! + GRACE_SECONDS} s`), (changed = true);
        }
      } else if (Date.now() - run.startedAt > DIAL_WAIT_SECONDS * 1000) {
        (result.status = 'error'), (result.error = `the call was not placed within ${DIAL_WAIT_SECONDS} s (lead ${lead.status})`), (changed = true);
      }
    }
    if (changed) await this.settle(run);
  }

  /** Writes the run as it stands; finishes it when every case is done. */
  private async settle(run: Running): Promise<void> {
    const done = run.row.cases.every(isDone);
    const status = done ? (run.row.cases.some((c) => c.status === 'failed' || c.status === 'error') ? 'failed' : 'passed') : 'running';
    await this.repo.saveRun(run.row.id, status, run.row.cases);
    run.row = { ...run.row, status, finished_at: done ? new Date() : null };
    if (done) {
      this.running.delete(run.row.id);
      this.deps.log.info({ runId: run.row.id, status, cases: run.row.cases.length }, 'template test run finished');
    }
  }

  private async judge(result: CaseResult, lead: WatchedLead, body: TestCaseBody): Promise<void> {
    const meta = lead.meta_data ?? {};
    const transcript = arrayOf<{ role: string; content: string; node?: string; at_ms?: number }>(meta.transcription);
    const functionCalls = arrayOf<CallEvidence['functionCalls'][number]>(meta.function_calls);
    const evidence: CallEvidence = {
      outcome: lead.outcome,
      transcript,
      nodePath: arrayOf<string>(meta.node_traversal),
      functionCalls,
      analysisFields: (meta.analysis as { fields?: Record<string, unknown> } | undefined)?.fields,
      turnLatencyMs: arrayOf<number>(meta.turn_latency_ms),
    };
    Object.assign(result, {
      outcome: lead.outcome,
      call_id: lead.call_id,
      transcript,
      node_path: evidence.nodePath,
      function_calls: functionCalls.map((f) => ({ name: f.name, node: f.node, arguments: f.arguments })),
      turn_latency_ms: evidence.turnLatencyMs,
      duration_seconds: lead.duration_seconds,
      cost: lead.cost === null ? null : Number(lead.cost),
      recording_url: lead.recording_url && lead.call_id ? `${this.deps.publicBase}/leads/recording/${encodeURIComponent(lead.call_id)}` : null,
    });
    const errors = arrayOf<string>(meta.errors);
    if (transcript.length === 0 && lead.outcome && ['no_answer', 'busy', 'failed', 'error', 'worker_lost', 'aborted'].includes(lead.outcome)) {
      result.error = `the call ended ${lead.outcome}${errors.length ? `: ${errors.join('; ')}` : ''}`;
    } else if (errors.length > 0) {
      result.error = `the conversation reported: ${errors.join('; ')}`;
    }
    result.expectations = await judgeCall(body.expectations, evidence, meta.agent === 'greeter' ? undefined : this.deps.judge);
    result.status = result.expectations.some((e) => e.passed === false) || (result.error !== null && transcript.length === 0) ? 'failed' : 'passed';
  }

  /** Stops watching; runs still going are marked interrupted (their calls end as any call does). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const ids = [...this.running.keys()];
    this.running.clear();
    await this.repo.interruptRunning(ids).catch((err: unknown) => this.deps.log.warn({ err, runs: ids }, 'could not mark test runs interrupted'));
  }
}

/** A test lead dials the sandbox line at once, any hour, once, with nothing of the configuration in the way. */
function testOverride(provider: string): Record<string, unknown> {
  return {
    calling_provider: provider,
    call_start_time: '00:00',
    call_end_time: '00:00',
    initial_offset: 0,
    max_retry: 0,
    pre_checks: [],
    rate_limit_enabled: false,
    legal_hours: [],
    dnc_lists: [],
    enforce_blacklist: false,
  };
}

function isDone(c: CaseResult): boolean {
  return c.status === 'passed' || c.status === 'failed' || c.status === 'error' || c.status === 'not_runnable';
}


function arrayOf<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}


function duplicateName(err: unknown, name: string): AppError | undefined {
  return isUniqueViolation(err) ? conflict(`The template already has a test case named ${JSON.stringify(name)}`, 'duplicate_test_case') : undefined;
}
