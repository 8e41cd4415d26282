/** Orders against shipments afterwards (src/orders/reconcile, src/orders/disputes, src/ops/stale.ts): relais reconcile, dispute and stale. */
import { Command } from 'commander';
import { runDisputeList, runDisputeOpen } from '../../orders/disputes/command.js';
import { runReconcileCommand, type ReconcileCommandOptions } from '../../orders/reconcile/command.js';
import { runStaleCommand } from '../../ops/stale.js';
import { userInfo } from 'node:os';
import { baseOptions, processOutput, withQuietRuntime } from './shared.js';

export function registerReconcileCommands(program: Command): void {
  reconcileCommand(program);
  disputeCommand(program);
  staleCommand(program);
}

function reconcileCommand(program: Command): void {
  program
    .command('reconcile')
    .description(
      'Compare shop orders with shipments by external order id: missed webhooks, unready shipments, drift, COD mismatches, cancellations, disputes; figures per day',
    )
    .option('--shop <id>', 'only this shop (repeat for several)', (value: string, previous: string[] = []) => [
      ...previous,
      value,
    ])
    .option('--since <date>', 'orders created or changed from this day (YYYY-MM-DD) or instant; default 3 days ago')
    .option(
      '--until <date>',
      'orders created before this instant, or up to and including this day (YYYY-MM-DD); default now',
    )
    .option('--json', 'print the report as JSON')
    .option('--csv', 'print findings and figures per day as CSV')
    .option(
      '--repair',
      'repair what Relais can (replay missed orders, mark ready, sync, cancel); a running worker processes the jobs',
    )
    .action(async (options: ReconcileCommandOptions) => {
      process.exitCode = await withQuietRuntime(await baseOptions(), (runtime) =>
        runReconcileCommand(runtime, options, processOutput()),
      );
    });
}

function disputeCommand(program: Command): void {
  const dispute = program
    .command('dispute')
    .description(
      "Open and list disputes (claims) on an order's shipment; decided outcomes stay in the order's history",
    );
  dispute
    .command('open')
    .argument('<externalOrderId>', 'the order, e.g. dakar-mode:5923711254')
    .requiredOption('--reason <text>', 'what happened: damaged, lost, never delivered...')
    .requiredOption('--description <text>', 'a free description')
    .requiredOption('--claimant-id <id>', "who reports, on the merchant's side")
    .option('--claimant-type <type>', 'role of the reporter', 'seller')
    .option('--json', 'print the claim as JSON')
    .action(
      async (
        externalOrderId: string,
        options: { reason: string; description: string; claimantId: string; claimantType?: string; json?: boolean },
      ) => {
        process.exitCode = await withQuietRuntime(await baseOptions(), (runtime) =>
          runDisputeOpen(runtime, externalOrderId, options, processOutput()),
        );
      },
    );
  dispute
    .command('list')
    .argument('<externalOrderId>', 'the order, e.g. dakar-mode:5923711254')
    .option('--json', 'print the claims as JSON')
    .action(async (externalOrderId: string, options: { json?: boolean }) => {
      process.exitCode = await withQuietRuntime(await baseOptions(), (runtime) =>
        runDisputeList(runtime, externalOrderId, options, processOutput()),
      );
    });
}

function staleCommand(program: Command): void {
  program
    .command('stale')
    .description(
      'List orders with no final state after RELAIS_STALE_AFTER_DAYS days; --close ends one in Relais only (see src/ops/stale.ts)',
    )
    .option('--days <n>', 'report orders first seen more than this many days ago (default RELAIS_STALE_AFTER_DAYS)')
    .option('--shop <shopId>', "only this shop's orders")
    .option('--json', 'print JSON')
    .option(
      '--close <externalOrderIds...>',
      'close these stale orders: state cancelled in Relais, nothing sent to the service or the shop',
    )
    .option('--reason <text>', 'why they are closed (required with --close; written on the timeline)')
    .option('--by <name>', 'who closes them', userInfo().username)
    .action(
      async (options: {
        days?: string;
        shop?: string;
        json?: boolean;
        close?: string[];
        reason?: string;
        by: string;
      }) => {
        const base = await baseOptions();
        const days = options.days === undefined ? base.env.RELAIS_STALE_AFTER_DAYS : Number(options.days);
        if (!Number.isSafeInteger(days) || days < 0)
          throw new Error(`--days must be a whole number of days, not "${String(options.days)}"`);
        process.exitCode = await withQuietRuntime(base, (runtime) =>
          runStaleCommand(runtime.ledger, { ...options, days, now: runtime.now() }, (text) =>
            process.stdout.write(text),
          ),
        );
      },
    );
}
