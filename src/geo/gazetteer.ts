/**
 * Loads the neighbourhood gazetteer (data/neighbourhoods: one CSV per city plus official-lists.csv)
 * and builds, once, the indexes the resolver reads: normalised name → places, the same without spaces,
 * names by token count for typo matching, and points for the nearest-quartier search.
 *
 * A place here is every row of one country that carries the same normalised name: OSM, Who's On First
 * and the official lists often describe one quartier several times, and the dispatch service only ever
 * receives the name, so they are one answer.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { indexCountry } from './gazetteer-index.js';
import { blockedNames, CityRow, Drafts, OfficialRow, readRows } from './gazetteer-rows.js';
import { COUNTRIES, NOISE_WORDS, type CountryCode } from './names.js';

export { bareKeyOf, wordsKey } from './gazetteer-index.js';

export interface Point {
  lat: number;
  lng: number;
}

/** How a lookup key relates to its place's name. */
export type KeyKind = 'exact' | 'alt_name' | 'abbreviation';

export interface Place {
  id: number;
  country: CountryCode;
  city: string;
  name: string;
  tokens: string[];
  placeType: string;
  coords?: Point;
  altNames: string[];
  /** Every sourced point of this name (OSM / WOF rows), for the nearest-quartier search. */
  points: Point[];
  /** Normalised names of the administrative parents the official lists give ("Parcelles Assainies"). */
  parents: string[][];
  /** Every normalised key that leads here. */
  keys: Set<string>;
  /** 1: a whole commune, arrondissement or town; 2: a quartier; 3: a numbered or officially listed quartier. */
  specificity: 1 | 2 | 3;
  /**
   * A quartier-sized place that is also an official commune d'arrondissement (Ouakam, Médina, HLM):
   * it holds the quartiers around it, so "Mamelles, Ouakam" is one address, and Mamelles the finer answer.
   */
  commune: boolean;
  /** Weight for the kind of place: communes and villages are answers only when nothing finer is found. */
  typeFactor: number;
  /** The name is also another country's city (Niamey's "Abidjan"): valid only when the country is given. */
  onlyWithCountry: boolean;
}

export interface KeyHit {
  place: Place;
  kind: KeyKind;
}

export interface FuzzyKey {
  tokens: string[];
  /** Letters without spaces: a candidate whose length differs by more than its edit budget is skipped. */
  length: number;
  hit: KeyHit;
}

export interface CountryIndex {
  country: CountryCode;
  places: Place[];
  byKey: Map<string, KeyHit[]>;
  byCompact: Map<string, KeyHit[]>;
  /** Every leading run of tokens of every key: an n-gram is extended only while it can still become a key. */
  prefixes: Set<string>;
  /** Names of two or more words by their words sorted ("akouedo camp militaire"): the same words typed in another order. */
  byWords: Map<string, KeyHit[]>;
  /** Names and alternate names by number of tokens, then by letter count (typos compare token by token). */
  fuzzyByLength: Map<number, Map<number, FuzzyKey[]>>;
}

export type BlockedKind = 'city' | 'region' | 'country';

/** A name that must never be sent as a neighbourhood, and which country it belongs to. */
export interface BlockedName {
  country: CountryCode;
  kind: BlockedKind;
  display: string;
  tokens: string[];
  key: string;
  compact: string;
}

export interface Gazetteer {
  dataDir: string;
  countries: Map<CountryCode, CountryIndex>;
  blocked: BlockedName[];
  blockedByFirstToken: Map<string, BlockedName[]>;
  /** Single words that are (part of) a city, region or country name: never edited into a quartier. */
  blockedWords: Set<string>;
  /** Where each city's own point lies: coordinates this close are a geocoder's city centroid. */
  cityCentres: { country: CountryCode; point: Point }[];
}

/** Reads every CSV of `dataDir` and builds the indexes. Throws with file and row on malformed data. */
export function loadGazetteer(dataDir: string): Gazetteer {
  const files = readdirSync(dataDir)
    .filter((f) => /^[A-Z]{2}_.+\.csv$/.test(f))
    .sort();
  if (files.length === 0) throw new Error(`no gazetteer CSV (XX_city.csv) in ${dataDir}`);
  const cityRows = files.flatMap((f) => readRows(join(dataDir, f), CityRow));
  const officialRows = readRows(join(dataDir, 'official-lists.csv'), OfficialRow);

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
