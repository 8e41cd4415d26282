/** Held orders: relais held, replay, and alias (teach a spelling, then replay what it frees). */
import { Command } from 'commander';
import { allHeldOrders } from '../../ledger/order-ledger.js';
import { NeighbourhoodResolver } from '../../geo/resolver.js';
import { replayOrder, replayOutcome } from '../../orders/intake/replay.js';
import { baseOptions, withQuietRuntime } from './shared.js';

export function registerOrderCommands(program: Command): void {
  heldCommand(program);
  replayCommand(program);
  aliasCommand(program);
}

function heldCommand(program: Command): void {
  program
    .command('held')
    .description('List held orders with the reason and what to do')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      await withQuietRuntime(await baseOptions(), async (runtime) => {
        const held = await allHeldOrders(runtime.ledger);
        if (options.json) {
          process.stdout.write(
            `${JSON.stringify(
              held.map((r) => ({
                externalOrderId: r.meta.externalOrderId,
                shop: r.meta.shopId,
                order: r.meta.orderName,
                code: r.hold?.code,
                reason: r.hold?.message,
                since: r.hold?.at,
              })),
              null,
              2,
            )}\n`,
          );
        } else if (held.length === 0) {
          process.stdout.write('No held orders.\n');
        } else {
          for (const r of held) {
            process.stdout.write(
              `${r.meta.externalOrderId}  ${r.meta.orderName}  [${r.hold?.code ?? '?'}] since ${r.hold?.at ?? '?'}\n    ${r.hold?.message ?? ''}\n`,
            );
          }
          process.stdout.write(
            `\n${held.length} held. Fix the cause, then: relais replay <externalOrderId> (or --all)\n`,
          );
        }
      });
    });
}

function replayCommand(program: Command): void {
  program
    .command('replay')
    .description('Replay held orders after fixing their cause (never creates a duplicate shipment)')
    .argument('[externalOrderIds...]', 'orders to replay')
    .option('--all', 'replay every held order')
    .option('--no-wait', 'only queue the replay; do not wait to say whether the order was dispatched or held again')
    .option(
      '--wait-ms <ms>',
      'how long to wait for a running worker to decide each order',
      (v) => Number.parseInt(v, 10),
      30_000,
    )
    .action(async (ids: string[], options: { all?: boolean; wait: boolean; waitMs: number }) => {
      await withQuietRuntime(await baseOptions(), async (runtime) => {
        await Promise.all(runtime.queues.all().map((q) => q.waitUntilReady()));
        const targets = options.all ? (await allHeldOrders(runtime.ledger)).map((r) => r.meta.externalOrderId) : ids;
        if (targets.length === 0) process.stdout.write('Nothing to replay.\n');
        for (const id of targets) {
          const result = await replayOrder(runtime, id);
          if (!result.ok) {
            process.stdout.write(`not replayed ${id}: ${result.why}\n`);
            process.exitCode = 1;
            continue;
          }
          if (!options.wait) {
            process.stdout.write(`replay queued ${id}\n`);
            continue;
          }
          // Say what happened, not only that a job was queued: a replay whose cause is not fixed is held again.
          const outcome = await replayOutcome(runtime, result, { timeoutMs: options.waitMs });
          if (outcome.kind === 'moved_on') {
            process.stdout.write(
              `replayed ${id}: ${outcome.state === 'waiting' ? "waiting (the shop's policy says not yet)" : `dispatched, now ${outcome.state}`}\n`,
            );
          } else if (outcome.kind === 'held_again') {
            process.stdout.write(`held again ${id} [${outcome.code}]: ${outcome.message}\n`);
            process.exitCode = 1;
          } else {
            process.stdout.write(
              `replay queued ${id}, still ${outcome.state} after ${Math.round(options.waitMs / 1000)} s: is relais worker running? (relais held shows it if it is held again)\n`,
            );
            process.exitCode = 1;
          }
        }
      });
    });
}

function aliasCommand(program: Command): void {
  program
    .command('alias')
    .description("Manage a shop's neighbourhood aliases (take effect at once for every worker)")
    .argument('<action>', 'add | remove | list')
    .argument('<shopId>', 'the shop id in the registry')
    .argument('[text]', 'the words customers write, e.g. "Pyrotechnie"')
    .argument('[neighbourhood]', 'the gazetteer neighbourhood they mean, e.g. "Sacré-Cœur"')
    .action(async (action: string, shopId: string, text: string | undefined, neighbourhood: string | undefined) => {
      const base = await baseOptions();
      if (!base.shops.get(shopId)) throw new Error(`no shop "${shopId}" in ${base.env.RELAIS_SHOPS_FILE}`);
      await withQuietRuntime(base, async (runtime) => {
        if (action === 'add') {
          if (!text || !neighbourhood) throw new Error('usage: relais alias add <shopId> "<text>" "<neighbourhood>"');
          const check = NeighbourhoodResolver.load().resolve({
            country: base.shops.get(shopId)?.country,
            fields: { city: neighbourhood },
          });
          if (!check.ok) throw new Error(`"${neighbourhood}" is not a known neighbourhood: ${check.reason}`);
          await runtime.aliases.add(shopId, text, check.neighbourhood.name);
          process.stdout.write(
            `alias added: "${text}" → ${check.neighbourhood.name}. Replay held orders with: relais replay --all\n`,
          );
        } else if (action === 'remove') {
          if (!text) throw new Error('usage: relais alias remove <shopId> "<text>"');
          process.stdout.write((await runtime.aliases.remove(shopId, text)) ? 'alias removed\n' : 'no such alias\n');
        } else if (action === 'list') {
          const shop = base.shops.get(shopId)!;
          const all = { ...shop.policy.neighbourhoodAliases, ...(await runtime.aliases.list(shopId)) };
          for (const [from, to] of Object.entries(all)) process.stdout.write(`${from} → ${to}\n`);
        } else {
          throw new Error(`unknown action "${action}": add, remove or list`);
        }
      });
    });
}
