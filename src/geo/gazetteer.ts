/**
 * Loads the neighbourhood gazetteer (data/neighbourhoods: one CSV per city plus official-lists.csv)
 * and builds, once, the indexes the resolver reads: normalised name → places, the same without spaces,
 * names by token count for typo matching, and points for the nearest-quartier search.
 *
 * A place here is every row of one country that carries the same normalised name: OSM, Who's On First
 * and the official lists often describe one quartier several times, and the dispatch service only ever
 * receives the name, so they are one answer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { csvRecords } from './csv.js';
import { normaliseTokens } from './normalise.js';
import {
  COUNTRIES,
  COUNTRY_NAMES,
  EXTRA_CITY_NAMES,
  LINKING_WORDS,
  REGION_NAMES,
  isCountryCode,
  NOISE_WORDS,
  type CountryCode,
} from './names.js';

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

const coordinate = (min: number, max: number) =>
  z
    .string()
    .trim()
    .transform((s, ctx) => {
      if (s === '') return undefined;
      const n = Number(s);
      if (!Number.isFinite(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `not a coordinate: ${s}` });
        return z.NEVER;
      }
      return n;
    });
// Names go on the wire as the dispatch service's neighbourhood: no non-breaking or doubled spaces.
const cleanName = (s: string): string => s.replace(/\s+/gu, ' ').trim();
const name = z.string().transform(cleanName).pipe(z.string().min(1));
const pipeList = z.string().transform((s) =>
  s
    .split('|')
    .map(cleanName)
    .filter((x) => x !== ''),
);
const countryCode = z.string().trim().refine(isCountryCode, 'unknown country code');

const CityRow = z.object({
  country: countryCode,
  city: name,
  neighbourhood: name,
  lat: coordinate(-90, 90),
  lng: coordinate(-180, 180),
  alt_names: pipeList,
  admin2: z.string().transform(cleanName),
  place_type: name,
});
type CityRow = z.infer<typeof CityRow>;

const OfficialRow = z.object({
  country: countryCode,
  city: name,
  name,
  lat: coordinate(-90, 90),
  lng: coordinate(-180, 180),
  alt_names: pipeList,
  level: name,
  parent: z.string().transform(cleanName),
});
type OfficialRow = z.infer<typeof OfficialRow>;

// Which row of several names a place: the commune's node before a same-name hamlet elsewhere.
const TYPE_RANK = [
  'city',
  'town',
  'suburb',
  'neighbourhood',
  'quarter',
  'wof:neighbourhood',
  'district',
  'locality',
  'wof:locality',
];
const BROAD_TYPES = new Set(['city', 'town', 'district']);
const RURAL_FACTOR: Record<string, number> = { village: 0.93, hamlet: 0.9 };
const BROAD_FACTOR = 0.9;

function rankOf(type: string): number {
  const r = TYPE_RANK.indexOf(type);
  return r === -1 ? TYPE_RANK.length + (type === 'village' ? 1 : type === 'hamlet' ? 2 : 0) : r;
}

function officialIsBroad(level: string): boolean {
  return !level.startsWith('quartier') && !level.startsWith('village');
}

function readRows<T>(file: string, schema: z.ZodType<T>): T[] {
  return csvRecords(readFileSync(file, 'utf8'), file).map((record, n) => {
    const parsed = schema.safeParse(record);
    if (!parsed.success) {
      throw new Error(
        `${file}: row ${n + 2}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    }
    return parsed.data;
  });
}

function pointOf(row: { lat: number | undefined; lng: number | undefined }): Point | undefined {
  return row.lat === undefined || row.lng === undefined ? undefined : { lat: row.lat, lng: row.lng };
}

interface Draft {
  country: CountryCode;
  city: string;
  name: string;
  placeType: string;
  broad: boolean;
  listedQuartier: boolean;
  listedCommune: boolean;
  coords?: Point;
  altNames: string[];
  points: Point[];
  parents: string[][];
}

// Loading folds the same names many times (each alternate name is compared at several steps).
const folded = new Map<string, string>();
const keyOf = (s: string): string => {
  let key = folded.get(s);
  if (key === undefined) folded.set(s, (key = normaliseTokens(s).join(' ')));
  return key;
};
const compactOf = (key: string): string => key.replaceAll(' ', '');

function blockedNames(cityRows: CityRow[]): BlockedName[] {
  const out: BlockedName[] = [];
  const add = (country: CountryCode, kind: BlockedKind, display: string) => {
    const tokens = normaliseTokens(display);
    if (tokens.length === 0) return;
    const key = tokens.join(' ');
    out.push({ country, kind, display, tokens, key, compact: compactOf(key) });
  };
  const cityOf = new Map<CountryCode, string>();
  for (const row of cityRows) cityOf.set(row.country as CountryCode, row.city);
  for (const [country, city] of cityOf) {
    add(country, 'city', city);
    // The city's own row (place_type city, same name) lists its spellings: "Ndakaaru", "DKR", "Abidjan" in 20 languages.
    for (const row of cityRows) {
      if (row.country === country && keyOf(row.neighbourhood) === keyOf(city)) {
        for (const alt of row.alt_names) add(country, 'city', alt);
      }
    }
  }
  for (const country of COUNTRIES) {
    for (const name of EXTRA_CITY_NAMES[country]) add(country, 'city', name);
    for (const name of REGION_NAMES[country]) add(country, 'region', name);
    for (const name of COUNTRY_NAMES[country]) add(country, 'country', name);
  }
  return out;
}

/** A name's words without articles, sorted: the key of `byWords` (undefined under two words). */
export function wordsKey(tokens: string[]): string | undefined {
  const words = tokens.filter((t) => !LINKING_WORDS.has(t));
  return words.length < 2 ? undefined : [...words].sort().join(' ');
}

