/**
 * `npm run eval:addresses`: the neighbourhood resolver against the address corpus of
 * test/fixtures/addresses/ (how it was written: README.md there). Prints accuracy on the addresses that
 * name a listed neighbourhood, the wrong names sent, the holds that should have resolved, the city names
 * sent, and the holds whose reason does not say what to add. `--list` prints every row's outcome;
 * `--check` exits 1 when a target of issue 18 is missed (≥ 98% resolved, 0 wrong, 0 city names).
 *
 * Then (issue 24 §5) the Dakar and Abidjan addresses against a dispatch service's own priced names
 * (data/service-maps/): correct, coarser than priced, held although priced, wrong, city names, at the
 * fallback tariff, held rightly (bench/lib/service-map.ts). `--check-map` exits 1 unless every list shows
 * no hold while a name is priced, nothing coarser, wrong, a city name or at the fallback.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { csvRecords } from '../src/geo/csv.js';
import { loadGazetteer } from '../src/geo/gazetteer.js';
import { normaliseText, NeighbourhoodResolver, type ResolveInput } from '../src/geo/resolver.js';
import {
  cityNameTest,
  formatBeside,
  formatServiceMap,
  readPricedNames,
  readTruePlaces,
  gazetteerContainment,
  serviceMap,
  scoreServiceMap,
  serviceTariff,
  SERVICE_MAPS_DIR,
  todaysChooser,
  meetsServiceMapTargets,
  type NameChooser,
  type PriceLookup,
  type ServiceMapReport,
} from './lib/service-map.js';
import { dispatchChooser, learnedMap } from './lib/dispatch-chooser.js';

export const CORPUS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'addresses');

export interface CorpusRow {
  id: string;
  input: ResolveInput;
  /** Acceptable names, or empty when the address must be held. */
  expect: string[];
  source: string;
}

export type Outcome = 'correct' | 'wrong' | 'missed' | 'held';

export interface RowResult {
  row: CorpusRow;
  outcome: Outcome;
  sent?: string;
  reason?: string;
  cityNameSent: boolean;
  /** A hold whose reason does not tell the merchant what to add. */
  vagueHold: boolean;
}

export interface Report {
  rows: RowResult[];
  byCountry: Record<string, number>;
  resolvable: number;
  resolvedCorrectly: number;
  wrongSends: RowResult[];
  missed: RowResult[];
  cityNamesSent: RowResult[];
  vagueHolds: RowResult[];
}

function num(s: string | undefined): number | undefined {
  return s === undefined || s.trim() === '' ? undefined : Number(s);
}

export function readCorpus(dir = CORPUS_DIR): CorpusRow[] {
  const files = readdirSync(dir)
    .filter((f) => f.startsWith('corpus-') && f.endsWith('.csv'))
    .sort();
  return files.flatMap((f) =>
    csvRecords(readFileSync(join(dir, f), 'utf8'), join(dir, f)).map((r) => {
      const lat = num(r.lat);
      const lng = num(r.lng);
      const accuracyM = num(r.accuracy_m);
      const fields = Object.fromEntries(
        (['address1', 'address2', 'city', 'province'] as const)
          .filter((k) => (r[k] ?? '') !== '')
          .map((k) => [k, r[k]]),
      );
      const input: ResolveInput = {
        country: r.country,
        fields,
        ...(lat !== undefined && lng !== undefined
          ? { coords: { lat, lng, ...(accuracyM !== undefined ? { accuracyM } : {}) } }
          : {}),
      };
      const expect =
        r.expect === 'hold'
          ? []
          : (r.expect ?? '')
              .split('|')
              .map((s) => s.trim())
              .filter((s) => s !== '');
      return { id: r.id ?? '?', input, expect, source: r.source ?? '' };
    }),
  );
}

/** A hold tells the merchant what to add: a neighbourhood, an alias, the number, coordinates or the country. */
const SAYS_WHAT_TO_ADD = /\b(add|set)\b/;

