import type { Command } from 'commander';
import { registerLeadsCommands } from './leads/commands.js';
import { registerAnalyticsCommands } from './analytics/commands.js';
import { registerTemplateTestCommands } from './template-tests/commands.js';

/** Feature commands of the CLI (`dialer leads import`, `dialer demo seed`), each from its feature. */
export function registerCommands(program: Command): void {
  registerLeadsCommands(program);
  registerAnalyticsCommands(program);
  registerTemplateTestCommands(program);
}
