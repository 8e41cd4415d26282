/**
 * The neighbourhood resolver. The dispatch service prices a delivery by the NEIGHBOURHOOD it receives in
 * `city`; a city name falls back to the highest tariff and the customer pays the difference (spec §1).
 * So this module finds the customer's quartier in whatever the shop gave (every address field, the
 * merchant's aliases, coordinates) and answers with a confidence, or refuses with a reason a merchant can
 * act on. It never answers a city, region or country name, and never guesses below `minConfidence`.
 *
 * Confidence model (each number is a constant below):
 *  - a text match scores by how it matched: alias 0.99, exact name 0.97, alternate name 0.95,
 *    abbreviation 0.90, numbered part missing from the gazetteer ×0.90, typo 0.92 − 0.4 × edits/length;
 *  - times the field's weight (province 0.95, zip 0.9, company 0.85) and the kind of place (a whole
 *    commune 0.9, a village 0.93, a hamlet 0.9), ×0.75 right after a street or landmark word ("Route de");
 *  - plus small bonuses: the same place in several fields (+0.02 each), a numbered/listed quartier (+0.01),
 *    coordinates near it (+0.08 × (1 − distance/2.5 km));
 *  - minus an ambiguity penalty when another, unrelated place scores within 0.25 (max(0, 0.25 − gap));
 *  - coordinates alone (no words matched): 0.9 − 0.2 × distance/2.5 km, −0.15 unless the nearest quartier
 *    point is 1.3 times nearer than any other. Below 0.75: not resolved.
 */
import { join, resolve as resolvePath } from 'node:path';
import { findProjectDir } from '../config/project-files.js';
import {
  bareKeyOf,
  loadGazetteer,
  wordsKey,
  type BlockedName,
  type CountryIndex,
  type Gazetteer,
  type KeyHit,
  type Place,
  type Point,
} from './gazetteer.js';
import {
  ABBREVIATIONS,
  COUNTRIES,
  COUNTRY_BOXES,
  isCountryCode,
  LINKING_WORDS,
  NOISE_WORDS,
  STREET_OR_LANDMARK_WORDS,
  type CountryCode,
} from './names.js';
import { allowedEdits, boundedEditDistance, isNumberToken, normaliseTokens, segmentsOf } from './normalise.js';
import {
  COORDS_RADIUS_KM,
  DEFAULT_MIN_CONFIDENCE,
  type AddressFields,
  type LevelDecision,
  type MatchEvidence,
  type Neighbourhood,
  type PricedNames,
  type Resolution,
  type ResolveInput,
} from './types.js';

export { normaliseText } from './normalise.js';
export { explainResolution } from './explain.js';
export {
  COORDS_RADIUS_KM,
  DEFAULT_MIN_CONFIDENCE,
  type AddressFields,
  type LevelDecision,
  type MatchEvidence,
  type Neighbourhood,
  type PricedNames,
  type Resolution,
  type ResolveInput,
} from './types.js';

const FIELD_ORDER: (keyof AddressFields)[] = ['address1', 'address2', 'city', 'province', 'zip', 'company'];
const FIELD_WEIGHT: Record<keyof AddressFields, number> = {
  address1: 1,
  address2: 1,
  city: 1,
  province: 0.95,
  zip: 0.9,
  company: 0.85,
};
const VIA_SCORE = { alias: 0.99, exact: 0.97, alt_name: 0.95, abbreviation: 0.9, reordered: 0.92 } as const;
const NUMBERED_FALLBACK = 0.9;
const STREET_CONTEXT = 0.75;
const FUZZY_BASE = 0.92;
const FUZZY_SLOPE = 0.4;
const MULTI_FIELD_BONUS = 0.02;
const LISTED_QUARTIER_BONUS = 0.01;
const AMBIGUITY_WINDOW = 0.25;
const MAX_CONFIDENCE = 0.99;
const MAX_FUZZY_TOKENS = 4;
const EDITABLE_CACHE_SIZE = 10_000;
/** "Sacrecoeur" is two tokens run together; compact lookups stop at this many typed tokens. */
const MAX_COMPACT_TOKENS = 4;
const COORDS_BOOST = 0.08;
const COORDS_BASE = 0.9;
const COORDS_DISTANCE_SLOPE = 0.2;
/** The nearest point must be this many times nearer than the next unrelated one, or it is a coin toss. */
const COORDS_CLEARLY_NEARER = 1.3;
const COORDS_CROWDED = 0.15;
/**
 * A commune and a quartier this close are one address written twice ("Sogefiha, Cocody"): Abidjan's
 * communes and Dakar's départements span 5–10 km; Dakar's communes d'arrondissement 1–3 km.
 */
const COMMUNE_REACH_KM = 6;
const COMMUNE_ARRONDISSEMENT_REACH_KM = 2;
/** Two quartier points this close are one neighbourhood seen by two sources, or its immediate neighbour. */
const ADJACENT_KM = 1.2;
/**
 * Coordinates this close to a city's own point may be a geocoder's centroid for the bare city name; they
 * are one unless they are precise (a reported accuracy of PRECISE_ACCURACY_M or better, or, with no
 * accuracy, four decimals or more and not on the city's point itself, CITY_POINT_KM). A landmark near
 * the centre located by the customer's phone is a delivery point.
 */
const CITY_CENTROID_KM = 0.5;
const CITY_POINT_KM = 0.05;
const PRECISE_ACCURACY_M = 250;
const PRECISE_DECIMALS = 4;
/** A reported accuracy coarser than this (a geocoder's city or district answer) places nothing. */
const COARSE_ACCURACY_M = 1000;
/**
 * A quartier lies in the commune whose point is the nearest, up to this far (Abidjan's communes, Dakar's
 * départements: Bingerville's villages lie 13 km from its point). No polygons in the data (README).
 */
const AREA_MAX_KM = 15;
/** "Angré 9e tranche", "Grand-Yoff Arafat": an area typed just before a place this near is its area. */
const TYPED_SUB_AREA_KM = 3;

interface Token {
  text: string;
  /** Index of the raw word in its field. */
  raw: number;
  /** Which comma-separated part of the field the word is in. */
  seg: number;
  expanded: boolean;
}

interface Match {
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

interface Candidate {
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
interface FieldText {
  field: keyof AddressFields;
  rawWords: string[];
  tokens: Token[];
}

function haversineKm(a: Point, b: Point): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.min(1, Math.sqrt(h)));
}

function placeDistanceKm(place: Place, p: Point): number | undefined {
  const points = place.points.length > 0 ? place.points : place.coords ? [place.coords] : [];
  let best: number | undefined;
  for (const q of points) {
    const d = haversineKm(q, p);
    if (best === undefined || d < best) best = d;
  }
  return best;
}

/** The closest two sourced points of two places (a quartier described twice has two points). */
function placesDistanceKm(a: Place, b: Place): number | undefined {
  let best: number | undefined;
  for (const p of a.points.length > 0 ? a.points : a.coords ? [a.coords] : []) {
    const d = placeDistanceKm(b, p);
    if (d !== undefined && (best === undefined || d < best)) best = d;
  }
  return best;
}

