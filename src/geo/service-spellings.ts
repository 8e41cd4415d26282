/**
 * The service's own spellings of our places (issue 24). A delivery service keeps its own list of priced names
 * ("Parcelles U17", "Sicap Karack", "Deux Plateaux Vallons"), and no rule of ours derives every one of them from
 * the gazetteer's spelling ("Unité 17", "Sicap Karak", "II Plateaux-Vallons"). The names the service is known
 * to price (its service map: what map learn and the orders' quotes showed, the names merchants aliased) are
 * read here back to the gazetteer place each one denotes, so an order for that place tries the service's name.
 *
 * A service name denotes a place when, word for word, it says all of the place's name and nothing else but the
 * names of the areas holding it: numbers equal ("U17" is never "Unité 15"; "Deux", "II" and "2" are one
 * number), words equal once spelled alike (accents, doubled letters, a silent h, a final s or e, "ck"/"k"), or a
 * lone letter standing for a word ("U" for "Unité"). Safety margin: the name must denote one place only, better
 * than every other place of the country; a name two places match equally well denotes neither (the order keeps
 * its own candidates and, if none is priced, is held with them).
 */
import { foldSpelling, type NameCandidate } from './candidates.js';
import type { Neighbourhood } from './types.js';

/** What the matcher reads of the gazetteer. */
export interface SpellingLookup {
  placesOf(country: string): Neighbourhood[];
  placeNamed(country: string, name: string): { place: Neighbourhood; containing: Neighbourhood[] } | undefined;
}

/** A name as the matcher compares it: its numbers, and its words spelled alike. */
export interface Spelled {
  /** As the service folds it (foldSpelling): an identical name is nearer than a sound-alike. */
  folded: string;
  numbers: string;
  words: string[];
}

/** Articles and prepositions: "Camp Militaire d'Akouédo" and "Camp Militaire Akouédo" are one name. */
const LINK_WORDS = new Set(['a', 'au', 'aux', 'd', 'de', 'des', 'du', 'en', 'et', 'l', 'la', 'le', 'les']);
const NUMBER_WORDS: Record<string, number> = {
  un: 1,
  une: 1,
  deux: 2,
  trois: 3,
  quatre: 4,
  cinq: 5,
  six: 6,
  sept: 7,
  huit: 8,
  neuf: 9,
  dix: 10,
};
const ROMAN: Record<string, number> = { i: 1, ii: 2, iii: 3, iv: 4, v: 5, vi: 6, vii: 7, viii: 8, ix: 9, x: 10 };

/** One word as it sounds, roughly: "Blockhauss" and "Blockauss", "Karack" and "Karak", "Vallons" and "Vallon". */
export function soundKey(word: string): string {
  const key = word
    .replace(/ph/g, 'f')
    .replace(/ck|qu|q/g, 'k')
    .replace(/c(?![eiy]|h)/g, 'k')
    .replace(/(?<![cs])h/g, '')
    .replace(/y/g, 'i')
    .replace(/(.)\1+/g, '$1');
  return key.length > 3 ? key.replace(/[sx]$/, '').replace(/e$/, '') : key;
}

/** "Parcelles U17" → numbers 17, words parcel, u; "Angré 8ᵉ Tranche" → 8, angre, tranch. */
export function spelled(name: string): Spelled {
  const folded = foldSpelling(name);
  const text = folded
    .replace(/\b(\d+)\s*(?:er|re|eme|ieme|e)\b/g, '$1')
    .replace(/(\d)(\p{L})/gu, '$1 $2')
    .replace(/(\p{L})(\d)/gu, '$1 $2');
  const numbers: number[] = [];
  const words: string[] = [];
  for (const token of text.split(' ')) {
    const n = /^\d+$/.test(token) ? Number(token) : (NUMBER_WORDS[token] ?? ROMAN[token]);
    if (n !== undefined) numbers.push(n);
    else if (token !== '' && !LINK_WORDS.has(token)) words.push(soundKey(token));
  }
  return { folded, numbers: numbers.sort((a, b) => a - b).join(' '), words };
}

