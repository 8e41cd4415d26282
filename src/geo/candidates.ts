/**
 * The names that denote one resolved place, in the order they are worth trying with a delivery service.
 *
 * The service prices its own list of places, spelled and cut its own way (spec §1: a name it does not
 * know is priced at the fallback tariff). So a resolved place is not one name but a list: the gazetteer's
 * spelling, every alternate spelling it knows (the official lists' spellings are among them), the same
 * name without its article or with "Les" before a plural, the merchant's aliases for it, then the wider
 * places that contain it, sub-area → area → commune. Never a city, region or country name: those are
 * always priced at the fallback (DESIGN.md, `city`).
 *
 * Pure: the resolver gives the places (NeighbourhoodResolver.placeNamed), this orders and spells them.
 */
import type { Neighbourhood } from './types.js';

export interface NameCandidate {
  /** The text sent in `city`. */
  name: string;
  /** The gazetteer place it denotes (its spelling in the gazetteer). */
  place: string;
  /** 0 for the place the address names; 1, 2… for each wider place holding it. Lower is more precise. */
  precision: number;
  /** 'service': the service's own spelling of the place, read from its map (service-spellings.ts). */
  via: 'gazetteer' | 'spelling' | 'variant' | 'alias' | 'area' | 'service';
}

export interface CandidateInput {
  /** The most precise place the address names. */
  place: Pick<Neighbourhood, 'name' | 'altNames'>;
  /** Wider places holding it, most precise first: those the address names, then those the gazetteer knows. */
  wider: Pick<Neighbourhood, 'name' | 'altNames'>[];
  /** The merchant's aliases: the customer's words → a gazetteer name. */
  aliases: Record<string, string>;
  /** True for the country's city, region and country names. */
  isCityRegionOrCountry(text: string): boolean;
  /**
   * The gazetteer place a name denotes, when it knows one: a derived spelling that is another place's name
   * ("Sicogi" from Bingerville's Cité Sicogi is Yopougon's Sicogi) is not a spelling of this one.
   */
  placeOf?(text: string): string | undefined;
}

/**
 * Spellings of one place worth a quote each: a long list of foreign-language names would waste the budget. A
 * wider place's nicknames ("Yop City") are worth fewer: its own name is the likely one.
 */
const MAX_SPELLINGS = 6;
const MAX_SPELLINGS_OF_WIDER = 2;

/**
 * How a service is likely to compare names: case, accents, hyphens, apostrophes and spacing folded. Two
 * spellings equal under it are one candidate (one quote), unlike the resolver's folding, which also reads
 * "III" as "3" (a service may not).
 */
export function foldSpelling(name: string): string {
  return foldedAtLoad.get(name) ?? foldedSpelling(name);
}

/** The gazetteer's names and alternate names, folded once when it is read (rememberFoldedSpellings). */
const foldedAtLoad = new Map<string, string>();

/** Folds these names (a gazetteer's, at load) once, for every later foldSpelling of them. */
export function rememberFoldedSpellings(names: Iterable<string>): void {
  for (const name of names) if (!foldedAtLoad.has(name)) foldedAtLoad.set(name, foldedSpelling(name));
}

/** ASCII letters, digits and spaces: nothing to unaccent or to read as a space but the spaces themselves. */
const PLAIN_SPELLING = /^[A-Za-z0-9 ]*$/;