function inBox(p: Point, c: CountryCode): boolean {
  const [s, w, n, e] = COUNTRY_BOXES[c];
  return p.lat >= s && p.lat <= n && p.lng >= w && p.lng <= e;
}

/** How many decimals a coordinate was given with (14.7 → 1): a geocoder's centroid is often rounded. */
function decimalsOf(n: number): number {
  const text = String(n);
  return text.includes('e') ? 0 : (text.split('.')[1] ?? '').length;
}

/** Two decimals, rounded down: a confidence shown as 0.75 is never really 0.749. */
const round2 = (n: number) => Math.floor(n * 100 + 1e-9) / 100;

function meaningfulTokens(tokens: string[]): string[] {
  return tokens.filter((t) => !LINKING_WORDS.has(t));
}

function contains(small: string[], big: string[]): boolean {
  const s = meaningfulTokens(small);
  return s.length > 0 && s.every((t) => big.includes(t));
}

function isAncestor(parent: Place, child: Place): boolean {
  const own = parent.tokens.filter((t) => !NOISE_WORDS.has(t));
  return child.parents.some((p) => parent.keys.has(p.join(' ')) || (own.length > 0 && own.every((t) => p.includes(t))));
}

/**
 * Two places an address may both mention without contradiction: one inside the other (official parent,
 * "HLM" / "HLM 5", "Cocody" / "Cocody Danga"), neighbours ("Angré 8e tranche"), or a commune and a
 * quartier a few kilometres apart. Anything else ("Mermoz, Ouakam": 2.2 km, neither holds the other) is
 * a contradiction and costs confidence.
 */
/** What the gazetteer knows of where places lie: for telling nested names from rival names. */
interface Geography {
  /** The commune whose point is the nearest (AREA_MAX_KM at most). */
  areaOf(p: Place): Place | undefined;
  /** The places the official lists name as its parents, their parents, and so on. */
  ancestorsOf(p: Place): Place[];
}

function isAncestorDeep(a: Place, b: Place, geo: Geography): boolean {
  return isAncestor(a, b) || geo.ancestorsOf(b).some((q) => q === a || isAncestor(a, q));
}

/**
 * A commune and a quartier go together when the lists make the commune its parent, or, when no list
 * gives the quartier another commune, when it lies within COMMUNE_REACH_KM of the commune's point or the
 * commune's point is the nearest one to it. "Angré, Yopougon" contradicts itself: the list puts Angré in Cocody.
 */
function communeHolds(commune: Place, b: Place, geo: Geography): boolean {
  if (b.specificity === 1 || commune.country !== b.country) return false;
  if (isAncestorDeep(commune, b, geo)) return true;
  if (geo.ancestorsOf(b).some((q) => q.specificity === 1)) return false;
  const km = placesDistanceKm(commune, b);
  return (km !== undefined && km <= COMMUNE_REACH_KM) || geo.areaOf(b) === commune;
}

function related(a: Place, b: Place, geo: Geography): boolean {
  if (a === b) return true;
  if (a.country !== b.country) return false;
  if (isAncestorDeep(a, b, geo) || isAncestorDeep(b, a, geo)) return true;
  if (contains(a.tokens, b.tokens) || contains(b.tokens, a.tokens)) return true;
  if (a.specificity === 1) return communeHolds(a, b, geo);
  if (b.specificity === 1) return communeHolds(b, a, geo);
  const km = placesDistanceKm(a, b);
  if (km === undefined) return false;
  if (km <= ADJACENT_KM) return true;
  return a.commune !== b.commune && km <= COMMUNE_ARRONDISSEMENT_REACH_KM;
}

/**
 * Does place `a` hold place `b` (an area and a sub-area in it, one answer)? Its parent in the official
 * lists or its département; the commune it lies in (communeHolds); a name inside the other's a few km away
 * ("HLM" / "HLM 5", "Cocody" / "Cocody Danga", not "Plateau" / "Plateau Dokui", 8 km off); a commune
 * d'arrondissement and a quartier within its reach (Ouakam / Mamelles).
 */
function encloses(a: Place, b: Place, geo: Geography): boolean {
  if (a === b || a.country !== b.country) return false;
  if (isAncestorDeep(a, b, geo)) return true;
  if (b.specificity === 1) return false;
  if (a.specificity === 1) return communeHolds(a, b, geo);
  const km = placesDistanceKm(a, b);
  if (a.tokens.length < b.tokens.length && contains(a.tokens, b.tokens))
    return km === undefined || km <= COORDS_RADIUS_KM;
  return a.commune && !b.commune && km !== undefined && km <= COMMUNE_ARRONDISSEMENT_REACH_KM;
}

/** How many words of the address the candidate's best match used: more words, more detail. */
function spanOf(c: Candidate): number {
  return Math.max(0, ...c.matches.map((m) => m.end - m.start));
}

/** A name inside a longer name is part of it: "Grand Yoff" in "HLM Grand Yoff". */
function subsumed(matches: Match[]): Match[] {
  return matches.filter(
    (m) => !matches.some((o) => o.start <= m.start && o.end >= m.end && o.end - o.start > m.end - m.start),
  );
}

/** Two towns of one rank (neither a commune d'arrondissement nor a quartier): neither holds the other. */
function peerTowns(a: Place, b: Place): boolean {
  return a.specificity === 1 && b.specificity === 1 && !a.commune && !b.commune;
}

function toNeighbourhood(p: Place): Neighbourhood {
  return {
    country: p.country,
    city: p.city,
    name: p.name,
    ...(p.coords ? { coords: { lat: p.coords.lat, lng: p.coords.lng } } : {}),
    altNames: [...p.altNames],
    placeType: p.placeType,
  };
}

function addressText(fields: AddressFields): string {
  return (['address1', 'address2', 'city', 'province'] as const)
    .map((f) => fields[f]?.trim())
    .filter((v): v is string => v !== undefined && v !== '')
    .join(', ');
}

function defaultDataDir(): string {
  const found = findProjectDir(import.meta.url, join('data', 'neighbourhoods'), 'official-lists.csv');
  if (found) return found;
  throw new Error(
    'data/neighbourhoods not found above src/geo: pass the gazetteer directory to NeighbourhoodResolver.load()',
  );
}

/** A city, region or country name written in the address. */
interface Mention {
  name: BlockedName;
  field: keyof AddressFields;
  text: string;
}

interface CompiledAlias {
  tokens: string[];
  text: string;
  canonical: string;
}

const loaded = new Map<string, NeighbourhoodResolver>();

export class NeighbourhoodResolver {
  readonly minConfidence: number = DEFAULT_MIN_CONFIDENCE;
  private readonly aliasCache = new WeakMap<Record<string, string>, CompiledAlias[]>();
  private readonly editableWords = new Map<string, boolean>();
  private readonly areas = new Map<Place, Place | undefined>();

  private constructor(private readonly gazetteer: Gazetteer) {}

  private readonly ancestors = new Map<Place, Place[]>();
  private readonly geo: Geography = {
    areaOf: (p) => this.areaOf(p),
    ancestorsOf: (p) => this.ancestorsOf(p),
  };

