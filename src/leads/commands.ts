import fs from 'node:fs';
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { API_PREFIX } from '../http/index.js';
import { ConfigError, loadConfig } from '../config.js';
import { EXECUTION_MODES } from './schema.js';
import { importCsv, ImportError, type ImportSummary } from './import.js';

interface ImportFlags {
  template: string;
  resellerId?: string;
  merchantId?: string;
  executionMode?: string;
  campaign?: string;
  url?: string;
  token?: string;
  allowMissingPhone?: boolean;
  rejects?: string;
  skipDuplicates?: boolean;
  dedupeDays?: string;
}

/** Days back a number counts as called when --skip-duplicates is given without --dedupe-days. */
const DEFAULT_DEDUPE_DAYS = 30;

/** Exit status when the import ran but some rows were rejected. */
export const EXIT_SOME_REJECTED = 2;

/** CLI commands of the leads feature: `dialer leads import`. */
export function registerLeadsCommands(program: Command): void {
  program
    .command('leads')
    .description('Work with leads')
    .command('import')
    .description('Push every row of a CSV file as a lead, through POST /leads/batch of a running Dialer')
    .argument('<file>', 'CSV with a header row; customer_mobile_number and the template variables as columns')
    .requiredOption('--template <name>', 'template name')
    .option('--reseller-id <id>', 'reseller of the leads (or a reseller_id column)')
    .option('--merchant-id <id>', 'merchant of the leads (or a merchant_id column)')
    .option('--execution-mode <mode>', `one of ${EXECUTION_MODES.join(', ')} (default TELEPHONY)`)
    .option('--campaign <id>', 'the campaign the leads join (POST /campaigns); its cap, pace, dates and pause apply to them')
    .option('--url <url>', 'API base URL (default http://HOST:PORT from the environment, with the API prefix)')
    .option('--token <token>', 'bearer token: an s2s token or a login JWT (default: DIALER_TOKEN)')
    .option('--allow-missing-phone', 'push rows even though the file has no customer_mobile_number column')
    .option('--skip-duplicates', `leave out numbers repeated in the file, still queued in the campaign, or called in the last --dedupe-days days (default ${DEFAULT_DEDUPE_DAYS})`)
    .option('--dedupe-days <n>', 'numbers the reseller dialled within this many days count as duplicates (0: not checked); reported, and skipped with --skip-duplicates')
    .option('--rejects <file>', 'where to write rejected rows (default: <file>.rejected.csv, only when some are)')
    .addHelpText(
      'after',
      '\nColumns request_id, reseller_id, merchant_id, execution_mode, reporting_webhook_url and campaign_id set those fields;' +
        '\nevery other non-empty cell goes into payload. request_id defaults to <file name>:<line>.' +
        `\nExit status: 0 all rows queued, ${EXIT_SOME_REJECTED} some rows rejected (see the summary), 1 the import failed.`,
    )
    .action(async (file: string, flags: ImportFlags) => {
      const token = flags.token ?? loadConfig().cliToken;
      if (!token) throw new ConfigError('a token is needed: pass --token or set DIALER_TOKEN (POST /s2s-token issues one)');
      if (flags.executionMode && !(EXECUTION_MODES as readonly string[]).includes(flags.executionMode)) {
        throw new ConfigError(`--execution-mode must be one of ${EXECUTION_MODES.join(', ')}`);
      }
      const dedupeDays = flags.dedupeDays === undefined ? (flags.skipDuplicates ? DEFAULT_DEDUPE_DAYS : undefined) : Number(flags.dedupeDays);
      if (dedupeDays !== undefined && (!Number.isInteger(dedupeDays) || dedupeDays < 0 || dedupeDays > 365)) throw new ConfigError('--dedupe-days must be a whole number from 0 to 365');
      const apiUrl = flags.url ?? defaultUrl();
      const bar = process.stderr.isTTY
        ? new cliProgress.SingleBar(
            { format: 'Importing {bar} {percentage}% | {rows} rows: {queued} queued, {rejected} rejected | ETA {eta_formatted}', stream: process.stderr },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
      bar?.start(1, 0, { rows: 0, queued: 0, rejected: 0 });
      let summary: ImportSummary;
      try {
        summary = await importCsv({
          file,
          template: flags.template,
          apiUrl,
          token,
          ...(flags.resellerId ? { resellerId: flags.resellerId } : {}),
          ...(flags.merchantId ? { merchantId: flags.merchantId } : {}),
          ...(flags.executionMode ? { executionMode: flags.executionMode } : {}),
          ...(flags.campaign ? { campaignId: flags.campaign } : {}),
          ...(flags.allowMissingPhone ? { allowMissingPhone: true } : {}),
          ...(flags.skipDuplicates ? { skipDuplicates: true } : {}),
          ...(dedupeDays ? { dedupeDays } : {}),
          onProgress: (p) => {
            bar?.setTotal(Math.max(1, p.totalBytes));
            bar?.update(p.bytes, { rows: p.rows, queued: p.queued, rejected: p.rejected });
          },
        });
      } catch (err) {
        bar?.stop();
        if (err instanceof ImportError) throw new ConfigError(`import failed: ${err.message}`);
        throw err;
      }
      bar?.stop();
      process.stdout.write(report(file, summary, flags.rejects));
      if (summary.rejected.length > 0) process.exitCode = EXIT_SOME_REJECTED;
    });
}

function defaultUrl(): string {
  const config = loadConfig();
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}${API_PREFIX}`;
}

/** The final summary: counts, rejection reasons grouped with example lines, and the rejects file. */
function report(file: string, s: ImportSummary, rejectsPath?: string): string {
  const rate = s.seconds > 0 ? Math.round(s.rows / s.seconds) : s.rows;
  const skipped = s.skipped > 0 ? `, ${s.skipped} duplicates skipped` : '';
  let out = `Imported ${file}: ${s.rows} rows, ${s.queued} queued${skipped}, ${s.rejected.length} rejected in ${s.seconds.toFixed(1)} s (${rate} rows/s).\n`;
  const d = s.duplicates;
  if (d.in_file + d.in_campaign + d.recent_call > 0) {
    out += `Duplicates${s.skipped > 0 ? ' (skipped)' : ' (queued: pass --skip-duplicates to leave them out)'}: ${d.in_file} repeated in the file, ${d.in_campaign} already queued in the campaign, ${d.recent_call} called recently.\n`;
  }
  if (s.rejected.length === 0) return out;
  const reasons = new Map<string, number[]>();
  for (const r of s.rejected) {
    const key = `${r.status} ${r.detail}`;
    reasons.set(key, [...(reasons.get(key) ?? []), r.line]);
  }
  out += 'Rejected:\n';
  for (const [reason, lines] of [...reasons].sort((a, b) => b[1].length - a[1].length)) {
    const shown = lines.slice(0, 5).join(', ') + (lines.length > 5 ? `, ... (${lines.length - 5} more)` : '');
    out += `  ${lines.length} x ${reason} (line${lines.length > 1 ? 's' : ''} ${shown})\n`;
  }
  const target = rejectsPath ?? `${file}.rejected.csv`;
  const csv = ['line,status,reason', ...s.rejected.map((r) => `${r.line},${r.status},"${r.detail.replace(/"/g, '""')}"`)].join('\n') + '\n';
  fs.writeFileSync(target, csv);
  out += `Rejected rows with reasons: ${target}\n`;
  return out;
}
