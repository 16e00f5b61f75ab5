import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { Id, IdParams, problems } from '../http/index.js';
import { iso, isoRequired } from '../lib/time.js';
import type { TestCaseRow, TestRunRow } from './repository.js';
import { RunBody, TestCase, TestCaseBody, TestCasePatch, TestRun } from './schema.js';
import type { TemplateTestsService } from './service.js';

const TAGS = ['template tests'];
const CaseParams = Type.Object({ id: Id, test_id: Id });

function caseView(r: TestCaseRow) {
  return { ...r, created_at: isoRequired(r.created_at), updated_at: isoRequired(r.updated_at) };
}

export function runView(r: TestRunRow) {
  const passed = r.cases.filter((c) => c.status === 'passed').length;
  return {
    id: r.id,
    template_id: r.template_id,
    status: r.status,
    agent: r.agent,
    note: r.note,
    passed,
    // Not runnable cases are neither: the run says why in each.
    failed: r.cases.filter((c) => c.status === 'failed' || c.status === 'error').length,
    total: r.cases.length,
    cases: r.cases,
    created_at: isoRequired(r.created_at),
    finished_at: iso(r.finished_at),
  };
}

/** Test cases of a template, their runs. */
export function registerTemplateTestRoutes(app: App, tests: TemplateTestsService): void {
  app.get('/templates/:id/tests', {
    config: { permission: ['templates', 'read'] },
    schema: { tags: TAGS, summary: "The template's test cases", params: IdParams, response: { 200: Type.Object({ data: Type.Array(TestCase) }), ...problems(401, 403, 404) } },
    handler: async (request) => ({ data: (await tests.list(request.principal, request.params.id)).map(caseView) }),
  });

  app.post('/templates/:id/tests', {
    config: { permission: ['templates', 'write'] },
    schema: {
      tags: TAGS,
      summary: 'Add a test case: a scripted callee, the lead\'s variables and the expectations its call must meet',
      description: '404: no such template in scope. 409: a case of that name exists. 422: an expectation of an unknown kind, or without the fields its kind needs.',
      params: IdParams,
      body: TestCaseBody,
      response: { 201: TestCase, ...problems(400, 401, 403, 404, 409, 422) },
    },
    handler: async (request, reply) => reply.code(201).send(caseView(await tests.create(request.principal, request.params.id, request.body))),
  });

  app.patch('/templates/:id/tests/:test_id', {
    config: { permission: ['templates', 'write'] },
    schema: {
      tags: TAGS,
      summary: 'Change a test case (the fields sent replace the stored ones)',
      params: CaseParams,
      body: TestCasePatch,
      response: { 200: TestCase, ...problems(400, 401, 403, 404, 409, 422) },
    },
    handler: async (request) => caseView(await tests.update(request.principal, request.params.id, request.params.test_id, request.body)),
  });

  app.delete('/templates/:id/tests/:test_id', {
    config: { permission: ['templates', 'write'] },
    schema: { tags: TAGS, summary: 'Delete a test case', params: CaseParams, response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...problems(401, 403, 404) } },
    handler: async (request) => {
      await tests.delete(request.principal, request.params.id, request.params.test_id);
      return { id: request.params.test_id, deleted: true as const };
    },
  });

  app.post('/templates/:id/tests/run', {
    config: { permission: ['templates', 'write'] },
    schema: {
      tags: TAGS,
      summary: 'Run the test suite: every case (or those named, or those sent) played at once as calls to the sandbox line\'s simulated customer',
      description:
        'Answers at once with the run; GET /test-runs/{id} follows it. Each case is a test lead (TELEPHONY_TEST, never counted in analytics) dialled through a sandbox provider; ' +
        'its callee speaks with the local voice, Dialer hears it through its speech-to-text and answers with the template\'s flow. ' +
        '404: no such template in scope. 409: no test cases, or the sandbox line is off. 422: a sent case is invalid, or a test_id is not the template\'s.',
      params: IdParams,
      body: RunBody,
      response: { 202: TestRun, ...problems(400, 401, 403, 404, 409, 422) },
    },
    handler: async (request, reply) => reply.code(202).send(runView(await tests.run(request.principal, request.params.id, request.body))),
  });

  app.get('/templates/:id/test-runs', {
    config: { permission: ['templates', 'read'] },
    schema: {
      tags: TAGS,
      summary: "The template's latest test runs, newest first",
      params: IdParams,
      querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })) }),
      response: { 200: Type.Object({ data: Type.Array(TestRun) }), ...problems(400, 401, 403, 404) },
    },
    handler: async (request) => ({ data: (await tests.runs(request.principal, request.params.id, request.query.limit ?? 10)).map(runView) }),
  });

  app.get('/test-runs/:id', {
    config: { permission: ['templates', 'read'] },
    schema: {
      tags: TAGS,
      summary: 'A test run: each case\'s status, the verdict and evidence of each expectation, its transcript, node path, latencies, cost and recording',
      params: IdParams,
      response: { 200: TestRun, ...problems(401, 403, 404) },
    },
    handler: async (request) => runView(await tests.getRun(request.principal, request.params.id)),
  });
}