  private ancestorsOf(p: Place): Place[] {
    let found = this.ancestors.get(p);
    if (found) return found;
    found = [];
    const index = this.gazetteer.countries.get(p.country);
    const opening = (q: Place) => (index ? this.openingNames(index, q) : []);
    let frontier = [p];
    for (let depth = 0; depth < 3 && index && frontier.length > 0; depth++) {
      const next = frontier.flatMap((q) => [
        ...q.parents.flatMap((key) => (index.byKey.get(key.join(' ')) ?? []).map((h) => h.place)),
        ...opening(q),
      ]);
      frontier = next.filter((q) => q !== p && !found!.includes(q));
      found.push(...new Set(frontier));
    }
    this.ancestors.set(p, found);
    return found;
  }

  /** A name that opens this one, a few km away, holds it too: "Angré" holds "Angré Cocoteraie", and Angré's parent is Cocody. */
  private openingNames(index: CountryIndex, q: Place): Place[] {
    return q.tokens
      .slice(0, -1)
      .flatMap((_, n) =>
        (index.byKey.get(q.tokens.slice(0, n + 1).join(' ')) ?? [])
          .filter((h) => h.kind === 'exact' && h.place !== q && (placesDistanceKm(h.place, q) ?? 0) <= COORDS_RADIUS_KM)
          .map((h) => h.place),
      );
  }

  /**
   * The wider place a name opens with, for placeNamed: the longest opening name ("Médina Gounass" holds "Medina
   * Gounass 3", not "Medina"), unless the name hyphenates it with another place: "Mermoz-Sacré-Cœur" joins Mermoz
   * and Sacré-Cœur and lies in neither, while "Yeumbeul Nord" lies in Yeumbeul and "Koumassi Sicogi" in Koumassi.
   */
  private openingName(index: CountryIndex, q: Place): Place[] {
    return this.openingNames(index, q)
      .slice(-1)
      .filter((o) => {
        const rest = q.tokens.slice(o.tokens.length).join(' ');
        return !q.name.includes('-') || !(index.byKey.get(rest) ?? []).some((h) => h.kind === 'exact');
      });
  }

  /** The commune (a place of specificity 1) whose own point is the nearest to this place's, within AREA_MAX_KM. */
  private areaOf(p: Place): Place | undefined {
    if (this.areas.has(p)) return this.areas.get(p);
    let best: Place | undefined;
    let bestKm = AREA_MAX_KM;
    for (const q of this.gazetteer.countries.get(p.country)?.places ?? []) {
      // The commune's own point (its highest-ranked row), not a same-name village elsewhere ("Adjamé" near Bingerville).
      if (q.specificity !== 1 || q === p || !q.coords) continue;
      const km = placeDistanceKm(p, q.coords);
      if (km !== undefined && km <= bestKm) {
        best = q;
        bestKm = km;
      }
    }
    this.areas.set(p, best);
    return best;
  }

  /**
   * Does candidate `a` hold candidate `b`? As places (encloses), or as typed: an area written just before
   * a place within TYPED_SUB_AREA_KM of it, in the same part of the same field ("Angré 9e tranche",
   * "Grand-Yoff Arafat"), unless that place is itself a commune.
   */
  private holds(a: Candidate, b: Candidate): boolean {
    if (encloses(a.place, b.place, this.geo)) return true;
    if (
      encloses(b.place, a.place, this.geo) ||
      b.place.specificity === 1 ||
      b.place.commune ||
      a.place.country !== b.place.country
    )
      return false;
    const km = placesDistanceKm(a.place, b.place);
    if (km === undefined || km > TYPED_SUB_AREA_KM) return false;
    return a.matches.some((m) => b.matches.some((n) => n.field === m.field && n.seg === m.seg && n.start === m.end));
  }

  /** The winner and every named place nested with it, widest first: one answer at several levels. */
  private nestedGroup(best: Candidate, candidates: Candidate[]): Candidate[] {
    if (best.matches.length === 0) return [best];
    const group = [best];
    for (let grew = true; grew;) {
      grew = false;
      for (const c of candidates) {
        if (c.matches.every((m) => m.street) || group.some((g) => g.place === c.place || g.place.name === c.place.name))
          continue;
        if (group.some((g) => this.holds(g, c) || this.holds(c, g))) {
          group.push(c);
          grew = true;
        }
      }
    }
    const heldBy = (c: Candidate) => group.filter((o) => o !== c && this.holds(o, c)).length;
    // Two parts of one area ("Cocody Angré, 7e tranche"): customers write from the widest to the finest.
    const typedAt = (c: Candidate) => Math.min(...c.matches.map((m) => FIELD_ORDER.indexOf(m.field) * 1000 + m.start));
    return group.sort(
      (a, b) => heldBy(a) - heldBy(b) || a.place.specificity - b.place.specificity || typedAt(a) - typedAt(b),
    );
  }

  /** Issue 18 §3: the most precise name the service prices; until that is known, the area. */
  private chooseLevel(group: Candidate[], pricing: PricedNames | undefined): { sent: Candidate; level: LevelDecision } {
    const preciseFirst = [...group].reverse();
    const priced = (c: Candidate) => pricing?.isPriced(c.place.name);
    const levels = preciseFirst.map((c) => {
      const p = priced(c);
      return { name: c.place.name, placeType: c.place.placeType, ...(p === undefined ? {} : { priced: p }) };
    });
    const decide = (sent: Candidate, reason: string) => ({
      sent,
      level: {
        sent: group.length === 1 ? ('only' as const) : sent === group[0] ? ('area' as const) : ('sub-area' as const),
        levels,
        reason,
      },
    });
    if (group.length === 1) {
      const p = priced(group[0]!);
      return decide(
        group[0]!,
        `the only place named${p === undefined ? '' : p ? '; the service prices it' : '; the service is not known to price it'}`,
      );
    }
    const names = preciseFirst.map((c) => c.place.name).join(' ⊂ ');
    const pricedOne = preciseFirst.find((c) => priced(c) === true);
    if (pricedOne)
      return decide(pricedOne, `${names}: ${pricedOne.place.name} is the most precise name the service prices`);
    const area = group.find((c) => priced(c) !== false);
    if (area) {
      const why = pricing ? 'no finer name is known to be priced' : 'which names the service prices is not known yet';
      return decide(
        area,
        `${names}: ${why}, so the area ${area.place.name} is sent and ${preciseFirst[0]!.place.name} stays in the address line`,
      );
    }
    return decide(
      group[0]!,
      `${names}: none is known to be priced; the area ${group[0]!.place.name} is sent (the fallback-tariff guard decides)`,
    );
  }

