/**
 * What the neighbourhood resolver (resolver.ts) works with: its scoring constants (the confidence model is
 * described at the top of resolver.ts), a matched name, a candidate place, an address field in tokens, and the
 * distances between points and places.
 */
import type { BlockedName, Place, Point } from './gazetteer.js';
import { COUNTRY_BOXES, LINKING_WORDS, type CountryCode } from './names.js';
import type { AddressFields, MatchEvidence, Neighbourhood } from './types.js';

export const FIELD_ORDER: (keyof AddressFields)[] = ['address1', 'address2', 'city', 'province', 'zip', 'company'];
export const FIELD_WEIGHT: Record<keyof AddressFields, number> = {
  address1: 1,
  address2: 1,
  city: 1,
  province: 0.95,
  zip: 0.9,
  company: 0.85,
};
export const VIA_SCORE = { alias: 0.99, exact: 0.97, alt_name: 0.95, abbreviation: 0.9, reordered: 0.92 } as const;
export const NUMBERED_FALLBACK = 0.9;
export const STREET_CONTEXT = 0.75;
export const FUZZY_BASE = 0.92;
export const FUZZY_SLOPE = 0.4;
export const MULTI_FIELD_BONUS = 0.02;
export const LISTED_QUARTIER_BONUS = 0.01;
export const AMBIGUITY_WINDOW = 0.25;
export const MAX_CONFIDENCE = 0.99;
export const MAX_FUZZY_TOKENS = 4;
export const EDITABLE_CACHE_SIZE = 10_000;
/** "Sacrecoeur" is two tokens run together; compact lookups stop at this many typed tokens. */
export const MAX_COMPACT_TOKENS = 4;
export const COORDS_BOOST = 0.08;
export const COORDS_BASE = 0.9;
export const COORDS_DISTANCE_SLOPE = 0.2;
/** The nearest point must be this many times nearer than the next unrelated one, or it is a coin toss. */
export const COORDS_CLEARLY_NEARER = 1.3;
export const COORDS_CROWDED = 0.15;
/**
 * A commune and a quartier this close are one address written twice ("Sogefiha, Cocody"): Abidjan's
 * communes and Dakar's départements span 5–10 km; Dakar's communes d'arrondissement 1–3 km.
 */
export const COMMUNE_REACH_KM = 6;
export const COMMUNE_ARRONDISSEMENT_REACH_KM = 2;
/** Two quartier points this close are one neighbourhood seen by two sources, or its immediate neighbour. */
export const ADJACENT_KM = 1.2;
/**
 * Coordinates this close to a city's own point may be a geocoder's centroid for the bare city name; they
 * are one unless they are precise (a reported accuracy of PRECISE_ACCURACY_M or better, or, with no
 * accuracy, four decimals or more and not on the city's point itself, CITY_POINT_KM). A landmark near
 * the centre located by the customer's phone is a delivery point.
 */
export const CITY_CENTROID_KM = 0.5;
export const CITY_POINT_KM = 0.05;
export const PRECISE_ACCURACY_M = 250;
export const PRECISE_DECIMALS = 4;
/** A reported accuracy coarser than this (a geocoder's city or district answer) places nothing. */
export const COARSE_ACCURACY_M = 1000;
/**
 * A quartier lies in the commune whose point is the nearest, up to this far (Abidjan's communes, Dakar's
 * départements: Bingerville's villages lie 13 km from its point). No polygons in the data (README).
 */
export const AREA_MAX_KM = 15;
/** "Angré 9e tranche", "Grand-Yoff Arafat": an area typed just before a place this near is its area. */
export const TYPED_SUB_AREA_KM = 3;

export interface Token {
  text: string;
  /** Index of the raw word in its field. */
  raw: number;
  /** Which comma-separated part of the field the word is in. */
  seg: number;
  expanded: boolean;
}

export interface Match {
  place: Place;
  field: keyof AddressFields;
  start: number;
  end: number;
  via: MatchEvidence['via'];
  score: number;
  text: string;
  /** The comma-separated part of the field the match starts in. */
  seg: number;
  /** Right after a street or landmark word ("route de Ngor"): a street's name, not where the customer is. */
  street?: boolean;
}

export interface Candidate {
  place: Place;
  matches: Match[];
  coordsKm?: number;
  score: number;
  confidence: number;
}

/**
 * One address field, tokenised. Names are looked for within one comma-separated part, except a listed
 * name that itself contains a separator ("Niangon Sud - Sicogi"), matched whole across it.
 */
export interface FieldText {
  field: keyof AddressFields;
  rawWords: string[];
  tokens: Token[];
}

export function haversineKm(a: Point, b: Point): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function placeDistanceKm(place: Place, p: Point): number | undefined {
  const points = place.points.length > 0 ? place.points : place.coords ? [place.coords] : [];
  let best: number | undefined;
  for (const q of points) {
    const d = haversineKm(q, p);
    if (best === undefined || d < best) best = d;
  }
  return best;
}

/** The closest two sourced points of two places (a quartier described twice has two points). */
export function placesDistanceKm(a: Place, b: Place): number | undefined {
  let best: number | undefined;
  for (const p of a.points.length > 0 ? a.points : a.coords ? [a.coords] : []) {
    const d = placeDistanceKm(b, p);
    if (d !== undefined && (best === undefined || d < best)) best = d;
  }
  return best;
}

export function inBox(p: Point, c: CountryCode): boolean {
  const [s, w, n, e] = COUNTRY_BOXES[c];
  return p.lat >= s && p.lat <= n && p.lng >= w && p.lng <= e;
}

/** How many decimals a coordinate was given with (14.7 → 1): a geocoder's centroid is often rounded. */
export function decimalsOf(n: number): number {
  const text = String(n);
  return text.includes('e') ? 0 : (text.split('.')[1] ?? '').length;
}

/** Two decimals, rounded down: a confidence shown as 0.75 is never really 0.749. */
export const round2 = (n: number) => Math.floor(n * 100 + 1e-9) / 100;

export function meaningfulTokens(tokens: string[]): string[] {
  return tokens.filter((t) => !LINKING_WORDS.has(t));
}

export function contains(small: string[], big: string[]): boolean {
  const s = meaningfulTokens(small);
  return s.length > 0 && s.every((t) => big.includes(t));
}

/** How many words of the address the candidate's best match used: more words, more detail. */
export function spanOf(c: Candidate): number {
  return Math.max(0, ...c.matches.map((m) => m.end - m.start));
}

/** A name inside a longer name is part of it: "Grand Yoff" in "HLM Grand Yoff". */
export function subsumed(matches: Match[]): Match[] {
  return matches.filter(
    (m) => !matches.some((o) => o.start <= m.start && o.end >= m.end && o.end - o.start > m.end - m.start),
  );
}

export function toNeighbourhood(p: Place): Neighbourhood {
  return {
    country: p.country,
    city: p.city,
    name: p.name,
    ...(p.coords ? { coords: { lat: p.coords.lat, lng: p.coords.lng } } : {}),
    altNames: [...p.altNames],
    placeType: p.placeType,
  };
}

export function addressText(fields: AddressFields): string {
  return (['address1', 'address2', 'city', 'province'] as const)
    .map((f) => fields[f]?.trim())
    .filter((v): v is string => v !== undefined && v !== '')
    .join(', ');
}

export interface Mention {
  name: BlockedName;
  field: keyof AddressFields;
  text: string;
}

export interface CompiledAlias {
  tokens: string[];
  text: string;
  canonical: string;
}
