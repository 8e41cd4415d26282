/**
 * `relais map show --shop <id>`: what the shop's service map holds, against the gazetteer of the shop's country.
 * A place is covered when one of its spellings is priced, at the fallback when every spelling asked was, unknown
 * otherwise; the spellings the service uses that the gazetteer does not put first; and when it was learned.
 */
import { spellingsToLearn } from './map-learn.js';
import type { NeighbourhoodResolver } from '../geo/resolver.js';
import { MAP_FRESH_MS } from '../orders/dispatch/name-choice.js';
import type { NamePrice } from '../ledger/service-map.js';

/** How many of the service's own spellings are listed. */
const SPELLINGS_SHOWN = 20;

export interface MapCoverage {
  places: number;
  priced: number;
  atFallback: number;
  unknown: number;
  /** Priced names that are not a place's gazetteer spelling ("Les Almadies" for Almadies). */
  ownSpellings: { name: string; place: string }[];
  oldest?: Date;
  newest?: Date;
  /** Names learned more than a week ago: the next order asks again. */
  stale: number;
}

export function mapCoverage(
  resolver: Pick<NeighbourhoodResolver, 'placesOf' | 'placeNamed' | 'isCityRegionOrCountry'>,
  country: string,
  entries: NamePrice[],
  now: Date,
): MapCoverage {
  const byName = new Map(entries.map((e) => [e.name, e]));
  const coverage: MapCoverage = { places: 0, priced: 0, atFallback: 0, unknown: 0, ownSpellings: [], stale: 0 };
  for (const place of resolver.placesOf(country)) {
    const spellings = spellingsToLearn(resolver, country, place);
    const known = spellings.map((s) => byName.get(s.name)).filter((k): k is NamePrice => k !== undefined);
    coverage.places++;
    const priced = known.filter((k) => k.priced);
    if (priced.length > 0) coverage.priced++;
    else if (known.length > 0 && known.length === spellings.length) coverage.atFallback++;
    else coverage.unknown++;
    for (const p of priced) if (p.name !== place.name) coverage.ownSpellings.push({ name: p.name, place: place.name });
  }
  for (const e of entries) {
    if (!coverage.oldest || e.learnedAt < coverage.oldest) coverage.oldest = e.learnedAt;
    if (!coverage.newest || e.learnedAt > coverage.newest) coverage.newest = e.learnedAt;
    if (now.getTime() - e.learnedAt.getTime() >= MAP_FRESH_MS) coverage.stale++;
  }
  return coverage;
}

export function describeCoverage(c: MapCoverage, service: { baseUrl: string }): string {
  const day = (d: Date | undefined) => (d ? d.toISOString().slice(0, 16).replace('T', ' ') : 'never');
  const lines = [
    `Service map of ${service.baseUrl}: ${c.places} gazetteer places`,
    `  priced: ${c.priced}, at the fallback tariff: ${c.atFallback}, not known: ${c.unknown}`,
    `  learned from ${day(c.oldest)} to ${day(c.newest)} UTC; ${c.stale} name(s) older than a week (asked again)`,
  ];
  if (c.ownSpellings.length > 0) {
    lines.push('Spellings the service prices that the gazetteer does not put first:');
    for (const s of c.ownSpellings.slice(0, SPELLINGS_SHOWN)) lines.push(`  - ${s.name} (${s.place})`);
    if (c.ownSpellings.length > SPELLINGS_SHOWN) lines.push(`  … and ${c.ownSpellings.length - SPELLINGS_SHOWN} more`);
  }
  if (c.unknown > 0) lines.push('Learn the rest before the first orders: relais map learn --shop <id>');
  return lines.join('\n');
}