  /**
   * The gazetteer's place of this country named `name` (as a resolution names it), with the wider places that
   * hold it, most precise first: its official parents (a Dakar row's département among them) and the names that
   * open it a few km away ("Sacré Coeur" holds "Sacré-Cœur 3"), then theirs, up to a commune: nothing wider
   * than a commune or département is followed (an arrondissement holds places several km apart). Not the
   * nearest commune by distance: Dakar's communes d'arrondissement are 1–3 km across, so that guess is often
   * wrong. For the candidate names of an order (candidates.ts); city, region and country names are never places.
   */
  placeNamed(country: string, name: string): { place: Neighbourhood; containing: Neighbourhood[] } | undefined {
    const place = this.findPlace(country, name);
    const index = isCountryCode(country) ? this.gazetteer.countries.get(country) : undefined;
    if (!place || !index) return undefined;
    const containing: Place[] = [];
    const top = (q: Place) => q.specificity === 1 || q.commune;
    // Quartier-sized areas, then communes d'arrondissement, then whole communes: finest to widest.
    const rank = (q: Place) => (q.specificity === 1 ? 2 : q.commune ? 1 : 0);
    let frontier = [place];
    for (let depth = 0; depth < 3 && frontier.length > 0; depth++) {
      const next = frontier
        .filter((q) => q === place || !top(q))
        .flatMap((q) => [
          // A parent is wider only if it is no finer a place: the quartier Almadies (folded with its
          // arrondissement) does not hold the commune Mermoz-Sacré-Cœur. Nor is a town held by the town its
          // département is named after: the name denotes that other town to a service (Diamniadio is not Rufisque).
          ...q.parents
            .flatMap((key) => (index.byKey.get(key.join(' ')) ?? []).map((h) => h.place))
            .filter((o) => rank(o) >= rank(q) && !peerTowns(o, q)),
          ...this.openingName(index, q),
        ]);
      frontier = [...new Set(next)].filter((q) => q !== place && q.name !== place.name && !containing.includes(q));
      containing.push(...frontier);
    }
    containing.sort((a, b) => rank(a) - rank(b));
    return { place: toNeighbourhood(place), containing: containing.map(toNeighbourhood) };
  }

  /** Every place the gazetteer lists for a country (what `relais map learn` asks a service about). */
  placesOf(country: string): Neighbourhood[] {
    if (!isCountryCode(country)) return [];
    return (this.gazetteer.countries.get(country)?.places ?? []).map(toNeighbourhood);
  }

  /** Is this text one of the country's city, region or country names (never sent as a neighbourhood)? */
  isCityRegionOrCountry(country: string, text: string): boolean {
    const key = normaliseTokens(text).join(' ');
    return this.gazetteer.blocked.some((b) => b.key === key && (b.country === country || b.kind === 'country'));
  }

  /**
   * Of `names` (as a service spells them), those whose gazetteer place lies nearest `point`, nearest first, with
   * the distance in km: the priced places a hold offers as aliases. A name the gazetteer does not know is left out.
   */
  nearestOf(country: string, point: Point, names: string[], limit: number): { name: string; km: number }[] {
    const found: { name: string; km: number }[] = [];
    for (const name of names) {
      const place = this.findPlace(country, name);
      const km = place ? placeDistanceKm(place, point) : undefined;
      if (km !== undefined) found.push({ name, km: Math.round(km * 10) / 10 });
    }
    return found.sort((a, b) => a.km - b.km || a.name.localeCompare(b.name)).slice(0, limit);
  }

  private findPlace(country: string, name: string): Place | undefined {
    if (!isCountryCode(country)) return undefined;
    const hits = this.gazetteer.countries.get(country)?.byKey.get(normaliseTokens(name).join(' ')) ?? [];
    return (hits.find((h) => h.place.name === name) ?? hits.find((h) => h.kind === 'exact') ?? hits[0])?.place;
  }

  /** The directory the gazetteer was read from. */
  get dataDir(): string {
    return this.gazetteer.dataDir;
  }

  /** Reads the gazetteer once per directory (default: <project>/data/neighbourhoods) and indexes it. */
  static load(dataDir?: string): NeighbourhoodResolver {
    const dir = resolvePath(dataDir ?? defaultDataDir());
    let resolver = loaded.get(dir);
    if (!resolver) {
      resolver = new NeighbourhoodResolver(loadGazetteer(dir));
      loaded.set(dir, resolver);
    }
    return resolver;
  }

  /** Where the gazetteer puts the neighbourhood it spells `name` (the dashboard's map), when it has a point for it. */
  whereIs(country: string, name: string): Point | undefined {
    if (!isCountryCode(country)) return undefined;
    const place = this.gazetteer.countries
      .get(country)
      ?.places.find((p) => p.name === name && (p.coords ?? p.points[0]));
    return place?.coords ?? place?.points[0];
  }

  resolve(input: ResolveInput): Resolution {
    const requested = input.country?.trim().toUpperCase();
    if (
      requested !== undefined &&
      requested !== '' &&
      !(isCountryCode(requested) && this.gazetteer.countries.has(requested))
    ) {
      return {
        ok: false,
        reason: `no neighbourhood list for country '${input.country}': Relais knows ${[...this.gazetteer.countries.keys()].join(', ')}`,
        candidates: [],
      };
    }
    const explicit = requested !== undefined && requested !== '' ? (requested as CountryCode) : undefined;
    const fields = this.fieldTexts(input.fields);
    const mentions = this.blockedMentions(fields);
    const coords = this.usableCoords(input.coords, explicit);
    const countries = this.countriesFor(explicit, mentions, coords.point);
    const address = addressText(input.fields);

    const aliasOutcome = this.aliasResolution(input.aliases, fields, countries, explicit);
    const unlisted: string[] = [];
    const candidates = this.textCandidates(fields, countries, explicit, unlisted);
    if (aliasOutcome) {
      if (!aliasOutcome.ok) return aliasOutcome;
      this.scoreAmbiguity(candidates);
      candidates.sort((a, b) => b.confidence - a.confidence);
      const others = candidates.filter((c) => c.place !== aliasOutcome.place).slice(0, 4);
      return {
        ok: true,
        neighbourhood: toNeighbourhood(aliasOutcome.place),
        confidence: VIA_SCORE.alias,
        evidence: [aliasOutcome.evidence],
        alternatives: others.map((c) => ({ name: c.place.name, confidence: round2(c.confidence) })),
      };
    }

    if (candidates.length > 0) {
      if (coords.point) this.applyCoords(candidates, coords.point);
      this.scoreAmbiguity(candidates);
    } else if (coords.point) {
      // Ambiguity between points is judged inside nearestCandidates (is the nearest clearly the nearest?).
      candidates.push(...this.nearestCandidates(coords.point, countries, explicit));
    }
    candidates.sort(
      (a, b) =>
        b.confidence - a.confidence ||
        b.place.specificity - a.place.specificity ||
        Number(a.place.commune) - Number(b.place.commune) ||
        b.score - a.score ||
        spanOf(b) - spanOf(a) ||
        a.place.name.localeCompare(b.place.name),
    );

    const best = candidates[0];
    const evidenceOf = (c: Candidate): MatchEvidence[] => [
      ...c.matches.map((m) => ({ field: m.field, text: m.text, via: m.via, score: round2(m.score) })),
      ...(c.coordsKm !== undefined && coords.point
        ? [
            {
              field: 'coords' as const,
              text: `${coords.point.lat},${coords.point.lng}: ${c.coordsKm.toFixed(1)} km from ${c.place.name}`,
              via: 'coords' as const,
              score: round2(c.confidence),
            },
          ]
        : []),
    ];
    const distinct = (list: Candidate[]) => {
      const seen = new Set<string>();
      return list.filter((c) => !seen.has(c.place.name) && seen.add(c.place.name));
    };
    if (best && best.confidence >= this.minConfidence) {
      const group = this.nestedGroup(best, candidates);
      const { sent, level } = this.chooseLevel(group, input.pricing);
      const finest = group.at(-1)!;
      return {
        ok: true,
        neighbourhood: toNeighbourhood(sent.place),
        confidence: round2(best.confidence),
        evidence: group.flatMap(evidenceOf),
        alternatives: distinct(candidates.filter((c) => !group.includes(c)))
          .slice(0, 4)
          .map((c) => ({ name: c.place.name, confidence: round2(c.confidence) })),
        why: this.whyWon(best, group, candidates),
        level,
        ...(finest !== sent ? { subArea: toNeighbourhood(finest.place) } : {}),
      };
    }
    const top = distinct(candidates).slice(0, 5);
    return {
      ok: false,
      reason: this.reasonFor(address, top, candidates, mentions, coords, unlisted),
      candidates: top.map((c) => ({ name: c.place.name, confidence: round2(c.confidence) })),
      evidence: top.flatMap(evidenceOf),
    };
  }

