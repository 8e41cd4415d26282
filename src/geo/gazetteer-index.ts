/**
 * The indexes the resolver reads for one country (gazetteer.ts builds them from the drafted places): every
 * name and alternate name as a key, the same without spaces, its words sorted, its prefixes, and by token and
 * letter count for typo matching; then the shortened forms customers write.
 */
import type { CountryIndex, FuzzyKey, KeyHit, Place } from './gazetteer-types.js';
import { BROAD_FACTOR, compactOf, keyOf, RURAL_FACTOR, type Draft } from './gazetteer-rows.js';
import { LINKING_WORDS, NOISE_WORDS, type CountryCode } from './names.js';
import { normaliseTokens } from './normalise.js';
import { soundKey } from './service-spellings.js';

type AddKey = (key: string, hit: KeyHit, fuzzy: boolean) => void;

/** A name's words without articles, sorted: the key of `byWords` (undefined under two words). */
export function wordsKey(tokens: string[]): string | undefined {
  const words = tokens.filter((t) => !LINKING_WORDS.has(t));
  return words.length < 2 ? undefined : [...words].sort().join(' ');
}

/** A name's words as they sound, run together: "toits rouges" and "toit rouge" → "toitroug". */
export function soundOfTokens(tokens: string[]): string {
  return tokens.map(soundKey).join('');
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

/** Adds one key of a place to every index (not a blocked name's, nor one the place already has). */
function keyAdder(index: CountryIndex, blockedHere: Set<string>): AddKey {
  return (key, hit, fuzzy) => {
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
    const sound = soundOfTokens(tokens);
    if (sound.length >= 5) {
      const slist = index.bySound.get(sound) ?? [];
      if (!slist.some((h) => h.place === hit.place)) slist.push(hit);
      index.bySound.set(sound, slist);
    }
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
}

/** One drafted place, with its name and alternate names as keys. */
function addPlace(
  index: CountryIndex,
  d: Draft,
  context: { blockedHere: Set<string>; foreign: Set<string>; id: number },
  addKey: AddKey,
): void {
  const { blockedHere, foreign } = context;
  const country = index.country;
  const tokens = normaliseTokens(d.name);
  const key = tokens.join(' ');
  const altNames = [...new Set(d.altNames)].filter((a) => keyOf(a) !== key && !blockedHere.has(keyOf(a)));
  const specificity: Place['specificity'] = d.broad
    ? 1
    : d.listedQuartier || tokens.some((t) => /^\d+$/.test(t))
      ? 3
      : 2;
  const place: Place = {
    id: context.id,
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

/**
 * Shortened forms, added once every sourced name is in so that they never shadow one: "Le Plateau" / "Plateau",
 * "Les Almadies" / "Almadies"; a bracketed name's parts; a numbered quartier's bare name; a commune's parts;
 * then "Cité Keur Gorgui" written "Keur Gorgui", "Quartier Chicane" written "Chicane", when the rest is long
 * enough to mean something and names nothing else.
 */
function addShortenedForms(index: CountryIndex, addKey: AddKey): void {
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
    if (/^[a-z]{4,}$/.test(inside) && !index.byKey.has(inside)) addKey(inside, { place, kind: 'abbreviation' }, false);
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
}

/** Every index of one country, over its drafted places; ids continue from `ids.next`. */
export function indexCountry(
  country: CountryCode,
  drafts: Map<string, Draft>,
  blocked: { here: Set<string>; foreign: Set<string> },
  ids: { next: number },
): CountryIndex {
  const index: CountryIndex = {
    country,
    places: [],
    byKey: new Map(),
    byCompact: new Map(),
    bySound: new Map(),
    prefixes: new Set(),
    fuzzyByLength: new Map(),
    byWords: new Map(),
  };
  const addKey = keyAdder(index, blocked.here);
  for (const d of drafts.values())
    addPlace(index, d, { blockedHere: blocked.here, foreign: blocked.foreign, id: ids.next++ }, addKey);
  addShortenedForms(index, addKey);
  return index;
}
