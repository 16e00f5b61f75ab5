import type { Command } from 'commander';

/** CLI commands of this feature (being written: see the issue). */
export function registerAnalyticsCommands(program: Command): void {
  void program;
}