  private whyWon(best: Candidate, group: Candidate[], candidates: Candidate[]): string {
    const m = best.matches[0];
    const how = m
      ? `"${m.text}" in ${m.field} (${m.via.replace('_', ' ')}, ${round2(m.score).toFixed(2)})`
      : `the coordinates, ${best.coordsKm?.toFixed(2)} km away`;
    const parts = [`best match ${best.place.name} ${round2(best.confidence).toFixed(2)}, from ${how}`];
    if (best.coordsKm !== undefined && m) parts.push(`coordinates ${best.coordsKm.toFixed(2)} km from it`);
    if (group.length > 1)
      parts.push(
        `${group
          .filter((c) => c !== best)
          .map((c) => c.place.name)
          .join(', ')} nested with it, not rivals`,
      );
    const next = candidates.find((c) => !group.includes(c));
    if (next) parts.push(`next unrelated: ${next.place.name} ${round2(next.confidence).toFixed(2)}`);
    const shorter =
      best.matches.length > 0 ? candidates.filter((c) => !group.includes(c) && c.matches.length === 0) : [];
    if (shorter.length > 0) parts.push(`${shorter.map((c) => c.place.name).join(', ')} only near the coordinates`);
    return parts.join('; ');
  }

  private fieldTexts(fields: AddressFields): FieldText[] {
    const out: FieldText[] = [];
    for (const field of FIELD_ORDER) {
      const value = fields[field];
      if (typeof value !== 'string' || value.trim() === '') continue;
      const text: FieldText = { field, rawWords: [], tokens: [] };
      segmentsOf(value).forEach((segment, seg) => {
        const offset = text.rawWords.length;
        text.rawWords.push(...segment.rawWords);
        for (const t of segment.tokens) text.tokens.push({ text: t.text, raw: t.raw + offset, seg, expanded: false });
      });
      if (text.tokens.length > 0) out.push(text);
    }
    return out;
  }

  /** City, region and country names written in the address: never answers, but they tell the country. */
  private blockedMentions(fields: FieldText[]): Mention[] {
    const found: Mention[] = [];
    for (const { field, rawWords, tokens: fieldTokens } of fields) {
      const tokens = fieldTokens.map((t) => t.text);
      for (let i = 0; i < tokens.length; i++) {
        for (const b of this.gazetteer.blockedByFirstToken.get(tokens[i]!) ?? []) {
          // "Grand Dakar", "Dakar-Plateau", "Pointe de Dakar" are places, not the city.
          const end = i + b.tokens.length;
          if (end > tokens.length || fieldTokens[end - 1]!.seg !== fieldTokens[i]!.seg) continue;
          if (b.tokens.every((t, k) => tokens[i + k] === t) && !this.insideLongerName(tokens, i, end)) {
            const text = rawWords.slice(fieldTokens[i]!.raw, fieldTokens[end - 1]!.raw + 1).join(' ');
            found.push({ name: b, field, text });
          }
        }
      }
    }
    return found;
  }

  private insideLongerName(tokens: string[], start: number, end: number): boolean {
    for (let s = Math.max(0, start - 3); s <= start; s++) {
      for (let e = end; e <= Math.min(tokens.length, end + 3); e++) {
        if (e - s === end - start) continue;
        const key = tokens.slice(s, e).join(' ');
        for (const index of this.gazetteer.countries.values()) if (index.byKey.has(key)) return true;
      }
    }
    return false;
  }

  private usableCoords(c: ResolveInput['coords'], explicit: CountryCode | undefined): { point?: Point; note?: string } {
    if (!c) return {};
    const { lat, lng } = c;
    if (!Number.isFinite(lat) || !Number.isFinite(lng) || Math.abs(lat) > 90 || Math.abs(lng) > 180)
      return { note: 'coordinates are not valid numbers' };
    if (Math.abs(lat) < 1e-6 && Math.abs(lng) < 1e-6) return { note: 'coordinates 0,0 ignored (no location)' };
    const boxes = explicit ? [explicit] : COUNTRIES;
    if (!boxes.some((k) => inBox({ lat, lng }, k)))
      return { note: `coordinates ${lat},${lng} lie outside ${explicit ?? 'the covered countries'}` };
    const accuracy = c.accuracyM;
    if (accuracy !== undefined && Number.isFinite(accuracy) && accuracy > COARSE_ACCURACY_M) {
      return {
        note: `coordinates are only accurate to ${Math.round(accuracy)} m (a geocoded city or district), not a delivery point`,
      };
    }
    const centreKm = Math.min(
      Infinity,
      ...this.gazetteer.cityCentres
        .filter((cc) => !explicit || cc.country === explicit)
        .map((cc) => haversineKm(cc.point, { lat, lng })),
    );
    // Distance alone cannot tell a phone's fix at a landmark near the centre from the city's centroid: precision decides.
    const precise =
      accuracy !== undefined && Number.isFinite(accuracy)
        ? accuracy <= PRECISE_ACCURACY_M
        : Math.min(decimalsOf(lat), decimalsOf(lng)) >= PRECISE_DECIMALS && centreKm > CITY_POINT_KM;
    if (centreKm <= CITY_CENTROID_KM && !precise) {
      return {
        note: 'coordinates are the city centre (a geocoded city name), not a delivery point: add the quartier or precise coordinates',
      };
    }
    return { point: { lat, lng } };
  }

