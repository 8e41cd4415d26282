/** Checks an operator runs: relais doctor and probe (src/ops/doctor.ts, src/ops/probe.ts). */
import { Command } from 'commander';
import { rawEnvironment, readEnv } from '../../config/env.js';
import { loadShopRegistry } from '../../shops/shops.js';
import { renderReport, reportJson, runDoctor } from '../../ops/doctor.js';
import { runProbeCommand } from '../../ops/probe-command.js';

export function registerOperationCommands(program: Command): void {
  doctorCommand(program);
  probeCommand(program);
}

function doctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check the configuration, Redis, dispatch keys, shop credentials and webhooks; say plainly what is wrong',
    )
    .option('--fix', 're-register missing webhooks, re-activate disabled ones, register the Shopify carrier service')
    .option('--json', 'print the report as JSON')
    .action(async (options: { fix?: boolean; json?: boolean }) => {
      const report = await runDoctor({ env: rawEnvironment(), fix: options.fix === true });
      // Exit once the report is written (a pipe may be slow); 1 when anything is wrong, so scripts can gate on it.
      process.stdout.write(options.json ? `${reportJson(report)}\n` : renderReport(report), () =>
        process.exit(report.ok ? 0 : 1),
      );
    });
}

function probeCommand(program: Command): void {
  program
    .command('probe')
    .description(
      "Safe first contact with a shop's live dispatch key: quotes and reads only (never creates, readies, cancels or disputes); saves the exchanges and a draft wire profile",
    )
    .requiredOption('--shop <id>', 'the shop in the registry whose dispatch key and profile to check')
    .option('--shipment <id>', 'also read this shipment (shp_...)')
    .option('--external-order <id>', 'also read the shipment of this external order id')
    .option('--tracking-code <code>', 'also read this public tracking code')
    .option(
      '--out <dir>',
      'where to write exchanges.json, learned.json and draft-profile.json (default relais-probe/<shop>-<time>)',
    )
    .action(
      async (options: {
        shop: string;
        shipment?: string;
        externalOrder?: string;
        trackingCode?: string;
        out?: string;
      }) => {
        const env = readEnv();
        process.exitCode = await runProbeCommand(loadShopRegistry(env.RELAIS_SHOPS_FILE), options, {
          stdout: process.stdout,
          stderr: process.stderr,
        });
      },
    );
}
