import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { ConfigError, loadConfig } from '../config.js';
import { openAndMigrate } from '../db/index.js';
import { seedDemoLeads } from './demo.js';

function positiveInteger(name: string, max: number) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
    const value = Number(raw.trim());
    if (value < 1 || value > max) throw new ConfigError(`${name} must be between 1 and ${max}, got ${value}`);
    return value;
  };
}

/** `dialer demo seed`: realistic finished leads for the dashboard and the benchmarks. */
export function registerAnalyticsCommands(program: Command): void {
  program
    .command('demo')
    .description('Demo data')
    .command('seed')
    .description('Write realistic finished leads (outcomes, durations, attempts, providers, sentiments, call times) into the configured database')
    .requiredOption('--leads <n>', 'how many leads', positiveInteger('--leads', 100_000_000))
    .option('--reseller-id <id>', 'reseller to write them in (default: a "Demo Reseller", created when missing)')
    .option('--merchant-id <id>', 'merchant to write them in (default: the reseller\'s merchants)')
    .option('--days <n>', 'spread call times over this many days before today', positiveInteger('--days', 3650), 90)
    .option('--seed <n>', 'random seed, for repeatable data', positiveInteger('--seed', 2 ** 31), 1)
    .action(async (opts: { leads: number; resellerId?: string; merchantId?: string; days: number; seed: number }) => {
      const config = loadConfig();
      const db = await openAndMigrate(config);
      const bar = process.stderr.isTTY
        ? new cliProgress.SingleBar({ format: 'Seeding {bar} {value}/{total} leads ({percentage}%) ETA {eta_formatted}' }, cliProgress.Presets.shades_classic)
        : undefined;
      const started = Date.now();
      try {
        bar?.start(opts.leads, 0);
        const result = await seedDemoLeads(db, {
          leads: opts.leads,
          days: opts.days,
          seed: opts.seed,
          ...(opts.resellerId === undefined ? {} : { resellerId: opts.resellerId }),
          ...(opts.merchantId === undefined ? {} : { merchantId: opts.merchantId }),
          onProgress: (written) => bar?.update(written),
        });
        bar?.stop();
        const seconds = (Date.now() - started) / 1000;
        process.stdout.write(
          `Seeded ${result.written} finished leads over ${opts.days} days into reseller ${result.resellerId} ` +
            `(${result.merchantIds.filter((m) => m !== null).length} merchants, ${result.templates.length} templates; ${db.kind}) ` +
            `in ${seconds.toFixed(1)} s (${Math.round(result.written / seconds)} leads/s).\n`,
        );
      } finally {
        bar?.stop();
        await db.close();
      }
    });
}
