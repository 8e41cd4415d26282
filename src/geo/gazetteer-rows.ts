/**
 * The gazetteer's rows as read (gazetteer.ts loads them): the CSV schemas, which row of several names a place,
 * and the drafts of places, every row of one country with one normalised name folded into one draft (the city
 * lists first, then the official lists' names, parents and levels).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { csvRecords } from './csv.js';
import type { BlockedKind, BlockedName, Gazetteer, Point } from './gazetteer-types.js';
import { normaliseTokens } from './normalise.js';
import {
  COUNTRIES,
  COUNTRY_NAMES,
  EXTRA_CITY_NAMES,
  REGION_NAMES,
  isCountryCode,
  NOISE_WORDS,
  type CountryCode,
} from './names.js';

export const coordinate = (min: number, max: number) =>
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
export const cleanName = (s: string): string => s.replace(/\s+/gu, ' ').trim();
export const name = z.string().transform(cleanName).pipe(z.string().min(1));
export const pipeList = z.string().transform((s) =>
  s
    .split('|')
    .map(cleanName)
    .filter((x) => x !== ''),
);
export const countryCode = z.string().trim().refine(isCountryCode, 'unknown country code');

export const CityRow = z.object({
  country: countryCode,
  city: name,
  neighbourhood: name,
  lat: coordinate(-90, 90),
  lng: coordinate(-180, 180),
  alt_names: pipeList,
  admin2: z.string().transform(cleanName),
  place_type: name,
});
export type CityRow = z.infer<typeof CityRow>;

export const OfficialRow = z.object({
  country: countryCode,
  city: name,
  name,
  lat: coordinate(-90, 90),
  lng: coordinate(-180, 180),
  alt_names: pipeList,
  level: name,
  parent: z.string().transform(cleanName),
});
export type OfficialRow = z.infer<typeof OfficialRow>;

// Which row of several names a place: the commune's node before a same-name hamlet elsewhere.
export const TYPE_RANK = [
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
export const BROAD_TYPES = new Set(['city', 'town', 'district']);
export const RURAL_FACTOR: Record<string, number> = { village: 0.93, hamlet: 0.9 };
export const BROAD_FACTOR = 0.9;

export function rankOf(type: string): number {
  const r = TYPE_RANK.indexOf(type);
  return r === -1 ? TYPE_RANK.length + (type === 'village' ? 1 : type === 'hamlet' ? 2 : 0) : r;
}

export function officialIsBroad(level: string): boolean {
  return !level.startsWith('quartier') && !level.startsWith('village');
}

export function readRows<T>(file: string, schema: z.ZodType<T>): T[] {
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

export function pointOf(row: { lat: number | undefined; lng: number | undefined }): Point | undefined {
  return row.lat === undefined || row.lng === undefined ? undefined : { lat: row.lat, lng: row.lng };
}

export interface Draft {
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
export const folded = new Map<string, string>();
export const keyOf = (s: string): string => {
  let key = folded.get(s);
  if (key === undefined) folded.set(s, (key = normaliseTokens(s).join(' ')));
  return key;
};
export const compactOf = (key: string): string => key.replaceAll(' ', '');

export function blockedNames(cityRows: CityRow[]): BlockedName[] {
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

/** The places being drafted, by country, and by alternate-name key (to fold official rows into them). */
export class Drafts {
  readonly byCountry = new Map<CountryCode, Map<string, Draft>>();
  private readonly altKeysByCountry = new Map<CountryCode, Map<string, Draft>>();
  readonly cityCentres: Gazetteer['cityCentres'] = [];

  constructor(private readonly ownBlocked: Map<CountryCode, Set<string>>) {}

  private draftsOf(c: CountryCode): Map<string, Draft> {
    let m = this.byCountry.get(c);
    if (!m) this.byCountry.set(c, (m = new Map()));
    return m;
  }

  // Alternate-name key → draft, for folding official rows into the OSM / WOF place they describe.
  private rememberAlts(d: Draft, alts: string[]): void {
    let m = this.altKeysByCountry.get(d.country);
    if (!m) this.altKeysByCountry.set(d.country, (m = new Map()));
    for (const a of alts) {
      const k = keyOf(a);
      if (!m.has(k)) m.set(k, d);
    }
  }

  /**
   * A place no earlier row named, drafted under `key`: where the row puts it, its alternate names (found again by
   * them), the parent the row names if any, and what the row's source says of it (`about`).
   */
  private addDraft(
    key: string,
    country: CountryCode,
    row: { city: string; alt_names: string[] },
    point: Point | undefined,
    parent: string[],
    about: Pick<Draft, 'name' | 'placeType' | 'broad' | 'listedQuartier' | 'listedCommune' | 'points'>,
  ): void {
    const { name, placeType, broad, listedQuartier, listedCommune, points } = about;
    const draft: Draft = {
      country,
      city: row.city,
      name,
      placeType,
      broad,
      listedQuartier,
      listedCommune,
      ...(point ? { coords: point } : {}),
      altNames: [...row.alt_names],
      points,
      parents: parent.length > 0 ? [parent] : [],
    };
    this.draftsOf(country).set(key, draft);
    this.rememberAlts(draft, row.alt_names);
  }

  /** The city lists' rows, the commune's node before a same-name hamlet elsewhere. */
  addCityRows(cityRows: CityRow[]): void {
    const { ownBlocked, cityCentres } = this;
    const draftsOf = (c: CountryCode) => this.draftsOf(c);
    const rememberAlts = (d: Draft, alts: string[]) => this.rememberAlts(d, alts);
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
      this.addDraft(key, country, row, point, admin2, {
        name: row.neighbourhood,
        placeType: row.place_type,
        broad: BROAD_TYPES.has(row.place_type),
        listedQuartier: false,
        listedCommune: false,
        points: point ? [point] : [],
      });
    }
  }

  /** The official lists' rows: folded into the place they name, or a place of their own. */
  addOfficialRows(officialRows: OfficialRow[]): void {
    const { ownBlocked } = this;
    const draftsOf = (c: CountryCode) => this.draftsOf(c);
    const rememberAlts = (d: Draft, alts: string[]) => this.rememberAlts(d, alts);
    const altKeysByCountry = this.altKeysByCountry;
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
      this.addDraft(key, country, row, point, parent, {
        name: row.name,
        placeType: row.level,
        broad: officialIsBroad(row.level),
        listedQuartier: row.level === 'quartier',
        listedCommune: officialIsBroad(row.level),
        points: [],
      });
    }
  }
}