/** Two words alike: the same sound, or one a lone letter opening the other ("u" for "unite"). */
function alike(a: string, b: string): 'same' | 'initial' | undefined {
  if (a === b) return 'same';
  if ((a.length === 1 && b.startsWith(a)) || (b.length === 1 && a.startsWith(b))) return 'initial';
  return undefined;
}

/**
 * How far the service's name is from one spelling of a place, lower closer; undefined when it does not denote
 * it: a number differs, a word of the place is not said, or a word said is neither the place's nor its areas'.
 */
export function distance(service: Spelled, place: Spelled, areaWords: () => string[]): number | undefined {
  if (service.numbers !== place.numbers || place.words.length === 0) return undefined;
  if (service.folded === place.folded) return 0;
  let cost = 0.5;
  let own = 0;
  for (const word of service.words) {
    const match = place.words.map((w) => alike(word, w)).find((m) => m !== undefined);
    if (match) {
      own++;
      if (match === 'initial') cost += 1;
    } else if (areaWords().includes(word)) cost += 2;
    else return undefined;
  }
  const said = place.words.every((w) => service.words.some((s) => alike(s, w) !== undefined));
  return own > 0 && said ? cost : undefined;
}

interface CountryPlaces {
  places: { name: string; spellings: Spelled[] }[];
  /** The service name → the gazetteer place it denotes (undefined: none, or more than one). */
  denoted: Map<string, string | undefined>;
}

const byLookup = new WeakMap<SpellingLookup, Map<string, CountryPlaces>>();

function countryPlaces(lookup: SpellingLookup, country: string): CountryPlaces {
  let countries = byLookup.get(lookup);
  if (!countries) byLookup.set(lookup, (countries = new Map()));
  let found = countries.get(country);
  if (!found) {
    const places = lookup
      .placesOf(country)
      .map((p) => ({ name: p.name, spellings: [p.name, ...p.altNames].map(spelled) }));
    countries.set(country, (found = { places, denoted: new Map() }));
  }
  return found;
}

/** The gazetteer place a service's name denotes, when exactly one place is nearest it. */
export function placeDenoted(lookup: SpellingLookup, country: string, serviceName: string): string | undefined {
  const index = countryPlaces(lookup, country);
  if (index.denoted.has(serviceName)) return index.denoted.get(serviceName);
  const service = spelled(serviceName);
  const best = new Map<string, number>();
  for (const place of index.places) {
    let areaWords: string[] | undefined;
    const areas = () =>
      (areaWords ??= (lookup.placeNamed(country, place.name)?.containing ?? []).flatMap((a) => spelled(a.name).words));
    for (const spelling of place.spellings) {
      const d = distance(service, spelling, areas);
      if (d !== undefined && d < (best.get(place.name) ?? Infinity)) best.set(place.name, d);
    }
  }
  const ranked = [...best].sort((a, b) => a[1] - b[1]);
  const [first, second] = ranked;
  const denoted = first && (!second || second[1] > first[1]) ? first[0] : undefined;
  index.denoted.set(serviceName, denoted);
  return denoted;
}

/**
 * The candidates with the service's own spellings added: each priced service name that denotes one of the
 * candidates' places, right after that place's first name, at its precision (a sub-area's spelling before the
 * area's names). Names already among the candidates, under the service's folding, are not repeated.
 */
export function withServiceSpellings(
  lookup: SpellingLookup,
  country: string,
  candidates: NameCandidate[],
  serviceNames: Iterable<string>,
): NameCandidate[] {
  const seen = new Set(candidates.map((c) => foldSpelling(c.name)));
  const byPlace = new Map<string, string[]>();
  for (const name of serviceNames) {
    if (seen.has(foldSpelling(name))) continue;
    const place = placeDenoted(lookup, country, name);
    if (place === undefined) continue;
    seen.add(foldSpelling(name));
    byPlace.set(place, [...(byPlace.get(place) ?? []), name]);
  }
  if (byPlace.size === 0) return candidates;
  const out: NameCandidate[] = [];
  for (const c of candidates) {
    out.push(c);
    for (const name of byPlace.get(c.place) ?? [])
      out.push({ name, place: c.place, precision: c.precision, via: 'service' });
    byPlace.delete(c.place);
  }
  return out;
}