  private countriesFor(
    explicit: CountryCode | undefined,
    mentions: { name: BlockedName }[],
    point: Point | undefined,
  ): CountryIndex[] {
    const all = [...this.gazetteer.countries.values()];
    if (explicit) return all.filter((c) => c.country === explicit);
    const named = new Set(mentions.map((m) => m.name.country));
    if (named.size === 1) return all.filter((c) => named.has(c.country));
    if (named.size === 0 && point) {
      const boxed = all.filter((c) => inBox(point, c.country));
      if (boxed.length === 1) return boxed;
    }
    return all;
  }

  private compiledAliases(aliases: Record<string, string>): CompiledAlias[] {
    let compiled = this.aliasCache.get(aliases);
    if (!compiled) {
      compiled = Object.entries(aliases)
        .map(([text, canonical]) => ({ tokens: normaliseTokens(text), text, canonical }))
        .filter((a) => a.tokens.length > 0)
        .sort((a, b) => b.tokens.length - a.tokens.length);
      this.aliasCache.set(aliases, compiled);
    }
    return compiled;
  }

  /** A merchant alias found in the address wins over everything else, once its target is checked. */
  private aliasResolution(
    aliases: Record<string, string> | undefined,
    fields: FieldText[],
    countries: CountryIndex[],
    explicit: CountryCode | undefined,
  ): { ok: true; place: Place; evidence: MatchEvidence } | { ok: false; reason: string; candidates: [] } | undefined {
    if (!aliases) return undefined;
    const hits: { alias: CompiledAlias; field: keyof AddressFields }[] = [];
    for (const alias of this.compiledAliases(aliases)) {
      const n = alias.tokens.length;
      // An alias may span commas ("Mermoz, Ouakam" → "Mermoz"): it is matched against each whole field.
      for (const { field, tokens } of fields) {
        for (let i = 0; i + n <= tokens.length; i++) {
          if (alias.tokens.every((t, k) => tokens[i + k]!.text === t)) {
            hits.push({ alias, field });
            break;
          }
        }
      }
    }
    if (hits.length === 0) return undefined;
    const longest = hits.filter((h) => h.alias.tokens.length === hits[0]!.alias.tokens.length);
    const targets = new Map<string, { hit: (typeof hits)[number]; places: Place[] }>();
    for (const hit of longest) {
      const key = normaliseTokens(hit.alias.canonical).join(' ');
      const places = [
        ...new Set(
          countries
            .flatMap((c) => (c.byKey.get(key) ?? []).map((h) => h.place))
            .filter((p) => explicit !== undefined || !p.onlyWithCountry),
        ),
      ];
      if (places.length === 0) {
        return {
          ok: false,
          reason: `the alias '${hit.alias.text}' points to '${hit.alias.canonical}', which is not a neighbourhood in the gazetteer${explicit ? ` for ${explicit}` : ''}: correct the alias to a listed neighbourhood name`,
          candidates: [],
        };
      }
      targets.set(places.map((p) => p.id).join(','), { hit, places });
    }
    if (targets.size > 1) {
      return {
        ok: false,
        reason: `the aliases ${[...targets.values()].map((t) => `'${t.hit.alias.text}' → '${t.hit.alias.canonical}'`).join(' and ')} disagree for this address: remove one or correct the address`,
        candidates: [],
      };
    }
    const [{ hit, places }] = [...targets.values()] as [{ hit: (typeof hits)[number]; places: Place[] }];
    if (places.length > 1) {
      return {
        ok: false,
        reason: `the alias '${hit.alias.text}' points to '${hit.alias.canonical}', which exists in ${places.map((p) => p.country).join(' and ')}: set the shop's country`,
        candidates: [],
      };
    }
    return {
      ok: true,
      place: places[0]!,
      evidence: { field: 'alias', text: `${hit.alias.text} (in ${hit.field})`, via: 'alias', score: VIA_SCORE.alias },
    };
  }

  /** The country's abbreviations written out ("PA U17" → "parcelles assainies unite 17"), within one part. */
  private expand(src: Token[], country: CountryCode): Token[] {
    const out: Token[] = [];
    const rules = ABBREVIATIONS[country];
    const inPart = (i: number, k: number) => src[i + k] !== undefined && src[i + k]!.seg === src[i]!.seg;
    for (let i = 0; i < src.length;) {
      const rule = rules.find(
        (r) =>
          r.from.every((t, k) => inPart(i, k) && src[i + k]!.text === t) &&
          (!r.beforeNumber || (inPart(i, r.from.length) && isNumberToken(src[i + r.from.length]!.text))),
      );
      if (rule) {
        for (const t of rule.to) out.push({ text: t, raw: src[i]!.raw, seg: src[i]!.seg, expanded: true });
        i += rule.from.length;
      } else {
        out.push(src[i]!);
        i++;
      }
    }
    return out;
  }

  private textCandidates(
    fields: FieldText[],
    countries: CountryIndex[],
    explicit: CountryCode | undefined,
    unlisted: string[],
  ): Candidate[] {
    const byPlace = new Map<Place, Candidate>();
    const isEditable = (t: Token) => !t.expanded && this.editable(t.text);
    for (const index of countries) {
      for (const fs of fields) {
        const tokens = this.expand(fs.tokens, index.country);
        const rawText = (start: number, end: number) =>
          fs.rawWords.slice(tokens[start]!.raw, tokens[end - 1]!.raw + 1).join(' ');
        const found = [...this.exactMatches(index, fs, tokens, rawText)];
        found.push(...this.reorderedMatches(index, fs, tokens, rawText, found));
        const exact = subsumed(found);
        const covered = new Array<boolean>(tokens.length).fill(false);
        for (const m of exact) for (let k = m.start; k < m.end; k++) covered[k] = true;
        const kept = subsumed([
          ...exact,
          ...this.fuzzyMatches(index, fs, tokens, covered, rawText, tokens.map(isEditable)),
        ]);
        const matches = this.withNumberedFallback(
          [...kept, ...this.communesOpening(found, kept, tokens)],
          tokens,
          rawText,
          unlisted,
        );
        for (const m of matches) {
          if (m.place.onlyWithCountry && explicit === undefined) continue;
          if (this.afterStreetWord(tokens, m.start)) {
            m.score *= STREET_CONTEXT;
            m.street = true;
          }
          m.score *= FIELD_WEIGHT[m.field] * m.place.typeFactor;
          const c = byPlace.get(m.place) ?? { place: m.place, matches: [], score: 0, confidence: 0 };
          c.matches.push(m);
          byPlace.set(m.place, c);
        }
      }
    }
    for (const c of byPlace.values()) {
      c.matches.sort((a, b) => b.score - a.score);
      const fields = new Set(c.matches.map((m) => m.field)).size;
      // Not capped yet: bonuses still separate two strong candidates; the cap applies to the confidence.
      c.score =
        c.matches[0]!.score +
        MULTI_FIELD_BONUS * Math.min(2, fields - 1) +
        (c.place.specificity === 3 ? LISTED_QUARTIER_BONUS : 0);
    }
    return [...byPlace.values()];
  }