export function evaluateCorpus(
  rows: CorpusRow[] = readCorpus(),
  resolver: Pick<NeighbourhoodResolver, 'resolve' | 'dataDir'> = NeighbourhoodResolver.load(),
): Report {
  const isCityName = cityNameTest(loadGazetteer(resolver.dataDir));
  const results = rows.map((row): RowResult => {
    const r = resolver.resolve(row.input);
    if (!r.ok) {
      return {
        row,
        outcome: row.expect.length === 0 ? 'held' : 'missed',
        reason: r.reason,
        cityNameSent: false,
        vagueHold: !SAYS_WHAT_TO_ADD.test(r.reason),
      };
    }
    const sent = r.neighbourhood.name;
    const ok = row.expect.some((e) => normaliseText(e) === normaliseText(sent));
    return {
      row,
      outcome: ok ? 'correct' : 'wrong',
      sent,
      cityNameSent: isCityName(row.input.country?.toUpperCase(), sent),
      vagueHold: false,
    };
  });
  const byCountry: Record<string, number> = {};
  for (const r of rows) byCountry[r.input.country ?? '?'] = (byCountry[r.input.country ?? '?'] ?? 0) + 1;
  const resolvable = results.filter((r) => r.row.expect.length > 0);
  return {
    rows: results,
    byCountry,
    resolvable: resolvable.length,
    resolvedCorrectly: resolvable.filter((r) => r.outcome === 'correct').length,
    wrongSends: results.filter((r) => r.outcome === 'wrong'),
    missed: results.filter((r) => r.outcome === 'missed'),
    cityNamesSent: results.filter((r) => r.cityNameSent),
    vagueHolds: results.filter((r) => r.vagueHold),
  };
}

const fieldsText = (r: CorpusRow) =>
  [...Object.values(r.input.fields), r.input.coords ? `@${r.input.coords.lat},${r.input.coords.lng}` : '']
    .filter(Boolean)
    .join(' | ');

export function formatReport(rep: Report, list = false): string {
  const pct = (a: number, b: number) => (b === 0 ? '-' : `${((100 * a) / b).toFixed(1)}%`);
  const lines = [
    `Address corpus: ${rep.rows.length} addresses (${Object.entries(rep.byCountry)
      .map(([c, n]) => `${c} ${n}`)
      .join(', ')}), ${rep.resolvable} resolvable, ${rep.rows.length - rep.resolvable} to hold`,
    `Resolved correctly: ${rep.resolvedCorrectly}/${rep.resolvable} resolvable (${pct(rep.resolvedCorrectly, rep.resolvable)})`,
    `Wrong neighbourhoods sent: ${rep.wrongSends.length}`,
    `Held but resolvable: ${rep.missed.length}`,
    `City names sent: ${rep.cityNamesSent.length}`,
    `Holds whose reason names nothing to add: ${rep.vagueHolds.length}`,
  ];
  const show = (title: string, rs: RowResult[]) => {
    if (rs.length === 0) return;
    lines.push('', `${title}:`);
    for (const r of rs) {
      const got = r.sent !== undefined ? `sent ${r.sent}` : `held: ${r.reason}`;
      lines.push(`  ${r.row.id} ${fieldsText(r.row)} → ${got} (expected ${r.row.expect.join(' | ') || 'hold'})`);
    }
  };
  show('Wrong sends', rep.wrongSends);
  show('Held but resolvable', rep.missed);
  show('City names sent', rep.cityNamesSent);
  show('Vague holds', rep.vagueHolds);
  if (list) show('All rows', rep.rows);
  return lines.join('\n');
}

/** Issue 18's targets: ≥ 98% of resolvable addresses right, no wrong name, no city name, every hold says what to add. */
export function meetsTargets(rep: Report): boolean {
  return (
    rep.resolvedCorrectly >= 0.98 * rep.resolvable &&
    rep.wrongSends.length === 0 &&
    rep.cityNamesSent.length === 0 &&
    rep.vagueHolds.length === 0
  );
}

