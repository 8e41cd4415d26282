#!/usr/bin/env node
/**
 * `relais <command>`: the one command line. Each subcommand is a composition root: it reads the
 * environment (config/env.ts), builds what it needs, runs, and shuts down cleanly on SIGTERM/SIGINT.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerProcessCommands } from './commands/processes.js';
import { registerShopCommands } from './commands/shops.js';
import { registerEmulatorCommands } from './commands/emulators.js';
import { registerAddressCommands } from './commands/addresses.js';
import { registerOrderCommands } from './commands/orders.js';
import { registerOperationCommands } from './commands/operations.js';
import { registerReconcileCommands } from './commands/reconcile.js';
import { baseOptions } from './commands/shared.js';
import { profileCommand } from './commands/profile.js';

/** package.json's version: two levels up from src/main (tsx), three from dist/src/main (the build). */
function packageVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'relais' && pkg.version) return pkg.version;
    } catch {
      // not at this level
    }
  }
  return 'unknown';
}

const program = new Command()
  .name('relais')
  .description(
    'Connects Shopify and WooCommerce shops to a last-mile delivery and cash-on-delivery service (XOF zone).',
  )
  .version(
    `relais ${packageVersion()} (Node ${process.versions.node})`,
    '-V, --version',
    'print the version of Relais and of Node',
  );

registerProcessCommands(program);
registerShopCommands(program);
registerEmulatorCommands(program);
registerAddressCommands(program);
registerOrderCommands(program);
registerOperationCommands(program);
registerReconcileCommands(program);
program.addCommand(profileCommand(baseOptions)); // relais profile learn

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`relais: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
