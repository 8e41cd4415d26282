/** Where an order goes: relais resolve and map (the gazetteer and the service map). */
import type { PricedNames } from '../../geo/types.js';
import { serviceId } from '../../orders/dispatch/tariff-guard.js';
import { describeCandidates } from '../../orders/dispatch/name-choice.js';
import { learnMap, mapLearnDeps, namesToLearn } from '../../ops/map-learn.js';
import { describeCoverage, mapCoverage } from '../../ops/map-report.js';
import { candidatesOf } from '../../geo/candidates.js';
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { explainResolution, NeighbourhoodResolver } from '../../geo/resolver.js';
import { baseOptions, withQuietRuntime } from './shared.js';

export function registerAddressCommands(program: Command): void {
  resolveCommand(program);
  mapCommand(program);
}

function resolveCommand(program: Command): void {
  program
    .command('resolve')
    .description('Show how an address resolves to a neighbourhood, and why')
    .argument('<address>', 'the address as the customer wrote it')
    .option('--country <code>', 'ISO country code (SN, CI, TG, BJ, ML, BF, NE)')
    .option('--alias <text=neighbourhood...>', 'a merchant alias to try, e.g. "Pyrotechnie=Sacré-Cœur"')
    .option(
      '--shop <id>',
      "use this shop's aliases, and list the candidate names with what its delivery service is known to price",
    )
    .action(async (address: string, options: { country?: string; alias?: string[]; shop?: string }) => {
      const aliases = Object.fromEntries((options.alias ?? []).map((a) => a.split('=', 2) as [string, string]));
      let country = options.country;
      let pricing: PricedNames | undefined;
      let candidatesReport: string[] = [];
      const resolver = NeighbourhoodResolver.load();
      if (options.shop) {
        const base = await baseOptions();
        const shop = base.shops.get(options.shop);
        if (!shop) throw new Error(`no shop "${options.shop}" in the shop registry`);
        country ??= shop.country;
        await withQuietRuntime(base, async (runtime) => {
          const given = { ...aliases }; // the --alias ones win over the shop's
          Object.assign(aliases, await runtime.aliases.forShop(shop), given);
          const first = resolver.resolve({ country, fields: { address1: address }, aliases });
          if (first.ok) {
            const candidates = candidatesOf(resolver, first, aliases);
            const known = await runtime.serviceMap.lookup(
              serviceId(shop),
              candidates.map((c) => c.name),
            );
            pricing = { isPriced: (name) => known.get(name)?.priced };
            candidatesReport = describeCandidates(candidates, known, runtime.now());
          }
        });
      }
      const input = { country, fields: { address1: address }, aliases, ...(pricing ? { pricing } : {}) };
      const resolution = resolver.resolve(input);
      process.stdout.write(`${[explainResolution(input, resolution), ...candidatesReport].join('\n')}\n`);
      process.exitCode = resolution.ok ? 0 : 2;
    });
}

function mapCommand(program: Command): void {
  program
    .command('map')
    .description("The shop's delivery service map: which names it prices (learn: ask it for every gazetteer place)")
    .argument('<action>', 'learn | show')
    .requiredOption('--shop <id>', 'the shop whose service is asked, from its pickup')
    .option('--limit <n>', 'learn: ask at most this many names in this run', (v) => Number.parseInt(v, 10))
    .option(
      '--names <file>',
      "learn: also ask for the names in this file, one a line (the service's own list of places, spelled its way), first",
    )
    .action(async (action: string, options: { shop: string; limit?: number; names?: string }) => {
      if (action !== 'learn' && action !== 'show') throw new Error(`unknown action "${action}": learn or show`);
      const base = await baseOptions();
      const shop = base.shops.get(options.shop);
      if (!shop) throw new Error(`no shop "${options.shop}" in the shop registry`);
      const resolver = NeighbourhoodResolver.load();
      await withQuietRuntime(base, async (runtime) => {
        if (action === 'learn') {
          const report = await learnMap(
            {
              ...mapLearnDeps(runtime, base.prefix, shop, resolver),
              onProgress: (p) => {
                if (p.asked % 50 === 0) process.stderr.write(`asked ${p.asked} of ${p.toAsk}\n`);
              },
            },
            {
              ...(options.limit === undefined ? {} : { limit: options.limit }),
              // The service's own spellings first, then every gazetteer place's: the map then knows both.
              ...(options.names === undefined
                ? {}
                : {
                    names: [...new Set([...namesInFile(options.names), ...namesToLearn({ resolver }, shop.country)])],
                  }),
            },
          );
          process.stdout.write(
            `${[
              `Fallback tariff (the city name '${report.city}'): ${report.fallbackXof.createQuote} XOF by createQuote${report.fallbackXof.simulatePrice === undefined ? '' : `, ${report.fallbackXof.simulatePrice} XOF by simulatePrice`}`,
              `Asked with ${report.call}: ${report.why}`,
              `Asked ${report.asked} name(s): ${report.priced} priced, ${report.atFallback} at the fallback, ${report.failed} refused; ${report.alreadyKnown} already known`,
            ].join('\n')}\n`,
          );
        }
        const coverage = mapCoverage(
          resolver,
          shop.country,
          await runtime.serviceMap.all(serviceId(shop)),
          runtime.now(),
        );
        process.stdout.write(`${describeCoverage(coverage, shop.dispatch)}\n`);
      });
    });
}

/** The names of a list file: one a line, blank lines and `#` comments skipped. */
function namesInFile(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