function foldedSpelling(name: string): string {
  if (PLAIN_SPELLING.test(name)) return name.toLowerCase().replace(/ {2,}/g, ' ').trim();
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/œ/g, 'oe')
    .replace(/[-‐‑‒–—'’‘`´ʼ_.,/]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Latin letters, digits and the punctuation of place names: not "Плато" or "ダカール". */
const LATIN_NAME = /^[\p{Script=Latin}\p{M}\d\s'’().,/-]+$/u;
/** A wider unit's name folded into a place's spellings ("Plateau/Gorée Arrondissement"): not this place. */
const ADMINISTRATIVE = /\barrondissement\b|\bd[ée]partement\b|\bcommune\b|\br[ée]gion\b/iu;
const ARTICLE = /^(?:les?|la)\s+(.+)$|^l['’]\s*(.+)$/iu;

/** A generic word some lists drop before a name ("Cité Keur Gorgui" is "Keur Gorgui" to them). */
const GENERIC = /^cit[ée]\s+(.+)$/iu;

/**
 * "Les Almadies" → "Almadies"; "Almadies" → "Les Almadies" (a plural name often takes the article);
 * "Cité Keur Gorgui" → "Keur Gorgui".
 */
export function spellingVariants(name: string): string[] {
  const article = ARTICLE.exec(name);
  if (article) return [(article[1] ?? article[2] ?? '').trim()].filter((v) => v.length >= 3);
  const generic = GENERIC.exec(name.trim());
  if (generic) return [(generic[1] ?? '').trim()].filter((v) => v.length >= 3);
  const words = name.trim().split(/\s+/);
  const last = words.at(-1) ?? '';
  return words.length <= 2 && /^\p{L}{4,}s$/u.test(last) && !/ss$/u.test(last) ? [`Les ${name.trim()}`] : [];
}

const ROMAN_NUMERALS = ['I', 'II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX', 'X'];
const NUMBER_WORDS = ['un', 'deux', 'trois', 'quatre', 'cinq', 'six', 'sept', 'huit', 'neuf', 'dix'];

/**
 * A unit number as lists write it otherwise: "II Plateaux-Vallons" is "Deux Plateaux-Vallons" and "2 Plateaux-
 * Vallons", "Vitré Deux" is "Vitré 2", "Sacré-Cœur III" "Sacré-Cœur 3". A numeral becomes the digit (the form
 * most lists use), and a roman one opening the name the word too; a digit stays (the others are rarer).
 */
export function numeralVariants(name: string): string[] {
  const words = name.trim().split(/(\s+|-)/u);
  const at = words.findIndex((w) => ROMAN_NUMERALS.includes(w) || NUMBER_WORDS.includes(w.toLowerCase()));
  if (at === -1 || words.filter((w) => /\p{L}/u.test(w)).length < 2) return [];
  const roman = ROMAN_NUMERALS.indexOf(words[at]!);
  const n = roman >= 0 ? roman : NUMBER_WORDS.indexOf(words[at]!.toLowerCase());
  const word = NUMBER_WORDS[n]!;
  // The word where it opens the name ("Deux Plateaux"); after a name the digit ("Sacré-Cœur 3").
  const forms = roman >= 0 && at === 0 ? [word[0]!.toUpperCase() + word.slice(1), String(n + 1)] : [String(n + 1)];
  return forms.map((f) => [...words.slice(0, at), f, ...words.slice(at + 1)].join(''));
}

/** A numbered or ordinal name ("7ᵉ tranche", "Unité 17", "Sacré-Cœur III"): one of a series, never plural. */
const NUMBERED = /\d|ᵉ|^[IVX]+(?:e|er|re|[èe]me|i[èe]me)?$/u;

/**
 * French nouns (trees, animals, landforms) the gazetteer's quartiers are named after, which lists write in the
 * singular or the plural: Castor and Cité castors, Rosier and Rosiers 1er Programme, Mamelles, Parcelles
 * Assainies. Most names are not nouns of this kind ("Ouakam", "Sicogi", "Plateau"): their plural is no list's
 * spelling and would spend a quote of the order's budget for nothing.
 */
const NOUNS_WRITTEN_IN_THE_PLURAL = new Set(
  ['baobab', 'castor', 'figuier', 'manguier', 'rosier', 'avocatier', 'mamelle', 'parcelle'].map(foldSpelling),
);

/**
 * "Castor" → "Castors", "Sicap Baobab" → "Sicap Baobabs". Tried for the place the address names only (a wider
 * place's own name is the likely one), and only for a bare name of one or two words ending in such a noun: not
 * after an article ("Le Plateau"), not a cité's name ("Cité Avion" names one estate), not one of a numbered
 * series ("7ᵉ tranche").
 */
export function pluralVariant(name: string): string[] {
  const trimmed = name.trim();
  const words = trimmed.split(/\s+/);
  if (words.length > 2 || ARTICLE.test(trimmed) || GENERIC.test(trimmed)) return [];
  if (words.some((w) => NUMBERED.test(w))) return [];
  return NOUNS_WRITTEN_IN_THE_PLURAL.has(foldSpelling(words.at(-1) ?? '')) ? [`${trimmed}s`] : [];
}

/**
 * The place's name under the area holding it, as lists that cut a commune into its quartiers write it
 * ("Yopougon Sicogi", "Adjamé 220 Logements", "Angré 8ᵉ tranche"). None when the two names share a word: the
 * place already opens with the area ("Angré Cocoteraie" in Angré) or the area already carries the place's name
 * ("Sacré Coeur" in Mermoz-Sacré-Cœur would give "Mermoz-Sacré-Cœur Sacré Coeur").
 */
export function underArea(place: string, area: string | undefined): string | undefined {
  if (area === undefined) return undefined;
  // "Vallon" in "II Plateaux-Vallons" shares its word: singular and plural are one word here.
  const stems = (name: string) =>
    foldSpelling(name)
      .split(' ')
      .map((w) => (w.length > 3 ? w.replace(/[sx]$/u, '') : w));
  const placeWords = new Set(stems(place));
  const shared = stems(area).some((w) => w.length >= 3 && placeWords.has(w));
  return shared ? undefined : `${area.trim()} ${place.trim()}`;
}

function spellingsOf(
  place: Pick<Neighbourhood, 'name' | 'altNames'>,
  area: string | undefined,
  named: boolean,
): { name: string; via: NameCandidate['via'] }[] {
  const usable = place.altNames.filter((a) => LATIN_NAME.test(a) && !ADMINISTRATIVE.test(a));
  const compound = underArea(place.name, area);
  const under = compound === undefined ? [] : [{ name: compound, via: 'variant' as const }];
  const sourced = usable.map((name) => ({ name, via: 'spelling' as const }));
  const variants = [place.name, ...usable].flatMap(spellingVariants);
  variants.push(...numeralVariants(place.name));
  if (named) variants.push(...pluralVariant(place.name));
  return [...under, ...sourced, ...variants.map((name) => ({ name, via: 'variant' as const }))];
}

/** The candidate names of a resolved place, most precise first, each spelling once, never a city name. */
export function candidateNames(input: CandidateInput): NameCandidate[] {
  const out: NameCandidate[] = [];
  const seen = new Set<string>();
  const chain = new Set([input.place, ...input.wider].map((p) => p.name));
  const elsewhere = (name: string) => {
    const other = input.placeOf?.(name);
    return other !== undefined && !chain.has(other);
  };
  const add = (name: string, place: string, precision: number, via: NameCandidate['via']) => {
    const folded = foldSpelling(name);
    if (folded === '' || seen.has(folded) || input.isCityRegionOrCountry(name)) return false;
    if (via === 'variant' && elsewhere(name)) return false;
    seen.add(folded);
    out.push({ name: name.trim(), place, precision, via });
    return true;
  };
  const places = [input.place, ...input.wider];
  places.forEach((place, precision) => {
    const own = add(place.name, place.name, precision, precision === 0 ? 'gazetteer' : 'area');
    if (!own && precision > 0) return; // a wider place already listed (or a city name): not again
    let spellings = 0;
    const area = places.slice(precision + 1).find((p) => !input.isCityRegionOrCountry(p.name))?.name;
    for (const s of spellingsOf(place, area, precision === 0)) {
      if (spellings >= (precision === 0 ? MAX_SPELLINGS : MAX_SPELLINGS_OF_WIDER)) break;
      if (add(s.name, place.name, precision, s.via)) spellings++;
    }
    if (precision === 0) {
      const keys = new Set([place.name, ...place.altNames].map(foldSpelling));
      for (const [text, target] of Object.entries(input.aliases)) {
        if (keys.has(foldSpelling(target))) add(text, place.name, 0, 'alias');
      }
    }
  });
  return out;
}

/** "Hann Maristes 1" → "Hann Maristes"; none for a single word before the number ("Unité 17", "PK 18"). */
export function unnumbered(name: string): string | undefined {
  const match = /^(.+?)\s+(?:\d+|[IVX]+)$/u.exec(name.trim());
  const rest = match?.[1];
  return rest !== undefined && foldSpelling(rest).split(' ').length >= 2 ? rest : undefined;
}

/**
 * The part of a hyphen-joined name ("Dieuppeul-Derklé": Dieuppeul, Derklé) that the address's words name alone,
 * a number after it allowed ("Dieuppeul 2"): a quartier of the commune named after it.
 */
export function typedPart(name: string, evidence: { text: string }[]): string | undefined {
  const parts = name.split('-').map((p) => p.trim());
  if (parts.length < 2) return undefined;
  const typed = new Set(evidence.map((e) => foldSpelling(e.text).replace(/(?:\s+\d+)+$/u, '')));
  return parts.find((p) => p.length >= 3 && typed.has(foldSpelling(p)));
}

/**
 * The numbered unit the address names where the gazetteer lists only its base name ("Liberte 5" → "Liberté 5",
 * "Dieuppeul 2" → "Dieuppeul 2"): the base's spelling and the number typed, when nothing but the number follows
 * the name ("Liberté 6 extension" is another unit, which the base holds but this name may not).
 */
export function numberedUnit(
  place: Pick<Neighbourhood, 'name' | 'altNames'>,
  evidence: { text: string; via?: string }[],
): string | undefined {
  const names = new Set([place.name, ...place.altNames].map(foldSpelling));
  for (const e of evidence) {
    const m = /^(.*\D)\s+(\d+)$/u.exec(e.text.trim());
    if (e.via === 'numbered' && m && names.has(foldSpelling(m[1]!))) return `${place.name} ${m[2]}`;
  }
  return undefined;
}

/** What candidatesOf reads of the resolver. */
export interface PlaceLookup {
  placeNamed(country: string, name: string): { place: Neighbourhood; containing: Neighbourhood[] } | undefined;
  /** placeNamed's place's name, without working out the wider places (a variant's check, per candidate name). */
  placeNameOf?(country: string, name: string): string | undefined;
  isCityRegionOrCountry(country: string, text: string): boolean;
}

/**
 * The candidates of a resolution: from its most precise level (`level.levels[0]`, the place the address names
 * most precisely), through the wider levels the address names, to the wider places the gazetteer knows.
 */
export function candidatesOf(
  lookup: PlaceLookup,
  resolved: {
    neighbourhood: Neighbourhood;
    level?: { levels: { name: string }[] };
    evidence?: { text: string; via?: string }[];
  },
  aliases: Record<string, string>,
): NameCandidate[] {
  const { country } = resolved.neighbourhood;
  const placeOf = (text: string) =>
    lookup.placeNameOf ? lookup.placeNameOf(country, text) : lookup.placeNamed(country, text)?.place.name;
  const levels = resolved.level?.levels.map((l) => l.name) ?? [resolved.neighbourhood.name];
  const [finest = resolved.neighbourhood.name, ...typed] = levels;
  const found = lookup.placeNamed(country, finest);
  const named = found?.place ?? resolved.neighbourhood;
  // The gazetteer's containing places first, finest to widest (a level the address also names keeps that rank:
  // "Zone 4c, Marcory" tries Zone 4 before Marcory), then the other levels the address names.
  const wider: Neighbourhood[] = [...(found?.containing ?? [])];
  // "Dieuppeul 2" for the commune Dieuppeul-Derklé: the part typed is the place, the commune its area.
  const part = typedPart(named.name, resolved.evidence ?? []);
  if (part !== undefined) wider.unshift(named);
  const unnumberedPlace = part === undefined ? named : { ...named, name: part, altNames: [] };
  // "Liberte 5" where the gazetteer lists only Liberté: the unit typed is the place, Liberté its area.
  const unit = numberedUnit(unnumberedPlace, resolved.evidence ?? []);
  if (unit !== undefined) wider.unshift(unnumberedPlace);
  const place = unit === undefined ? unnumberedPlace : { ...unnumberedPlace, name: unit, altNames: [] };
  // "Hann Maristes 1" lies in Hann Maristes, which a service may price as a whole though the gazetteer lists only
  // its numbered parts. Not when that name is another place's: Port-Bouet II is a Yopougon quartier, and
  // "Port-Bouet" the commune across the lagoon.
  const whole = unnumbered(place.name);
  const elsewhere = whole === undefined ? undefined : placeOf(whole);
  const another = elsewhere !== undefined && elsewhere !== named.name && !wider.some((w) => w.name === elsewhere);
  if (whole && !another && !wider.some((w) => foldSpelling(w.name) === foldSpelling(whole)))
    wider.unshift({ ...place, name: whole, altNames: [] });
  for (const name of typed) {
    if (wider.some((w) => w.name === name)) continue;
    const level = lookup.placeNamed(country, name);
    // Before the first wider place holding it: "Angré 9e tranche" tries Angré before Cocody.
    const holders = new Set(level?.containing.map((c) => c.name));
    const at = wider.findIndex((w) => holders.has(w.name));
    wider.splice(at === -1 ? wider.length : at, 0, level?.place ?? { ...resolved.neighbourhood, name, altNames: [] });
    // Then the places holding that level, if the place's own chain has not reached them: Angré is in Cocody.
    for (const holder of level?.containing ?? []) if (!wider.some((w) => w.name === holder.name)) wider.push(holder);
  }
  return candidateNames({
    place,
    wider,
    aliases,
    isCityRegionOrCountry: (text) => lookup.isCityRegionOrCountry(country, text),
    placeOf,
  });
}
