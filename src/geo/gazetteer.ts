/**
 * Loads the neighbourhood gazetteer (data/neighbourhoods: one CSV per city plus official-lists.csv)
 * and builds, once, the indexes the resolver reads: normalised name → places, the same without spaces,
 * names by token count for typo matching, and points for the nearest-quartier search.
 *
 * A place here is every row of one country that carries the same normalised name: OSM, Who's On First
 * and the official lists often describe one quartier several times, and the dispatch service only ever
 * receives the name, so they are one answer.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { indexCountry } from './gazetteer-index.js';
import { blockedNames, CityRow, Drafts, OfficialRow, readRows } from './gazetteer-rows.js';
import { COUNTRIES, NOISE_WORDS, type CountryCode } from './names.js';

export { bareKeyOf, wordsKey } from './gazetteer-index.js';

export type {
  BlockedKind,
  BlockedName,
  CountryIndex,
  FuzzyKey,
  Gazetteer,
  KeyHit,
  KeyKind,
  Place,
  Point,
} from './gazetteer-types.js';
import type { BlockedName, CountryIndex, Gazetteer } from './gazetteer-types.js';

/** The project's own sourced rows, beside the shared gazetteer's copy (data/neighbourhoods/README.md). */
export const ADDITIONS_FILE = 'additions.csv';

/** Reads every CSV of `dataDir` and builds the indexes. Throws with file and row on malformed data. */
export function loadGazetteer(dataDir: string): Gazetteer {
  const files = readdirSync(dataDir)
    .filter((f) => /^[A-Z]{2}_.+\.csv$/.test(f))
    .sort();
  if (files.length === 0) throw new Error(`no gazetteer CSV (XX_city.csv) in ${dataDir}`);
  const cityRows = files.flatMap((f) => readRows(join(dataDir, f), CityRow));
  // additions.csv: the project's own sourced rows (parents, spellings) on top of the shared copy, same columns.
  const additions = join(dataDir, ADDITIONS_FILE);
  const officialRows = [
    ...readRows(join(dataDir, 'official-lists.csv'), OfficialRow),
    ...(existsSync(additions) ? readRows(additions, OfficialRow) : []),
  ];

  const blocked = blockedNames(cityRows);
  // A name is never a neighbourhood in its own country when it is that country's city, region or name;
  // another country's city name ("Abidjan" in Niamey) is allowed only when the caller names the country.
  const ownBlocked = new Map<CountryCode, Set<string>>();
  const foreignCities = new Map<CountryCode, Set<string>>();
  for (const c of COUNTRIES) {
    ownBlocked.set(c, new Set(blocked.filter((b) => b.country === c || b.kind === 'country').map((b) => b.key)));
    foreignCities.set(c, new Set(blocked.filter((b) => b.country !== c && b.kind !== 'country').map((b) => b.key)));
  }

  const drafts = new Drafts(ownBlocked);
  drafts.addCityRows(cityRows);
  drafts.addOfficialRows(officialRows);

  const countries = new Map<CountryCode, CountryIndex>();
  const ids = { next: 0 };
  for (const [country, draftsHere] of drafts.byCountry) {
    const here = { here: ownBlocked.get(country)!, foreign: foreignCities.get(country)! };
    countries.set(country, indexCountry(country, draftsHere, here, ids));
  }

  const blockedByFirstToken = new Map<string, BlockedName[]>();
  const blockedWords = new Set<string>();
  for (const b of blocked) {
    const list = blockedByFirstToken.get(b.tokens[0]!) ?? [];
    list.push(b);
    blockedByFirstToken.set(b.tokens[0]!, list);
    for (const t of b.tokens) if (t.length >= 4 && !NOISE_WORDS.has(t)) blockedWords.add(t);
  }
  return { dataDir, countries, blocked, blockedByFirstToken, blockedWords, cityCentres: drafts.cityCentres };
}
