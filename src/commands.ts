import type { Command } from 'commander';

/** Feature commands of the CLI (e.g. `dialer leads import`), each from its feature's door. */
export function registerCommands(program: Command): void {
  void program;
}
