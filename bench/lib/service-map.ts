/**
 * Issue 24 §5: the address corpus scored against a dispatch service's own list of priced names
 * (data/service-maps/, how it was written: README.md there), which spells and cuts the map differently
 * from the gazetteer. For each address the expected answer is the most precise priced name covering the
 * address's true place; the name Relais would send (or its hold) is classified as correct, coarser than
 * priced, held although priced, wrong, a city name, sent at the fallback tariff, or held rightly.
 *
 * The name-choosing function is a parameter (NameChooser): `todaysChooser` scores what the dispatch path
 * sends today; a chooser working from a place's candidates and the service's prices plugs in the same way.
 * Which places a priced name covers: its `covers` column and what the gazetteer's listed parents put
 * inside them (gazetteerContainment); the most precise is the one covering the fewest places.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FALLBACK_TARIFF_XOF, normaliseName, ZONE_TARIFF_XOF } from '@relais/emulators/dispatch';
import { z } from 'zod';
import { csvRecords } from '../../src/geo/csv.js';
import type { Gazetteer, Place } from '../../src/geo/gazetteer.js';
import { normaliseText, type NeighbourhoodResolver, type PricedNames } from '../../src/geo/resolver.js';
import type { CorpusRow } from '../eval-addresses.js';

export const SERVICE_MAPS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'data', 'service-maps');

/** One priced place of a service's list: its spelling, tariff band and the gazetteer places it covers. */
export interface PricedName {
  country: string;
  name: string;
  band: number;
  coords?: { lat: number; lng: number };
  /** Gazetteer place names (exact spellings); the places they contain are covered too. */
  covers: string[];
}

const optionalNumber = z
  .string()
  .trim()
  .transform((s) => (s === '' ? undefined : Number(s)))
  .pipe(z.number().finite().optional());

const PricedRow = z.object({
  country: z.string().trim().length(2),
  name: z.string().trim().min(1),
  band: z.coerce.number().int().min(1).max(5),
  lat: optionalNumber,
  lon: optionalNumber,
  covers: z.string().transform((s) =>
    s
      .split(';')
      .map((c) => c.trim())
      .filter((c) => c !== ''),
  ),
});

/** Reads one list (`country,name,band,lat,lon,covers`); a malformed row or an unknown covered place is an error. */
export function readPricedNames(file: string, gazetteer?: Gazetteer): PricedName[] {
  const rows = csvRecords(readFileSync(file, 'utf8'), file).map((record, n) => {
    const parsed = PricedRow.safeParse(record);
    if (!parsed.success) throw new Error(`${file}: line ${n + 2}: ${parsed.error.message}`);
    const { country, name, band, lat, lon, covers } = parsed.data;
    if (covers.length === 0) throw new Error(`${file}: line ${n + 2}: '${name}' covers no gazetteer place`);
    return {
      country,
      name,
      band,
      ...(lat !== undefined && lon !== undefined ? { coords: { lat, lng: lon } } : {}),
      covers,
    };
  });
  const byKey = new Map<string, string>();
  for (const row of rows) {
    // The service folds case, accents and hyphens: two such spellings would be one priced name.
    const twin = byKey.get(normaliseName(row.name));
    if (twin !== undefined) throw new Error(`${file}: '${row.name}' and '${twin}' are the same name to the service`);
    byKey.set(normaliseName(row.name), row.name);
  }
  if (gazetteer) {
    for (const row of rows) {
      const known = new Set(gazetteer.countries.get(row.country as never)?.places.map((p) => p.name));
      const unknown = row.covers.filter((c) => !known.has(c));
      if (unknown.length > 0)
        throw new Error(`${file}: '${row.name}' covers places not in the gazetteer: ${unknown.join(', ')}`);
    }
  }
  return rows;
}

/** What the service charges for a drop-off name: a zone tariff, or the fallback (it does not price the name). */
export type NamePrice =
  { kind: 'zone'; band: number; totalXof: number; pricedAs: PricedName } | { kind: 'fallback'; totalXof: number };

/** "The price of a name at this service": what a quote for that drop-off name would answer. */
export interface PriceLookup {
  priceOf(name: string): NamePrice;
}

/**
 * The service behind a priced-name list. It matches names the way the emulator does (case, accents,
 * hyphens and apostrophes folded: packages/emulators/src/dispatch/zones.ts), so "Sacre Coeur 3" is its
 * "Sacré Coeur 3" but "Almadies" is not its "Les Almadies". The drop-off band's tariff is the price
 * (a pickup in band 1, as a shop near the centre).
 */