/** The service's priced-name lists of data/service-maps/ (file `XX_city.csv`, the country in its name). */
export function serviceMapFiles(dir = SERVICE_MAPS_DIR): { country: string; file: string }[] {
  return readdirSync(dir)
    .filter((f) => /^[A-Z]{2}_.+\.csv$/.test(f))
    .sort()
    .map((f) => ({ country: f.slice(0, 2), file: join(dir, f) }));
}

/**
 * Issue 24 §5: each country's addresses against that country's priced-name list (bench/lib/service-map.ts).
 * `chooserFor` makes a fresh chooser per list: by default the dispatch path's choice by price
 * (lib/dispatch-chooser.ts) from the service map `relais map learn` leaves, filling over the corpus in
 * order; `unlearnedChooser` starts from an empty map (a shop whose map was never learned);
 * `todaysChooser` (the resolver and the old fallback-tariff guard) is the baseline.
 */
export async function evaluateServiceMaps(
  rows: CorpusRow[] = readCorpus(),
  resolver: NeighbourhoodResolver = NeighbourhoodResolver.load(),
  chooserFor: (country: string, service: PriceLookup, serviceList: string[]) => NameChooser = (
    country,
    service,
    serviceList,
  ) => dispatchChooser(resolver, learnedMap(resolver, country, service, serviceList)),
): Promise<ServiceMapReport[]> {
  const gazetteer = loadGazetteer(resolver.dataDir);
  const truePlaces = readTruePlaces(join(CORPUS_DIR, 'true-places.csv'));
  const contains = gazetteerContainment(gazetteer);
  const isCityName = cityNameTest(gazetteer);
  const reports: ServiceMapReport[] = [];
  for (const { country, file } of serviceMapFiles()) {
    const list = readPricedNames(file, gazetteer);
    const ofCountry = rows.filter((r) => r.input.country?.toUpperCase() === country);
    const label = `data/service-maps/${file.split('/').at(-1)} (${list.length} priced names)`;
    const map = serviceMap(country, list, gazetteer, contains);
    const service = serviceTariff(list);
    const options = {
      chooser: chooserFor(
        country,
        service,
        list.map((p) => p.name),
      ),
      service,
      map,
      truePlaces,
      contains,
      isCityName,
      label,
    };
    reports.push(await scoreServiceMap(ofCountry, options));
  }
  return reports;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const options = { list: { type: 'boolean' }, check: { type: 'boolean' }, 'check-map': { type: 'boolean' } } as const;
  const { values } = parseArgs({ options });
  const rep = evaluateCorpus();
  process.stdout.write(`${formatReport(rep, values.list)}\n`);
  const maps = await evaluateServiceMaps();
  const resolver = NeighbourhoodResolver.load();
  const withoutList = await evaluateServiceMaps(undefined, resolver, (country, service) =>
    dispatchChooser(resolver, learnedMap(resolver, country, service)),
  );
  const unlearned = await evaluateServiceMaps(undefined, resolver, () => dispatchChooser(resolver));
  const baseline = await evaluateServiceMaps(undefined, resolver, () => todaysChooser(resolver));
  for (const map of maps) process.stdout.write(`\n${formatServiceMap(map, values.list)}\n`);
  const columns = [
    { title: "map learned with the service's list", reports: maps },
    { title: 'map learned from the gazetteer only', reports: withoutList },
    { title: 'map not learned', reports: unlearned },
    { title: 'old fallback-tariff guard', reports: baseline },
  ];
  process.stdout.write(`\n${formatBeside(columns)}\n`);
  if (values.check && !meetsTargets(rep)) process.exitCode = 1;
  if (values['check-map'] && !maps.every(meetsServiceMapTargets)) process.exitCode = 1;
}