/** The name without its trailing unit number: "Hann Maristes 1" → "hann maristes". */
export function bareKeyOf(place: Pick<Place, 'tokens'>): string | undefined {
  const last = place.tokens.at(-1);
  if (place.tokens.length < 2 || last === undefined || !/^\d+$/.test(last)) return undefined;
  return place.tokens.slice(0, -1).join(' ');
}

/**
 * "Hann Maristes" is how customers write Hann Maristes 1 when the gazetteer lists no other Hann Maristes:
 * the bare name is a key of that one numbered quartier, so it outranks a shorter alternate name ("Hann",
 * Yararh's). Not when several numbers share the bare name (Boukoki 1–4: the number decides), when the
 * bare name already names a place, or when it is too short or an address word to mean anything alone.
 */
function addBareNames(index: CountryIndex, addKey: (key: string, hit: KeyHit, fuzzy: boolean) => void): void {
  const byBare = new Map<string, Place[]>();
  for (const place of index.places) {
    const bare = bareKeyOf(place);
    if (bare !== undefined) byBare.set(bare, [...(byBare.get(bare) ?? []), place]);
  }
  for (const [bare, places] of byBare) {
    const meaningful = bare.split(' ').filter((t) => !NOISE_WORDS.has(t));
    if (places.length !== 1 || index.byKey.has(bare) || compactOf(meaningful.join(' ')).length < 5) continue;
    addKey(bare, { place: places[0]!, kind: 'alt_name' }, false);
  }
}

/**
 * Dakar's communes d'arrondissement (official lists) are named after their quartiers ("Dieuppeul-Derklé"):
 * a part that names no listed place, and starts no longer name ("Sicap" starts Sicap Baobab), is how
 * customers write a quartier of that commune, and the commune is its area.
 */