export function serviceTariff(list: PricedName[]): PriceLookup {
  const byKey = new Map(list.map((p) => [normaliseName(p.name), p]));
  return {
    priceOf(name) {
      const pricedAs = byKey.get(normaliseName(name));
      if (!pricedAs) return { kind: 'fallback', totalXof: FALLBACK_TARIFF_XOF };
      return {
        kind: 'zone',
        band: pricedAs.band,
        totalXof: ZONE_TARIFF_XOF[pricedAs.band] ?? FALLBACK_TARIFF_XOF,
        pricedAs,
      };
    },
  };
}

/** Does gazetteer place `area` contain gazetteer place `place` (both exact gazetteer names, one country)? */
export type Containment = (country: string, area: string, place: string) => boolean;

/**
 * The gazetteer's listed containment: the parents the official lists give a place (`Unité 17` →
 * Parcelles Assainies, `Sicogi` → Yopougon) and Dakar's départements (`admin2`), followed upwards, each
 * parent broader than its child (the quartier Almadies, which the gazetteer folds with the arrondissement
 * of that name, does not hold the commune Mermoz-Sacré-Cœur; the town of Rufisque does not hold Diamniadio). Only
 * what the data states: the resolver's distance rules (a quartier within 6 km of a commune's point) tell
 * nested names from rivals in one address, and are too loose to say which area a place lies in, so a list
 * names the sub-areas of an area the gazetteer gives no parent for in its `covers`.
 */
export function gazetteerContainment(gazetteer: Gazetteer): Containment {
  // Same size is enough below the communes: Dalifort holds the cité Hilal listed under it.
  const broader = (parent: Place, child: Place) =>
    parent.specificity < child.specificity ||
    (parent.specificity === child.specificity && child.specificity > 1 && !child.commune);
  const ancestors = new Map<string, Set<string>>();
  const ancestorsOf = (country: string, name: string): Set<string> => {
    const key = `${country}|${name}`;
    let found = ancestors.get(key);
    if (found) return found;
    found = new Set();
    const index = gazetteer.countries.get(country as never);
    let frontier = index?.places.filter((p) => p.name === name) ?? [];
    for (let depth = 0; depth < 4 && index && frontier.length > 0; depth++) {
      frontier = frontier.flatMap((p) =>
        p.parents
          .flatMap((parent) => index.byKey.get(parent.join(' ')) ?? [])
          .filter((hit) => hit.kind === 'exact' && broader(hit.place, p) && !found!.has(hit.place.name))
          .map((hit) => hit.place),
      );
      for (const p of frontier) found.add(p.name);
    }
    ancestors.set(key, found);
    return found;
  };
  return (country, area, place) => area !== place && ancestorsOf(country, place).has(area);
}

/** A city, region or country name of the address's own country (Niamey's quartier "Abidjan" is not one). */
export function cityNameTest(gazetteer: Gazetteer): (country: string | undefined, name: string) => boolean {
  return (country, name) => {
    const key = normaliseText(name);
    return gazetteer.blocked.some(
      (b) => b.key === key && (b.kind === 'country' || country === undefined || b.country === country),
    );
  };
}

/**
 * What Relais does with one order: sends a name in `city`, or holds the order with a reason and, when the chooser
 * says, the candidate names it had for the place (the issue's "held while a candidate is priced" reads them).
 */
export type Choice = { sent: string } | { held: string; candidates?: string[] };

/**
 * Chooses the name sent for one corpus address, knowing only what a quote would answer (`service`). It may
 * answer later (a chooser that quotes over HTTP): addresses are scored one after the other, in corpus order.
 */
export type NameChooser = (row: CorpusRow, service: PriceLookup) => Choice | Promise<Choice>;

/**
 * Today's dispatch path (src/orders/dispatch/dispatch-order.ts resolveDropoff and tariffCheck, with the memory of
 * src/orders/dispatch/tariff-guard.ts): the resolver sends the most precise nested name the service is KNOWN to price,
 * else the area; the fallback-tariff guard quotes that name, then the wider names the address gives, and
 * holds when each is at the fallback. What it saw is remembered for the next orders (priced, or not), as
 * the guard's memory does; nothing else is learned, and no alias is added.
 */
export function todaysChooser(resolver: Pick<NeighbourhoodResolver, 'resolve'>): NameChooser {
  const seen = new Map<string, boolean>();
  const pricing: PricedNames = { isPriced: (name) => seen.get(name) };
  return (row, service) => {
    const r = resolver.resolve({ ...row.input, pricing });
    if (!r.ok) return { held: r.reason };
    const { name } = r.neighbourhood;
    const levels = r.level?.levels.map((l) => l.name) ?? [name];
    const at = levels.indexOf(name);
    const candidates = at >= 0 ? levels.slice(at) : [name];
    for (const candidate of candidates) {
      const priced = service.priceOf(candidate).kind === 'zone';
      seen.set(candidate, priced);
      if (priced) return { sent: candidate };
    }
    return {
      held: `the delivery service does not price ${candidates.map((c) => `'${c}'`).join(', then ')}`,
      candidates,
    };
  };
}

