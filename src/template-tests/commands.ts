/**
 * `dialer test`: runs a template's test suite on a running Dialer (POST /templates/{id}/tests/run),
 * prints a line per case, writes JUnit XML, and exits 1 when a case did not pass, so a deploy can
 * be gated on it.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../config.js';
import { API_PREFIX } from '../http/index.js';
import type { CaseResult, TestRun } from './schema.js';

interface TestFlags {
  template: string;
  resellerId: string;
  suite?: string;
  junit?: string;
  url?: string;
  token?: string;
  timeout: string;
}

export function registerTemplateTestCommands(program: Command): void {
  program
    .command('test')
    .description("Run a template's test suite on a running Dialer: each case a call to the sandbox line's simulated customer, judged against its expectations")
    .requiredOption('--template <name>', 'template name')
    .requiredOption('--reseller-id <id>', "the template's reseller")
    .option('--suite <file>', 'JSON file of test cases (an array, or {"cases": [...]}) to run instead of the stored ones')
    .option('--junit <file>', 'write the results as JUnit XML here')
    .option('--url <url>', 'API base URL (default http://HOST:PORT from the environment, with the API prefix)')
    .option('--token <token>', 'bearer token: an s2s token or a login JWT (default: DIALER_TOKEN)')
    .option('--timeout <seconds>', 'give up waiting for the run after this long', '900')
    .addHelpText('after', '\nExit status: 0 every case passed, 1 a case failed or the run could not be made.')
    .action(async (flags: TestFlags) => {
      const config = loadConfig();
      const token = flags.token ?? config.cliToken;
      if (!token) throw new ConfigError('a token is needed: pass --token or set DIALER_TOKEN (POST /s2s-token issues one)');
      const timeoutSeconds = Number(flags.timeout);
      if (!(timeoutSeconds > 0)) throw new ConfigError('--timeout must be a number of seconds');
      const cases = flags.suite === undefined ? undefined : readSuite(flags.suite);
      const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
      const base = (flags.url ?? `http://${host.includes(':') ? `[${host}]` : host}:${config.port}${API_PREFIX}`).replace(/\/+$/, '');
      const api = async (method: string, path: string, body?: unknown) => {
        let res: Response;
        try {
          res = await fetch(`${base}${path}`, {
            method,
            headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
        } catch (err) {
          throw new ConfigError(`cannot reach Dialer at ${base}: ${(err as Error).message}`);
        }
        const json = (await res.json().catch(() => ({}))) as Record<string, any>;
        if (!res.ok) {
          const errors = Array.isArray(json.errors) ? ` (${json.errors.map((e: { path: string; message: string }) => `${e.path} ${e.message}`).join('; ')})` : '';
          throw new ConfigError(`${method} ${path} answered ${res.status}: ${json.detail ?? res.statusText}${errors}`);
        }
        return json;
      };

      const found = await api('GET', `/templates?name=${encodeURIComponent(flags.template)}&reseller_id=${encodeURIComponent(flags.resellerId)}`);
      const template = (found.data as Array<{ id: string }>)[0];
      if (!template) throw new ConfigError(`no template named ${JSON.stringify(flags.template)} in reseller ${flags.resellerId}`);
      let run = (await api('POST', `/templates/${template.id}/tests/run`, cases ? { cases } : {})) as TestRun;
      process.stdout.write(`Running ${run.total} case(s) of ${flags.template} (run ${run.id}, agent ${run.agent})\n`);
      if (run.note) process.stdout.write(`Note: ${run.note}\n`);
      const deadline = Date.now() + timeoutSeconds * 1000;
      const printed = new Set<number>();
      for (;;) {
        run.cases.forEach((c, i) => {
          if (printed.has(i) || c.status === 'queued' || c.status === 'calling') return;
          printed.add(i);
          process.stdout.write(caseLine(c));
        });
        if (run.status !== 'running') break;
        if (Date.now() > deadline) throw new ConfigError(`the run ${run.id} did not finish within ${timeoutSeconds} s`);
        await new Promise((r) => setTimeout(r, 1000));
        run = (await api('GET', `/test-runs/${run.id}`)) as TestRun;
      }
      process.stdout.write(`${run.status === 'passed' ? 'PASSED' : 'FAILED'}: ${run.passed} of ${run.total} case(s) passed\n`);
      if (flags.junit) fs.writeFileSync(flags.junit, junit(flags.template, run));
      process.exitCode = run.status === 'passed' ? 0 : 1;
    });
}

function readSuite(file: string): unknown[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`--suite ${file} cannot be read: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`--suite ${file} is not JSON: ${(err as Error).message}`);
  }
  const cases = Array.isArray(parsed) ? parsed : (parsed as { cases?: unknown })?.cases;
  if (!Array.isArray(cases) || cases.length === 0) throw new ConfigError(`--suite ${file} must hold test cases: a JSON array, or an object with a "cases" array`);
  return cases;
}

function caseLine(c: CaseResult): string {
  const figures = [c.duration_seconds !== null ? `${c.duration_seconds} s` : undefined, c.cost !== null ? `cost ${c.cost}` : undefined].filter(Boolean).join(', ');
  const word = { passed: 'PASS', error: 'ERROR', not_runnable: 'NOT RUNNABLE' }[c.status as string] ?? 'FAIL';
  const head = `${word} ${c.name}${figures ? ` (${figures})` : ''}`;
  const why = [c.error, ...c.expectations.filter((e) => e.passed === false).map((e) => `${e.kind}: ${e.detail}`)].filter(Boolean);
  return `${head}${why.length ? `\n${why.map((w) => `    ${w}`).join('\n')}` : ''}\n`;
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** JUnit XML: a testsuite of the template, a testcase per case, a failure (or error) with its reasons. */
export function junit(template: string, run: TestRun): string {
  const failures = run.cases.filter((c) => c.status === 'failed').length;
  const errors = run.cases.filter((c) => c.status === 'error').length;
  const skipped = run.cases.filter((c) => c.status === 'not_runnable').length;
  const time = (c: CaseResult) => (c.duration_seconds ?? 0).toFixed(3);
  const body = run.cases
    .map((c) => {
      const reasons = [c.error, ...c.expectations.filter((e) => e.passed === false).map((e) => `${e.kind}: ${e.detail}`)].filter((r): r is string => Boolean(r));
      const transcript = c.transcript.map((t) => `${t.role}: ${t.content}`).join('\n');
      const inner =
        c.status === 'passed'
          ? ''
          : c.status === 'not_runnable'
            ? `\n      <skipped message="${xml(c.error ?? 'not runnable')}"/>`
            : `\n      <${c.status === 'error' ? 'error' : 'failure'} message="${xml(reasons[0] ?? c.status)}">${xml(reasons.join('\n'))}</${c.status === 'error' ? 'error' : 'failure'}>`;
      const out = transcript ? `\n      <system-out>${xml(transcript)}</system-out>` : '';
      return `    <testcase classname="${xml(template)}" name="${xml(c.name)}" time="${time(c)}">${inner}${out}\n    </testcase>`;
    })
    .join('\n');
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites tests="${run.total}" failures="${failures}" errors="${errors}">\n` +
    `  <testsuite name="${xml(template)}" tests="${run.total}" failures="${failures}" errors="${errors}" skipped="${skipped}" timestamp="${run.created_at}">\n${body}\n  </testsuite>\n</testsuites>\n`
  );
}