function addCommuneParts(index: CountryIndex, addKey: (key: string, hit: KeyHit, fuzzy: boolean) => void): void {
  for (const place of index.places) {
    if (!place.placeType.startsWith('commune') || !place.name.includes('-')) continue;
    for (const part of place.name.split('-')) {
      const key = keyOf(part);
      if (compactOf(key).length < 5 || NOISE_WORDS.has(key) || index.byKey.has(key)) continue;
      if (index.places.some((o) => o !== place && [...o.keys].some((k) => k.startsWith(`${key} `)))) continue;
      addKey(key, { place, kind: 'abbreviation' }, false);
    }
  }
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

  const cityCentres: Gazetteer['cityCentres'] = [];
  const draftsByCountry = new Map<CountryCode, Map<string, Draft>>();
  const draftsOf = (c: CountryCode) => {
    let m = draftsByCountry.get(c);
    if (!m) draftsByCountry.set(c, (m = new Map()));
    return m;
  };
  // Alternate-name key → draft, for folding official rows into the OSM / WOF place they describe.
  const altKeysByCountry = new Map<CountryCode, Map<string, Draft>>();
  const rememberAlts = (d: Draft, alts: string[]) => {
    let m = altKeysByCountry.get(d.country);
    if (!m) altKeysByCountry.set(d.country, (m = new Map()));
    for (const a of alts) {
      const k = keyOf(a);
      if (!m.has(k)) m.set(k, d);
    }
  };

  const sortedCityRows = [...cityRows].sort((a, b) => rankOf(a.place_type) - rankOf(b.place_type));
  for (const row of sortedCityRows) {
    const country = row.country as CountryCode;
    const key = keyOf(row.neighbourhood);
    const point = pointOf(row);
    if (ownBlocked.get(country)!.has(key)) {
      if (point && row.place_type === 'city') cityCentres.push({ country, point });
      continue;
    }
    const drafts = draftsOf(country);
    const existing = drafts.get(key);
    // The département a Dakar row lies in (Pikine, Guédiawaye, Rufisque) holds it: "Thiaroye, Pikine" is one place.
    const admin2 =
      keyOf(row.admin2) === keyOf(row.city) ? [] : normaliseTokens(row.admin2).filter((t) => !NOISE_WORDS.has(t));
    if (existing) {
      existing.altNames.push(...row.alt_names);
      rememberAlts(existing, row.alt_names);
      if (point) existing.points.push(point);
      if (admin2.length > 0) existing.parents.push(admin2);
      continue;
    }
    const draft: Draft = {
      country,
      city: row.city,
      name: row.neighbourhood,
      placeType: row.place_type,
      broad: BROAD_TYPES.has(row.place_type),
      listedQuartier: false,
      listedCommune: false,
      ...(point ? { coords: point } : {}),
      altNames: [...row.alt_names],
      points: point ? [point] : [],
      parents: admin2.length > 0 ? [admin2] : [],
    };
    drafts.set(key, draft);
    rememberAlts(draft, row.alt_names);
  }

  for (const row of officialRows) {
    const country = row.country as CountryCode;
    const key = keyOf(row.name);
    if (ownBlocked.get(country)!.has(key)) continue;
    const drafts = draftsOf(country);
    const altKeys = altKeysByCountry.get(country);
    const match =
      drafts.get(key) ??
      altKeys?.get(key) ??
      row.alt_names.map((a) => drafts.get(keyOf(a)) ?? altKeys?.get(keyOf(a))).find((d) => d !== undefined);
    // "Parcelles Assainies area (units 1–26; …)": the words before the bracket; a bracket alone says
    // the source did not state the parent.
    const parent = normaliseTokens(row.parent.split('(')[0] ?? '').filter((t) => !NOISE_WORDS.has(t));
    const point = pointOf(row);
    if (match) {
      const extra = [...row.alt_names, row.name].filter((a) => keyOf(a) !== keyOf(match.name));
      match.altNames.push(...extra);
      rememberAlts(match, extra);
      if (parent.length > 0) match.parents.push(parent);
      if (row.level === 'quartier') match.listedQuartier = true;
      if (officialIsBroad(row.level)) match.listedCommune = true;
      if (!match.coords && point) match.coords = point;
      continue;
    }
    const draft: Draft = {
      country,
      city: row.city,
      name: row.name,
      placeType: row.level,
      broad: officialIsBroad(row.level),
      listedQuartier: row.level === 'quartier',
      listedCommune: officialIsBroad(row.level),
      ...(point ? { coords: point } : {}),
      altNames: [...row.alt_names],
      points: [],
      parents: parent.length > 0 ? [parent] : [],
    };
    drafts.set(key, draft);
    rememberAlts(draft, row.alt_names);
  }

  const countries = new Map<CountryCode, CountryIndex>();
  let nextId = 0;
  for (const [country, drafts] of draftsByCountry) {
    const blockedHere = ownBlocked.get(country)!;
    const foreign = foreignCities.get(country)!;
    const index: CountryIndex = {
      country,
      places: [],
      byKey: new Map(),
      byCompact: new Map(),
      prefixes: new Set(),
      fuzzyByLength: new Map(),
      byWords: new Map(),
    };
    const addKey = (key: string, hit: KeyHit, fuzzy: boolean) => {
      if (key === '' || blockedHere.has(key) || hit.place.keys.has(key)) return;
      hit.place.keys.add(key);
      const list = index.byKey.get(key) ?? [];
      list.push(hit);
      index.byKey.set(key, list);
      const compact = compactOf(key);
      if (compact.length >= 5) {
        const clist = index.byCompact.get(compact) ?? [];
        if (!clist.some((h) => h.place === hit.place)) clist.push(hit);
        index.byCompact.set(compact, clist);
      }
      const tokens = key.split(' ');
      const words = wordsKey(tokens);
      if (words !== undefined) {
        const wlist = index.byWords.get(words) ?? [];
        if (!wlist.some((h) => h.place === hit.place)) wlist.push(hit);
        index.byWords.set(words, wlist);
      }
      for (let n = 1; n <= tokens.length; n++) index.prefixes.add(tokens.slice(0, n).join(' '));
      if (fuzzy) {
        const byLetters = index.fuzzyByLength.get(tokens.length) ?? new Map<number, FuzzyKey[]>();
        const flist = byLetters.get(compact.length) ?? [];
        flist.push({ tokens, length: compact.length, hit });
        byLetters.set(compact.length, flist);
        index.fuzzyByLength.set(tokens.length, byLetters);
      }
    };

    for (const d of drafts.values()) {
      const tokens = normaliseTokens(d.name);
      const key = tokens.join(' ');
      const altNames = [...new Set(d.altNames)].filter((a) => keyOf(a) !== key && !blockedHere.has(keyOf(a)));
      const specificity: Place['specificity'] = d.broad
        ? 1
        : d.listedQuartier || tokens.some((t) => /^\d+$/.test(t))
          ? 3
          : 2;
      const place: Place = {
        id: nextId++,
        country,
        city: d.city,
        name: d.name,
        tokens,
        placeType: d.placeType,
        ...(d.coords ? { coords: d.coords } : {}),
        altNames,
        points: d.points,
        parents: d.parents,
        keys: new Set(),
        specificity,
        commune: !d.broad && d.listedCommune && !d.listedQuartier,
        typeFactor: d.broad ? BROAD_FACTOR : (RURAL_FACTOR[d.placeType] ?? 1),
        onlyWithCountry: foreign.has(key),
      };
      index.places.push(place);
      addKey(key, { place, kind: 'exact' }, true);
      for (const alt of altNames) {
        const altKey = keyOf(alt);
        // One- to three-letter alternate names ("Put", "Yof", "Beer") collide with ordinary words.
        if (!altKey.includes(' ') && altKey.length <= 3) continue;
        addKey(altKey, { place, kind: 'alt_name' }, true);
      }
    }
    // Shortened forms, added once every sourced name is in so that they never shadow one:
    // "Le Plateau" / "Plateau", "Les Almadies" / "Almadies"; then "Cité Keur Gorgui" written
    // "Keur Gorgui", "Quartier Chicane" written "Chicane", when the rest is long enough to mean
    // something and names nothing else.
    for (const place of index.places) {
      for (const k of [...place.keys]) {
        const m = /^(?:le|la|les|l) (.+)$/.exec(k);
        if (m?.[1] && m[1].length >= 4 && !index.byKey.has(m[1])) addKey(m[1], { place, kind: 'alt_name' }, false);
      }
    }
    // "Quai Nord (Q1-Q5)", "Village des Technologies … (VITIB)": the name before the bracket and a
    // one-word bracket are how people write them, when no other place shares them.
    const bracketed = index.places
      .map((place) => ({ place, m: /^(.*?)\s*\(([^)]*)\)\s*$/.exec(place.name) }))
      .filter((b): b is { place: Place; m: RegExpExecArray } => b.m !== null);
    for (const { place, m } of bracketed) {
      const before = keyOf(m[1] ?? '');
      const inside = keyOf(m[2] ?? '');
      const shared = bracketed.filter((b) => keyOf(b.m[1] ?? '') === before).length > 1;
      if (before.length >= 6 && !shared && !index.byKey.has(before))
        addKey(before, { place, kind: 'abbreviation' }, false);
      if (/^[a-z]{4,}$/.test(inside) && !index.byKey.has(inside))
        addKey(inside, { place, kind: 'abbreviation' }, false);
    }
    addBareNames(index, addKey);
    addCommuneParts(index, addKey);
    for (const place of index.places) {
      for (const k of [...place.keys]) {
        const m = /^(?:cite|quartier) (.+)$/.exec(k);
        const rest = m?.[1];
        if (!rest || compactOf(rest).length < 6 || NOISE_WORDS.has(rest) || index.byKey.has(rest)) continue;
        const shared = index.places.filter(
          (p) => p !== place && [...p.keys].some((pk) => pk.endsWith(` ${rest}`) && /^(?:cite|quartier) /.test(pk)),
        );
        if (shared.length === 0) addKey(rest, { place, kind: 'abbreviation' }, false);
      }
    }
    countries.set(country, index);
  }

  const blockedByFirstToken = new Map<string, BlockedName[]>();
  const blockedWords = new Set<string>();
  for (const b of blocked) {
    const list = blockedByFirstToken.get(b.tokens[0]!) ?? [];
    list.push(b);
    blockedByFirstToken.set(b.tokens[0]!, list);
    for (const t of b.tokens) if (t.length >= 4 && !NOISE_WORDS.has(t)) blockedWords.add(t);
  }
  return { dataDir, countries, blocked, blockedByFirstToken, blockedWords, cityCentres };
}