export type Category = 'correct' | 'coarser' | 'held-priced' | 'wrong' | 'city' | 'fallback' | 'held-rightly';

export const CATEGORY_LABELS: Readonly<Record<Category, string>> = {
  correct: 'correct (the most precise priced name)',
  coarser: 'coarser than priced (a wider priced name sent)',
  'held-priced': 'held although priced',
  wrong: 'wrong (a name that does not cover the place)',
  city: 'city names sent',
  fallback: 'sent at the fallback tariff (place right, name not priced)',
  'held-rightly': 'held rightly (nothing priced covers the place, or nothing to resolve)',
};

/** What the scorer knows of one address: its true places and the priced names it should be sent under. */
export interface Truth {
  country: string;
  /** The most precise gazetteer places the address denotes; empty when it must be held. */
  places: string[];
  /** The most precise priced names covering one of the places; empty when nothing priced covers them. */
  expected: PricedName[];
}

/** Every gazetteer place a priced name covers: its `covers` and the places the gazetteer puts inside them. */
export function extentOf(entry: PricedName, gazetteer: Gazetteer, contains: Containment): Set<string> {
  const places = gazetteer.countries.get(entry.country as never)?.places ?? [];
  const inside = places.filter((p) => entry.covers.some((c) => contains(entry.country, c, p.name)));
  return new Set([...entry.covers, ...inside.map((p) => p.name)]);
}

/** A service's list with each priced name's extent, for the scorer. */
export interface ServiceMap {
  country: string;
  entries: { entry: PricedName; extent: Set<string> }[];
}

export function serviceMap(
  country: string,
  list: PricedName[],
  gazetteer: Gazetteer,
  contains: Containment,
): ServiceMap {
  const entries = list
    .filter((e) => e.country === country)
    .map((entry) => ({ entry, extent: extentOf(entry, gazetteer, contains) }));
  return { country, entries };
}

const strictlyInside = (a: Set<string>, b: Set<string>) => a.size < b.size && [...a].every((x) => b.has(x));

/** The most precise priced names for each true place: covering it, and no other name covering it covers strictly less. */
export function truthFor(places: string[], map: ServiceMap): Truth {
  const expected = new Set<PricedName>();
  for (const place of places) {
    const covering = map.entries.filter((e) => e.extent.has(place));
    for (const c of covering) {
      if (!covering.some((o) => strictlyInside(o.extent, c.extent))) expected.add(c.entry);
    }
  }
  return { country: map.country, places, expected: [...expected] };
}

export interface ClassifyContext {
  service: PriceLookup;
  map: ServiceMap;
  contains: Containment;
  isCityName: (country: string | undefined, name: string) => boolean;
}

/** Sorts one choice into its category against the address's truth. */
export function classify(choice: Choice, truth: Truth, ctx: ClassifyContext): Category {
  if ('held' in choice) return truth.expected.length > 0 ? 'held-priced' : 'held-rightly';
  const sent = choice.sent;
  if (ctx.isCityName(truth.country, sent)) return 'city';
  const price = ctx.service.priceOf(sent);
  if (price.kind === 'fallback') {
    const denotes = truth.places.some((p) => p === sent || ctx.contains(truth.country, sent, p));
    return denotes ? 'fallback' : 'wrong';
  }
  if (truth.expected.includes(price.pricedAs)) return 'correct';
  const extent = ctx.map.entries.find((e) => e.entry === price.pricedAs)?.extent;
  const covers = truth.places.some((p) => extent?.has(p) === true);
  return covers ? 'coarser' : 'wrong';
}

/**
 * The true place of the addresses whose expected name is not their most precise place (an area sent for
 * "Ouakam, cité Avion"), by corpus id: test/fixtures/addresses/true-places.csv (`id,places,note`,
 * places `|`-separated). Every other row's true places are its expected names.
 */
export function readTruePlaces(file: string): Map<string, string[]> {
  return new Map(
    csvRecords(readFileSync(file, 'utf8'), file).map((r) => [
      r.id ?? '',
      (r.places ?? '').split('|').map((s) => s.trim()),
    ]),
  );
}

export interface ServiceMapRow {
  row: CorpusRow;
  truth: Truth;
  choice: Choice;
  category: Category;
  /** What the customer pays above the most precise priced name (coarser or fallback sends), in XOF. */
  overchargeXof: number;
}

