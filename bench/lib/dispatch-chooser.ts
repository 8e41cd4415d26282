/**
 * The dispatch path's own choice of name (issue 24), as a NameChooser for the address eval: the app's
 * candidates (src/geo/candidates.ts candidatesOf), its plan (src/orders/dispatch/name-choice.ts tryOrder) and its
 * bounded walk by price (chooseByPrice), exactly as src/orders/dispatch/priced-dropoff.ts runs them. The priced-name
 * list's price lookup stands in for the service's quotes, and an in-memory service map starts empty and
 * fills over the corpus, in order, as a new shop's map would (what each quote showed, priced or not).
 */
import { FALLBACK_TARIFF_XOF } from '@relais/emulators/dispatch';
import { candidatesOf } from '../../src/geo/candidates.js';
import type { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { withServiceSpellings } from '../../src/geo/service-spellings.js';
import type { NamePrice } from '../../src/ledger/service-map.js';
import { chooseByPrice, finestKnownPriced, freshKnowledge, tryOrder } from '../../src/orders/dispatch/name-choice.js';
import { namesToLearn } from '../../src/ops/map-learn.js';
import type { NameChooser, PriceLookup } from './service-map.js';

/** Every quote the chooser made, for the calls-per-order figures. */
export interface ChooserCalls {
  quotes: number;
}

/**
 * A chooser running the dispatch path's logic. `map` is the service map it reads and fills (empty: a shop
 * whose map was never learned); `calls` counts the quotes it makes.
 */
export function dispatchChooser(
  resolver: Pick<NeighbourhoodResolver, 'resolve' | 'placeNamed' | 'placesOf' | 'isCityRegionOrCountry'>,
  map: Map<string, NamePrice> = new Map(),
  calls: ChooserCalls = { quotes: 0 },
  now: () => Date = () => new Date(),
): NameChooser {
  return async (row, service) => {
    const resolution = resolver.resolve(row.input);
    if (!resolution.ok) return { held: resolution.reason };
    const own = candidatesOf(resolver, resolution, row.input.aliases ?? {});
    const known = freshKnowledge(map, now());
    // As PricedDropoff.plan: the service's own spellings are read only when no name of the place is known priced.
    const pricedNames = [...known.values()].filter((p) => p.priced).map((p) => p.name);
    const candidates = finestKnownPriced(own, known)
      ? own
      : withServiceSpellings(resolver, resolution.neighbourhood.country, own, pricedNames);
    const plan = tryOrder(candidates, known);
    const quote = (name: string) => {
      calls.quotes++;
      return Promise.resolve({ total: service.priceOf(name).totalXof });
    };
    const first = plan[0];
    const names = candidates.map((c) => c.name);
    if (!first) return { held: 'every candidate is known to be priced at the fallback tariff', candidates: names };
    const choice = await chooseByPrice(plan, {
      first: await quote(first.candidate.name),
      quote,
      isPriced: (total) => total < FALLBACK_TARIFF_XOF,
    });
    remember(map, choice.quoted, now());
    if (choice.kind === 'chosen') return { sent: choice.candidate.name };
    return {
      held: `the delivery service does not price ${choice.quoted.map((q) => `'${q.name}'`).join(', ')}`,
      candidates: names,
    };
  };
}

/**
 * The map `relais map learn` would leave for a country: every name it asks, priced or at the fallback, and the
 * service's own list of names when it publishes one (`serviceList`: map learn given that list too).
 */
export function learnedMap(
  resolver: Parameters<typeof namesToLearn>[0]['resolver'],
  country: string,
  service: PriceLookup,
  serviceList: string[] = [],
  at: Date = new Date(),
): Map<string, NamePrice> {
  const map = new Map<string, NamePrice>();
  const names = [...namesToLearn({ resolver }, country), ...serviceList];
  remember(
    map,
    names.map((name) => ({
      name,
      totalXof: service.priceOf(name).totalXof,
      priced: service.priceOf(name).kind === 'zone',
    })),
    at,
  );
  return map;
}

function remember(
  map: Map<string, NamePrice>,
  quoted: { name: string; totalXof: number; priced?: boolean }[],
  at: Date,
) {
  for (const q of quoted)
    if (q.priced !== undefined)
      map.set(q.name, { name: q.name, priced: q.priced, totalXof: q.totalXof, quotedFor: 'eval', learnedAt: at });
}