  private exactMatches(
    index: CountryIndex,
    fs: FieldText,
    tokens: Token[],
    rawText: (s: number, e: number) => string,
  ): Match[] {
    const found: Match[] = [];
    const texts = tokens.map((t) => t.text);
    for (let i = 0; i < texts.length; i++) {
      let key = '';
      let compact = '';
      let expanded = false;
      for (let end = i + 1; end <= texts.length; end++) {
        const n = end - i;
        key = n === 1 ? texts[i]! : `${key} ${texts[end - 1]!}`;
        compact += texts[end - 1]!;
        expanded ||= tokens[end - 1]!.expanded;
        const extendable = index.prefixes.has(key);
        const onePart = tokens[end - 1]!.seg === tokens[i]!.seg;
        // A name written without its spaces ("Sacrecoeur", "Keurmassar") is found by its compact form,
        // unless the words as typed already name a place ("Tang Sega" is not "Tangséga", 25 km away).
        const compactHits =
          onePart && n <= MAX_COMPACT_TOKENS && !index.byKey.has(key) ? index.byCompact.get(compact) : undefined;
        if (!extendable && compactHits === undefined) {
          if (n >= MAX_COMPACT_TOKENS) break;
          continue;
        }
        const seen = new Set<Place>();
        const add = (hit: KeyHit, viaCompact: boolean) => {
          if (seen.has(hit.place)) return;
          seen.add(hit.place);
          const via = expanded ? 'abbreviation' : viaCompact && hit.kind === 'exact' ? 'alt_name' : hit.kind;
          found.push({
            place: hit.place,
            field: fs.field,
            start: i,
            end,
            via,
            score: VIA_SCORE[via],
            text: rawText(i, end),
            seg: tokens[i]!.seg,
          });
        };
        for (const hit of (extendable && index.byKey.get(key)) || []) add(hit, false);
        for (const hit of compactHits ?? []) add(hit, true);
      }
    }
    return found;
  }

  /**
   * "Akouedo camp militaire" for Camp Militaire d'Akouédo: every word of a listed name, in another order,
   * as a run of words of one part. Not a run whose words already name only communes ("Adjamé Abobo" is
   * two communes, not the quartier Abobo Adjame).
   */
  private reorderedMatches(
    index: CountryIndex,
    fs: FieldText,
    tokens: Token[],
    rawText: (s: number, e: number) => string,
    exact: Match[],
  ): Match[] {
    const found: Match[] = [];
    for (let i = 0; i < tokens.length; i++) {
      for (let end = i + 2; end <= Math.min(tokens.length, i + MAX_COMPACT_TOKENS); end++) {
        if (tokens[end - 1]!.seg !== tokens[i]!.seg) break;
        const texts = tokens.slice(i, end).map((t) => t.text);
        if (index.byKey.has(texts.join(' '))) continue;
        const words = wordsKey(texts);
        const hits = words === undefined ? undefined : index.byWords.get(words);
        if (!hits) continue;
        const inside = exact.filter((m) => m.start >= i && m.end <= end);
        if (inside.length > 0 && inside.every((m) => m.place.specificity === 1)) continue;
        for (const hit of hits) {
          found.push({
            place: hit.place,
            field: fs.field,
            start: i,
            end,
            via: 'reordered',
            score: VIA_SCORE.reordered,
            text: rawText(i, end),
            seg: tokens[i]!.seg,
          });
        }
      }
    }
    return found;
  }

  /**
   * "Cocody Danga" is listed as one name (an alternate name of Danga) but names the commune too: a
   * commune that opens a longer alternate-name match, holds its place and is followed by a word that
   * names something (not "Pikine Ouest", "Rufisque Nord") is kept beside it, so the area can be sent. A
   * place's own name ("Abobo Baoulé", "Koumassi Sicogi") is that place's name, not two levels.
   */
  private communesOpening(found: Match[], kept: Match[], tokens: Token[]): Match[] {
    return found.filter(
      (m) =>
        m.place.specificity === 1 &&
        !kept.includes(m) &&
        kept.some(
          (k) =>
            k.start === m.start &&
            k.end > m.end &&
            k.via === 'alt_name' &&
            encloses(m.place, k.place, this.geo) &&
            tokens.slice(m.end, k.end).some((t) => !NOISE_WORDS.has(t.text) && !isNumberToken(t.text)),
        ),
    );
  }

  /**
   * "Liberté 6" where only "Liberté" is listed: the base name, with less confidence. But "Hann Maristes 2"
   * where only "Hann Maristes 1" is listed (found by its bare name) is another unit, not that one: the
   * match is dropped and noted in `unlisted`, so the hold can say which number is missing.
   */
  private withNumberedFallback(
    matches: Match[],
    tokens: Token[],
    rawText: (s: number, e: number) => string,
    unlisted: string[],
  ): Match[] {
    const kept: Match[] = [];
    for (const m of matches) {
      const numberFollows =
        m.end < tokens.length && tokens[m.end]!.seg === tokens[m.end - 1]!.seg && isNumberToken(tokens[m.end]!.text);
      // "Angré 8e tranche": the number opens another name, it does not number this one.
      if (numberFollows && !matches.some((o) => (o.start <= m.start && o.end > m.end) || o.start === m.end)) {
        if (bareKeyOf(m.place) !== undefined) {
          unlisted.push(`'${rawText(m.start, m.end + 1)}' is not in the gazetteer (${m.place.name} is)`);
          continue;
        }
        m.via = 'numbered';
        m.score *= NUMBERED_FALLBACK;
        m.text = rawText(m.start, m.end + 1);
      }
      kept.push(m);
    }
    return kept;
  }

  /** May this word carry a typo? Not a short word, a number, an address word, or (nearly) a city name. */
  private editable(word: string): boolean {
    if (word.length < 5 || isNumberToken(word) || NOISE_WORDS.has(word)) return false;
    let e = this.editableWords.get(word);
    if (e === undefined) {
      // Customers' words repeat from order to order; the cache is bounded, not an unbounded memo.
      if (this.editableWords.size >= EDITABLE_CACHE_SIZE) this.editableWords.clear();
      this.editableWords.set(word, (e = !this.nearBlocked(word)));
    }
    return e;
  }

  private nearBlocked(word: string): boolean {
    const max = allowedEdits(word.length);
    for (const b of this.gazetteer.blockedWords) {
      if (Math.abs(b.length - word.length) <= max && boundedEditDistance(word, b, max) <= max) return true;
    }
    return false;
  }