export interface ServiceMapReport {
  label: string;
  rows: ServiceMapRow[];
  counts: Record<Category, number>;
  /**
   * Issue 24's own measure, looser than `held-priced`: orders held while one of the chooser's candidate names is
   * priced (it had the name and did not send it). `held-priced` also counts a hold where the service prices the
   * place only under a name the chooser never had.
   */
  heldWithCandidatePriced: number;
  overchargeXof: number;
}

/** Held, while the service prices one of the names the chooser had for the place. */
export function heldWithCandidatePriced(choice: Choice, service: PriceLookup): boolean {
  return 'held' in choice && (choice.candidates ?? []).some((name) => service.priceOf(name).kind === 'zone');
}

export interface ScoreOptions extends ClassifyContext {
  chooser: NameChooser;
  truePlaces: Map<string, string[]>;
  label: string;
}

/** Scores every row of one country against that country's priced-name list, in corpus order. */
export async function scoreServiceMap(rows: CorpusRow[], options: ScoreOptions): Promise<ServiceMapReport> {
  const { chooser, service, truePlaces, map } = options;
  const scored: ServiceMapRow[] = [];
  for (const row of rows) {
    const truth = truthFor(truePlaces.get(row.id) ?? row.expect, map);
    const choice = await chooser(row, service);
    const category = classify(choice, truth, options);
    const paid = 'sent' in choice ? service.priceOf(choice.sent).totalXof : 0;
    const due = Math.min(...truth.expected.map((e) => ZONE_TARIFF_XOF[e.band] ?? FALLBACK_TARIFF_XOF));
    const overchargeXof = category === 'coarser' || category === 'fallback' ? Math.max(0, paid - due) : 0;
    scored.push({ row, truth, choice, category, overchargeXof });
  }
  const counts = Object.fromEntries(Object.keys(CATEGORY_LABELS).map((c) => [c, 0])) as Record<Category, number>;
  for (const s of scored) counts[s.category]++;
  return {
    label: options.label,
    rows: scored,
    counts,
    heldWithCandidatePriced: scored.filter((s) => heldWithCandidatePriced(s.choice, service)).length,
    overchargeXof: scored.reduce((sum, s) => sum + s.overchargeXof, 0),
  };
}

export function formatServiceMap(rep: ServiceMapReport, list = false): string {
  const n = rep.rows.length;
  const pct = (a: number) => (n === 0 ? '-' : `${((100 * a) / n).toFixed(1)}%`);
  const lines = [`Against ${rep.label}: ${n} addresses`];
  for (const [category, label] of Object.entries(CATEGORY_LABELS) as [Category, string][]) {
    lines.push(`  ${label}: ${rep.counts[category]} (${pct(rep.counts[category])})`);
  }
  lines.push(`  held while a candidate is priced (the issue's measure): ${rep.heldWithCandidatePriced}`);
  lines.push(`  customers overcharged in all: ${rep.overchargeXof} XOF`);
  const shown = rep.rows.filter((s) => list || !['correct', 'held-rightly'].includes(s.category));
  for (const s of shown) {
    const got = 'sent' in s.choice ? `sent ${s.choice.sent}` : 'held';
    const want = s.truth.expected.map((e) => e.name).join(' | ') || 'hold';
    lines.push(`  ${s.row.id} [${s.category}] ${s.truth.places.join(' | ') || '-'}: ${got}, expected ${want}`);
  }
  return lines.join('\n');
}

/** Each list's counts by category, one column per chooser (same lists, same order). */
export function formatBeside(columns: { title: string; reports: ServiceMapReport[] }[]): string {
  const lines = [`Choice of name, ${columns.map((c) => c.title).join(' / ')}:`];
  columns[0]?.reports.forEach((rep, i) => {
    const cells = columns.map((c) => c.reports[i]);
    const row = (label: string, value: (r: ServiceMapReport) => number) =>
      lines.push(`    ${label}: ${cells.map((c) => (c ? value(c) : '-')).join(' / ')}`);
    lines.push(`  ${rep.label}`);
    for (const [category, label] of Object.entries(CATEGORY_LABELS) as [Category, string][])
      row(label, (r) => r.counts[category]);
    row("held while a candidate is priced (the issue's measure)", (r) => r.heldWithCandidatePriced);
    row('customers overcharged, XOF', (r) => r.overchargeXof);
  });
  return lines.join('\n');
}

/** Issue 24's "done when" on one list: nothing held while priced, nothing coarser, wrong, a city name or at the fallback. */
export function meetsServiceMapTargets(rep: ServiceMapReport): boolean {
  const { coarser, wrong, city, fallback } = rep.counts;
  return rep.counts['held-priced'] + coarser + wrong + city + fallback === 0;
}
