/**
 * Issue 24 §5: the address corpus scored against a service's own priced names (bench/lib/service-map.ts,
 * data/service-maps/). Hand-made lists and choices reach every category; the shipped lists load against
 * the gazetteer; today's dispatch path is scored as the baseline.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluateServiceMaps, readCorpus, serviceMapFiles, type CorpusRow } from '../../bench/eval-addresses.js';
import {
  cityNameTest,
  classify,
  gazetteerContainment,
  meetsServiceMapTargets,
  readPricedNames,
  scoreServiceMap,
  serviceMap,
  serviceTariff,
  todaysChooser,
  truthFor,
  type Choice,
  type PricedName,
} from '../../bench/lib/service-map.js';
import { dispatchChooser, learnedMap } from '../../bench/lib/dispatch-chooser.js';
import { loadGazetteer } from '../../src/geo/gazetteer.js';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';

const resolver = NeighbourhoodResolver.load();
const gazetteer = loadGazetteer(resolver.dataDir);
const contains = gazetteerContainment(gazetteer);

const priced = (name: string, band: number, covers: string[]): PricedName => ({ country: 'SN', name, band, covers });
// A service that prices Ouakam as a whole, its cité Avion cheaper, and Castor under a plural.
const list = [
  priced('Ouakam', 3, ['Ouakam', 'Cite Avion', 'Mamelles']),
  priced('Cité Avion', 2, ['Cite Avion']),
  priced('Castors', 2, ['Castor']),
];

const row = (id: string, address1: string, expect: string[]): CorpusRow => ({
  id,
  input: { country: 'SN', fields: { address1, city: 'Dakar' } },
  expect,
  source: 'test',
});

const context = {
  service: serviceTariff(list),
  map: serviceMap('SN', list, gazetteer, contains),
  contains,
  isCityName: cityNameTest(gazetteer),
};

function score(rows: CorpusRow[], choices: Record<string, Choice>, truePlaces: Map<string, string[]>) {
  return scoreServiceMap(rows, { ...context, chooser: (r) => choices[r.id]!, truePlaces, label: 'test list' });
}

describe('scoring the name sent against a priced-name list', () => {
  const avion = row('avion', 'Ouakam, cité Avion', ['Ouakam']);
  const castor = row('castor', 'Castors', ['Castor']);
  const medina = row('medina', 'Medina rue 22', ['Medina']);
  const nowhere = row('nowhere', 'Rue 10', []);
  const truePlaces = new Map([['avion', ['Cite Avion']]]);
  const categoryOf = (r: CorpusRow, choice: Choice) =>
    classify(choice, truthFor(truePlaces.get(r.id) ?? r.expect, context.map), context);

  it('calls the most precise priced name correct, under any spelling the service folds (accents, hyphens)', () => {
    expect(categoryOf(avion, { sent: 'Cite Avion' })).toBe('correct');
    expect(categoryOf(castor, { sent: 'castors' })).toBe('correct');
  });

  it('calls the wider priced name coarser than priced, and counts what the customer pays above the sub-area', async () => {
    const report = await score([avion], { avion: { sent: 'Ouakam' } }, truePlaces);
    expect(report.rows[0]!.category).toBe('coarser');
    expect(report.overchargeXof).toBe(500);
  });

  it('tells a hold while a priced name covers the place from a hold when nothing priced covers it', () => {
    expect(categoryOf(castor, { held: 'not priced' })).toBe('held-priced');
    expect(categoryOf(medina, { held: 'not priced' })).toBe('held-rightly');
    expect(categoryOf(nowhere, { held: 'no neighbourhood' })).toBe('held-rightly');
  });

  it('calls a priced name that does not cover the place wrong, and any name sent for an address to hold wrong', () => {
    expect(categoryOf(avion, { sent: 'Castors' })).toBe('wrong');
    expect(categoryOf(nowhere, { sent: 'Ouakam' })).toBe('wrong');
  });

  it("meets issue 24's targets only when every address is sent under its most precise priced name or rightly held", async () => {
    const rows = [avion, medina];
    const precise = await score(rows, { avion: { sent: 'Cité Avion' }, medina: { held: '-' } }, truePlaces);
    expect(meetsServiceMapTargets(precise)).toBe(true);
    const wider = await score(rows, { avion: { sent: 'Ouakam' }, medina: { held: '-' } }, truePlaces);
    expect(meetsServiceMapTargets(wider)).toBe(false);
  });

  it('counts a city name as a city name, and the right place under an unpriced name as sent at the fallback tariff', () => {
    expect(categoryOf(avion, { sent: 'Dakar' })).toBe('city');
    expect(categoryOf(castor, { sent: 'Castor' })).toBe('fallback');
  });
});

describe("the gazetteer's containment", () => {
  it('follows the parents the official lists give, and not a same-name quartier folded with an arrondissement', () => {
    expect(contains('SN', 'Parcelles Assainies', 'Unité 17')).toBe(true);
    expect(contains('SN', 'Dalifort', 'Cité Hilal')).toBe(true);
    expect(contains('SN', 'Almadies', 'Mermoz-Sacré-Cœur')).toBe(false);
    expect(contains('SN', 'Ouakam', 'Cite Avion')).toBe(false);
  });
});

describe("today's dispatch path as the baseline", () => {
  it('sends the area of "Ouakam, cité Avion" although the cité is priced, and holds "Castors" the service prices', () => {
    const chooser = todaysChooser(resolver);
    const service = serviceTariff(list);
    expect(chooser(row('a', 'Ouakam, cité Avion', ['Ouakam']), service)).toEqual({ sent: 'Ouakam' });
    const held = chooser(row('b', 'Castors, près du marché', ['Castor']), service);
    expect(held).toEqual({ held: "the delivery service does not price 'Castor'", candidates: ['Castor'] });
  });

  it("scores both cities' addresses against their lists, each in one category, and misses issue 24's targets (the baseline to beat)", async () => {
    const reports = await evaluateServiceMaps(undefined, resolver, () => todaysChooser(resolver));
    const corpus = readCorpus();
    expect(reports.map((r) => r.label.slice(0, 30))).toEqual([
      'data/service-maps/CI_abidjan.c',
      'data/service-maps/SN_dakar.csv',
    ]);
    for (const [i, country] of ['CI', 'SN'].entries()) {
      const report = reports[i]!;
      expect(meetsServiceMapTargets(report)).toBe(false);
      expect(report.counts.coarser).toBeGreaterThan(0);
      const total = Object.values(report.counts).reduce((a, b) => a + b, 0);
      expect(total).toBe(corpus.filter((r) => r.input.country === country).length);
      expect(report.counts.city).toBe(0);
    }
  });
});

describe("the dispatch path's choice by price (what the eval reports)", () => {
  it('sends the priced cité under "Ouakam, cité Avion", and "Castors" for Castor, from a map that starts empty', async () => {
    const chooser = dispatchChooser(resolver);
    const service = serviceTariff(list);
    expect(await chooser(row('a', 'Ouakam, cité Avion', ['Ouakam']), service)).toEqual({ sent: 'Cite Avion' });
    expect(await chooser(row('b', 'Castor, près du marché', ['Castor']), service)).toEqual({ sent: 'Castors' });
  });

  it('learns from each quote: the next order for a place already asked sends its priced name with one quote', async () => {
    const calls = { quotes: 0 };
    const chooser = dispatchChooser(resolver, undefined, calls);
    const service = serviceTariff(list);
    await chooser(row('a', 'Castor, villa 1', ['Castor']), service);
    const first = calls.quotes;
    expect(first).toBeGreaterThan(1);
    expect(await chooser(row('b', 'Castor, villa 2', ['Castor']), service)).toEqual({ sent: 'Castors' });
    expect(calls.quotes - first).toBe(1);
  });

  it('starts from what map learn asks: "Castors" is then known priced before the first order, "Castor" not', async () => {
    const service = serviceTariff(list);
    const map = learnedMap(resolver, 'SN', service);
    expect(map.get('Castors')?.priced).toBe(true);
    expect(map.get('Ouakam')?.priced).toBe(true);
    expect(map.get('Castor')?.priced).toBe(false);
  });

  it("beats the baseline on both lists: nothing at the fallback or a city name, fewer coarser and half the holds while priced; meets issue 24's targets in Dakar", async () => {
    const now = await evaluateServiceMaps(undefined, resolver);
    const before = await evaluateServiceMaps(undefined, resolver, () => todaysChooser(resolver));
    for (const [i, report] of now.entries()) {
      expect(report.counts.fallback + report.counts.city).toBe(0);
      expect(report.counts.coarser).toBeLessThan(before[i]!.counts.coarser);
      expect(report.counts['held-priced']).toBeLessThan(before[i]!.counts['held-priced'] / 2);
      expect(report.counts.correct).toBeGreaterThan(before[i]!.counts.correct);
      expect(report.overchargeXof).toBe(0);
      // Met in Dakar. Not yet in Abidjan: PK 18's nearest commune point (Abobo's) is not clearly nearer than
      // Anyama's, and the list puts Vitré Deux and Adiapoto-II in Bingerville where no source or point does.
      expect(meetsServiceMapTargets(report)).toBe(report.label.includes('SN_dakar'));
    }
  });

  it("sends the service's own spellings from its list, which the map learned from the gazetteer alone never finds", async () => {
    const withList = await evaluateServiceMaps(undefined, resolver);
    const gazetteerOnly = await evaluateServiceMaps(undefined, resolver, (country, service) =>
      dispatchChooser(resolver, learnedMap(resolver, country, service)),
    );
    const sent = (reports: typeof withList, id: string) =>
      reports.flatMap((r) => r.rows).find((r) => r.row.id === id)?.choice;
    // Unité 17 is "Parcelles U17" to the Dakar service, Blockauss "Blockhauss" to Abidjan's.
    expect(sent(withList, 'SN-016')).toEqual({ sent: 'Parcelles U17' });
    expect(sent(gazetteerOnly, 'SN-016')).toHaveProperty('held');
    expect(sent(withList, 'CI-020')).toEqual({ sent: 'Blockhauss' });
    for (const [i, report] of withList.entries()) {
      expect(report.counts.correct).toBeGreaterThan(gazetteerOnly[i]!.counts.correct);
      expect(report.counts.wrong).toBeLessThanOrEqual(gazetteerOnly[i]!.counts.wrong);
      // The issue's own measure: no hold while a name the chooser had is priced.
      expect(report.heldWithCandidatePriced).toBe(0);
    }
  });
});

describe('the priced-name lists of data/service-maps', () => {
  it('put the Deux Plateaux Vallons inside Les Deux Plateaux, the part of Cocody that holds it', () => {
    const abidjan = readPricedNames(serviceMapFiles().find((f) => f.country === 'CI')!.file, gazetteer);
    const map = serviceMap('CI', abidjan, gazetteer, contains);
    const deuxPlateaux = map.entries.find((e) => e.entry.name === 'Les Deux Plateaux')!;
    expect(deuxPlateaux.extent.has('II Plateaux-Vallons')).toBe(true);
    expect(truthFor(['II Plateaux-Vallons'], map).expected.map((e) => e.name)).toEqual(['Deux Plateaux Vallons']);
  });

  it('refuses a list naming a place the gazetteer does not have, or one name twice under two spellings', () => {
    const dir = mkdtempSync(join(tmpdir(), 'service-map-'));
    try {
      const write = (name: string, body: string) => {
        writeFileSync(join(dir, name), `country,name,band,lat,lon,covers\n${body}\n`);
        return join(dir, name);
      };
      expect(() => readPricedNames(write('a.csv', 'SN,Ouakam,3,,,Ouakam;Cité Nulle Part'), gazetteer)).toThrow(
        'covers places not in the gazetteer: Cité Nulle Part',
      );
      expect(() =>
        readPricedNames(write('b.csv', 'SN,Grand Yoff,2,,,Grand Yoff\nSN,Grand-Yoff,2,,,Grand Yoff')),
      ).toThrow("'Grand-Yoff' and 'Grand Yoff' are the same name to the service");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('cover only gazetteer places, and spell and cut the map differently from the gazetteer', () => {
    for (const { file } of serviceMapFiles()) {
      const names = readPricedNames(file, gazetteer);
      expect(names.length).toBeGreaterThan(30);
      const spelledLikeGazetteer = names.filter((n) => n.covers.length === 1 && n.covers[0] === n.name);
      expect(spelledLikeGazetteer.length).toBeLessThan(names.length);
      expect(names.some((n) => n.covers.length > 1)).toBe(true);
    }
  });
});