  /**
   * Typos, token by token: short words, numbers, address words and words already matched exactly must be
   * equal; the others may differ within allowedEdits ("Mermoz Baobab" → "Mermoz Boabab").
   */
  private fuzzyMatches(
    index: CountryIndex,
    fs: FieldText,
    tokens: Token[],
    covered: boolean[],
    rawText: (s: number, e: number) => string,
    editable: boolean[],
  ): Match[] {
    const found: Match[] = [];
    const editableHere = editable.map((e, k) => e && !covered[k]);
    for (let n = Math.min(MAX_FUZZY_TOKENS, tokens.length); n >= 1; n--) {
      const byLetters = index.fuzzyByLength.get(n);
      if (!byLetters) continue;
      for (let i = 0; i + n <= tokens.length; i++) {
        if (tokens[i + n - 1]!.seg !== tokens[i]!.seg) continue;
        let anyEditable = false;
        let candidateLength = 0;
        for (let k = i; k < i + n; k++) {
          if (editableHere[k]) anyEditable = true;
          candidateLength += tokens[k]!.text.length;
        }
        if (!anyEditable) continue;
        const budget = allowedEdits(candidateLength);
        for (let letters = candidateLength - budget; letters <= candidateLength + budget; letters++) {
          for (const fk of byLetters.get(letters) ?? []) {
            const edits = this.tokenEdits(tokens, i, fk.tokens, editableHere, budget);
            if (edits === undefined || edits === 0) continue;
            const score = FUZZY_BASE - (FUZZY_SLOPE * edits) / fk.length;
            found.push({
              place: fk.hit.place,
              field: fs.field,
              start: i,
              end: i + n,
              via: 'fuzzy',
              score,
              text: rawText(i, i + n),
              seg: tokens[i]!.seg,
            });
          }
        }
      }
    }
    return found;
  }

  /** Edits needed to turn tokens[i..] into `want`, or undefined beyond the budget or on a frozen word. */
  private tokenEdits(
    tokens: Token[],
    i: number,
    want: string[],
    editableHere: boolean[],
    budget: number,
  ): number | undefined {
    // Frozen words (numbers, short or address words, words already matched) first: cheapest to refute.
    for (let k = 0; k < want.length; k++) {
      if (!editableHere[i + k] && tokens[i + k]!.text !== want[k]) return undefined;
    }
    let edits = 0;
    for (let k = 0; k < want.length; k++) {
      const have = tokens[i + k]!.text;
      const w = want[k]!;
      if (have === w) continue;
      const max = Math.min(allowedEdits(Math.min(have.length, w.length)), budget - edits);
      if (max <= 0) return undefined;
      const d = boundedEditDistance(have, w, max);
      if (d > max) return undefined;
      edits += d;
    }
    return edits;
  }

  private afterStreetWord(tokens: Token[], start: number): boolean {
    let skipped = 0;
    for (let k = start - 1; k >= 0 && skipped <= 3 && tokens[k]!.seg === tokens[start]!.seg; k--) {
      const t = tokens[k]!.text;
      if (STREET_OR_LANDMARK_WORDS.has(t)) return true;
      if (!LINKING_WORDS.has(t)) return false;
      skipped++;
    }
    return false;
  }

  /**
   * Coordinates near a place the words named confirm it, the more the nearer: between two named
   * quartiers, the one the customer stands in pulls ahead ("Mermoz, Ouakam" at Ouakam's point).
   */
  private applyCoords(candidates: Candidate[], point: Point): void {
    for (const c of candidates) {
      const d = placeDistanceKm(c.place, point);
      if (d === undefined || d > COORDS_RADIUS_KM) continue;
      c.coordsKm = d;
      c.score += COORDS_BOOST * (1 - d / COORDS_RADIUS_KM);
    }
  }

  /** No words matched: the nearest known quartier point, if near enough and clearly the nearest. */
  private nearestCandidates(point: Point, countries: CountryIndex[], explicit: CountryCode | undefined): Candidate[] {
    const near: { place: Place; km: number }[] = [];
    for (const index of countries) {
      for (const place of index.places) {
        if (place.specificity === 1 || (place.onlyWithCountry && explicit === undefined)) continue;
        const km = placeDistanceKm(place, point);
        if (km !== undefined && km <= COORDS_RADIUS_KM) near.push({ place, km });
      }
    }
    near.sort((a, b) => a.km - b.km);
    return near.slice(0, 5).map(({ place, km }, i) => {
      const rival = near.find((o, j) => j !== i && o.place.name !== place.name && !related(o.place, place, this.geo));
      const crowded = rival !== undefined && rival.km < Math.max(km, 0.05) * COORDS_CLEARLY_NEARER;
      const score =
        (COORDS_BASE - (COORDS_DISTANCE_SLOPE * km) / COORDS_RADIUS_KM - (crowded ? COORDS_CROWDED : 0)) *
        place.typeFactor;
      return { place, matches: [], coordsKm: km, score, confidence: score };
    });
  }

  /** Confidence = score, less a penalty when an unrelated place scores close to it (nested names are one answer). */
  private scoreAmbiguity(candidates: Candidate[]): void {
    for (const c of candidates) {
      let rival = -Infinity;
      for (const o of candidates) {
        if (o === c || related(o.place, c.place, this.geo) || this.holds(o, c) || this.holds(c, o)) continue;
        if (o.place.name === c.place.name && o.place.country === c.place.country) continue;
        // A commune weighs 0.9 so that a quartier inside it wins; one that contradicts the quartier is a full rival.
        rival = Math.max(rival, o.place.specificity === 1 ? o.score / o.place.typeFactor : o.score);
      }
      const gap = c.score - rival;
      c.confidence = Math.min(MAX_CONFIDENCE, Math.max(0, c.score - Math.max(0, AMBIGUITY_WINDOW - gap)));
    }
  }

  private reasonFor(
    address: string,
    top: Candidate[],
    all: Candidate[],
    mentions: Mention[],
    coords: { point?: Point; note?: string },
    unlisted: string[] = [],
  ): string {
    const quoted = `'${address || '(empty address)'}'`;
    const notes: string[] = [];
    const byKey = new Map<string, string>();
    for (const m of mentions) if (!byKey.has(m.name.key)) byKey.set(m.name.key, m.text);
    const names = [...new Set(byKey.values())];
    if (names.length === 1) {
      const kind = mentions[0]!.name.kind;
      notes.push(`'${names[0]}' is a ${kind}, not a neighbourhood`);
    } else if (names.length > 1) {
      notes.push(`${names.map((n) => `'${n}'`).join(', ')} are city, region or country names, not neighbourhoods`);
    }
    notes.push(...unlisted);
    if (coords.note) notes.push(coords.note);
    else if (coords.point && top.length === 0)
      notes.push(`no known neighbourhood within ${COORDS_RADIUS_KM} km of the coordinates`);
    const suffix = notes.length > 0 ? ` (${notes.join('; ')})` : '';
    if (top.length === 0) return `no neighbourhood found in ${quoted}${suffix}: add an alias or correct the address`;
    const best = top[0]?.confidence ?? 0;
    const countriesNamed = [
      ...new Set(all.filter((c) => c.confidence >= best - 0.05).map((c) => c.place.country)),
    ].sort();
    if (countriesNamed.length > 1) {
      return `${quoted} names neighbourhoods in several countries (${countriesNamed.join(', ')})${suffix}: set the shop's country, add an alias or correct the address`;
    }
    const list = top
      .slice(0, 3)
      .map((c) => `${c.place.name} ${round2(c.confidence).toFixed(2)}`)
      .join(', ');
    const ambiguous = top.length > 1 && top[0]!.score >= this.minConfidence;
    const what = ambiguous ? `${quoted} names several neighbourhoods` : `neighbourhood unclear in ${quoted}`;
    return `${what}: ${list}, below ${this.minConfidence}${suffix}: add an alias or correct the address`;
  }
}
