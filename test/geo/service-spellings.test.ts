/**
 * Issue 24: the service's own spellings of our places (src/geo/service-spellings.ts), read back to the gazetteer
 * place each denotes, so an order tries the name the service prices though no rule of ours spells it. First on
 * the real gazetteer with spellings of the data/service-maps lists, then on a made-up country, so nothing here
 * holds only for Dakar's or Abidjan's names.
 */
import { describe, expect, it } from 'vitest';
import { candidatesOf } from '../../src/geo/candidates.js';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { placeDenoted, withServiceSpellings, type SpellingLookup } from '../../src/geo/service-spellings.js';
import type { Neighbourhood } from '../../src/geo/types.js';
import { resolved } from './resolution-asserts.js';

const resolver = NeighbourhoodResolver.load();

describe("a service's name read back to the gazetteer place it denotes", () => {
  it('reads a lone letter for a word and a number written against it: "Parcelles U17" is Unité 17, not Unité 15', () => {
    expect(placeDenoted(resolver, 'SN', 'Parcelles U17')).toBe('Unité 17');
    expect(placeDenoted(resolver, 'SN', 'Parcelles U15')).toBe('Unité 15');
  });

  it('reads spellings that sound alike and numbers written as words or roman numerals', () => {
    expect(placeDenoted(resolver, 'SN', 'Sicap Karack')).toBe('Sicap Karak');
    expect(placeDenoted(resolver, 'CI', 'Blockhauss')).toBe('Blockauss');
    expect(placeDenoted(resolver, 'CI', 'Deux Plateaux Vallons')).toBe('II Plateaux-Vallons');
  });

  it('never reads a name as a place with a word the name does not say: "Grand-Yoff" is not Yoff, "HLM" is not HLM Fass', () => {
    expect(placeDenoted(resolver, 'SN', 'Grand-Yoff')).toBe('Grand Yoff');
    expect(placeDenoted(resolver, 'SN', 'Yoff')).toBe('Yoff');
    expect(placeDenoted(resolver, 'SN', 'HLM')).toBe('HLM');
    expect(placeDenoted(resolver, 'SN', 'Dieuppeul')).toBeUndefined();
  });
});

describe('the candidates of an order with the spellings the service is known to price', () => {
  it("tries the service's spelling of the place itself before the wider area", () => {
    const unit = resolved(resolver.resolve({ country: 'SN', fields: { address1: 'Unité 17', city: 'Dakar' } }));
    const own = candidatesOf(resolver, unit, {});
    const names = withServiceSpellings(resolver, 'SN', own, ['Parcelles U15', 'Parcelles U17', 'Grand-Yoff']).map(
      (c) => c.name,
    );
    expect(names).toContain('Parcelles U17');
    expect(names).not.toContain('Parcelles U15');
    expect(names).not.toContain('Grand-Yoff');
    expect(names.indexOf('Parcelles U17')).toBeLessThan(names.indexOf('Parcelles Assainies'));
  });
});

/** A made-up country's gazetteer: the matcher knows nothing of its names. */
const place = (name: string, altNames: string[] = []): Neighbourhood => ({
  country: 'ZZ',
  city: 'Capitale',
  name,
  altNames,
  placeType: 'neighbourhood',
});
const areas: Record<string, string[]> = { 'Bloc 3': ['Cité Nouvelle'], 'Bloc 4': ['Cité Nouvelle'] };
const places = [
  place('Cité Nouvelle'),
  place('Bloc 3'),
  place('Bloc 4'),
  place('Marché Central'),
  place('Kouloubah'),
  place('Kouloubah Est'),
  place('Sainte Thérèse'),
  place('Sainte Thérèse Nord'),
  place('Sainte-Thérèse Nord', ['Ste Therese Nord']),
];
const madeUp: SpellingLookup = {
  placesOf: () => places,
  placeNamed: (_, name) => {
    const found = places.find((p) => p.name === name);
    return found && { place: found, containing: (areas[name] ?? []).map((a) => place(a)) };
  },
};

describe('the same reading on a country it was never tuned to', () => {
  it('reads a sub-area written under its area and abbreviated, by its number', () => {
    expect(placeDenoted(madeUp, 'ZZ', 'Cite Nouvelle B4')).toBe('Bloc 4');
    expect(placeDenoted(madeUp, 'ZZ', 'Nouvelle Bloc Trois')).toBe('Bloc 3');
  });

  it('reads a sound-alike, and prefers the place spelled exactly so', () => {
    expect(placeDenoted(madeUp, 'ZZ', 'Koulouba')).toBe('Kouloubah');
    expect(placeDenoted(madeUp, 'ZZ', 'Marche Centrale')).toBe('Marché Central');
  });

  it('denotes no place when two places match it equally well: the order keeps its own names', () => {
    expect(placeDenoted(madeUp, 'ZZ', 'Sainte Therese Nords')).toBeUndefined();
    expect(placeDenoted(madeUp, 'ZZ', 'Bloc')).toBeUndefined();
  });
});
