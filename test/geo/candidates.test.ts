/**
 * Issue 24: the candidate names of a resolved place, as the dispatch path tries them (src/geo/candidates.ts)
 * with the wider places the gazetteer knows (NeighbourhoodResolver.placeNamed). Found scoring the real
 * choice by price against the service lists of data/service-maps (npm run eval:addresses).
 */
import { describe, expect, it } from 'vitest';
import {
  candidatesOf,
  numeralVariants,
  pluralVariant,
  spellingVariants,
  underArea,
  unnumbered,
} from '../../src/geo/candidates.js';
import { NeighbourhoodResolver, type ResolveInput } from '../../src/geo/resolver.js';
import { resolved } from './resolution-asserts.js';

const resolver = NeighbourhoodResolver.load();

const namesFor = (input: ResolveInput) =>
  candidatesOf(resolver, resolved(resolver.resolve(input)), {}).map((c) => c.name);
const at = (country: 'SN' | 'CI', address1: string, city: string): ResolveInput => ({
  country,
  fields: { address1, city },
});

describe('spellings a service may use for the same place', () => {
  it('tries the singular name in the plural, and a cité without the word "Cité"', () => {
    expect(pluralVariant('Castor')).toEqual(['Castors']);
    expect(pluralVariant('Sicap Baobab')).toEqual(['Sicap Baobabs']);
    expect(pluralVariant('Almadies')).toEqual([]);
    expect(pluralVariant('PK 18')).toEqual([]);
    expect(spellingVariants('Cité Keur Gorgui')).toEqual(['Keur Gorgui']);
  });

  it('writes a unit number as lists do: "II Plateaux-Vallons" as "Deux Plateaux-Vallons", "Vitré Deux" as "Vitré 2"', () => {
    expect(numeralVariants('II Plateaux-Vallons')).toEqual(['Deux Plateaux-Vallons', '2 Plateaux-Vallons']);
    expect(numeralVariants('Vitré Deux')).toEqual(['Vitré 2']);
    expect(numeralVariants('Sacré-Cœur III')).toEqual(['Sacré-Cœur 3']);
    expect(numeralVariants('Unité 17')).toEqual([]);
    expect(numeralVariants('Cité Vi')).toEqual([]);
  });

  it('writes a quartier under the commune holding it, unless its name already opens with the commune', () => {
    expect(underArea('Sicogi', 'Yopougon')).toBe('Yopougon Sicogi');
    expect(underArea('Angré Cocoteraie', 'Angré')).toBeUndefined();
    expect(underArea('Sicogi', undefined)).toBeUndefined();
    expect(underArea('Vallon', 'II Plateaux-Vallons')).toBeUndefined();
  });

  it("never offers a derived spelling that is another place's name: Bingerville's Cité Sicogi is not Yopougon's Sicogi", () => {
    const names = candidatesOf(resolver, { neighbourhood: resolver.placeNamed('CI', 'Cité Sicogi')!.place }, {}).map(
      (c) => c.name,
    );
    expect(names[0]).toBe('Cité Sicogi');
    expect(names).not.toContain('Sicogi');
  });

  it('offers "Castors" for an address in Castor, and "Keur Gorgui" for the cité Keur Gorgui', () => {
    expect(namesFor(at('SN', 'Castor, villa 12', 'Dakar'))).toContain('Castors');
    expect(namesFor(at('SN', 'Cité Keur Gorgui, immeuble 4', 'Dakar'))).toContain('Keur Gorgui');
  });
});

describe('the wider places of a candidate list', () => {
  it('climbs from a quartier to the commune named after it: Liberté to Sicap-Liberté, Derklé to Dieuppeul-Derklé', () => {
    expect(namesFor(at('SN', 'Liberté, villa 5', 'Dakar'))).toEqual(['Liberté', 'Sicap-Liberté']);
    expect(namesFor(at('SN', 'Derklé, villa 8', 'Dakar'))).toEqual(['Derklé', 'Dieuppeul-Derklé']);
  });

  it('tries the part of a commune the customer typed ("Dieuppeul 2") before the commune, its unit first', () => {
    expect(namesFor(at('SN', 'Dieuppeul 2 villa 2345', 'Dakar'))).toEqual([
      'Dieuppeul 2',
      'Dieuppeul',
      'Dieuppeul-Derklé',
    ]);
  });

  it('tries the numbered unit typed where the gazetteer lists only its base ("Liberte 5"), not another unit', () => {
    expect(namesFor(at('SN', 'Liberte 5', 'Dakar'))).toEqual(['Liberté 5', 'Liberté', 'Sicap-Liberté']);
    expect(namesFor(at('SN', 'Liberté 6 extension, villa 12', 'Dakar'))).toEqual(['Liberté', 'Sicap-Liberté']);
  });

  it('gives an Abidjan quartier with no listed commune the commune whose point is clearly the nearest', () => {
    const niangon = namesFor(at('CI', 'Niangon à droite', 'Abidjan'));
    expect(niangon.slice(0, 3)).toEqual(['Niangon à droite', 'Niangon', 'Yopougon Niangon']);
    expect(niangon).toContain('Yopougon');
    expect(namesFor(at('CI', 'Abobo Baoulé', 'Abidjan'))).toContain('Abobo');
    expect(namesFor(at('CI', 'Avocatier près de la pharmacie', 'Abidjan'))).toContain('Abobo');
  });

  it('takes the nearest commune when the name opens with it ("Abobo Nord"), and never another place\'s name', () => {
    expect(namesFor(at('CI', 'Abobo Nord', 'Abidjan'))).toContain('Abobo');
    // Port-Bouet II is a Yopougon quartier: "Port-Bouet" would be the commune across the lagoon.
    const portBouet2 = namesFor(at('CI', 'Port-Bouet II', 'Abidjan'));
    expect(portBouet2).toContain('Yopougon');
    expect(portBouet2).not.toContain('Port-Bouet');
    expect(portBouet2).not.toContain('Port-Bouët');
  });

  it('guesses no commune where two commune points are nearly as near (Tamini: Anyama 5.4 km, Abobo 5.5 km)', () => {
    expect(namesFor(at('CI', 'Tamini près du rond point', 'Abidjan'))).toEqual(['Tamini']);
  });

  it('climbs from PK 18 to Abobo, the commune a sourced row puts it in (its points alone could not tell)', () => {
    const names = namesFor(at('CI', 'PK 18 près du rond point', 'Abidjan'));
    expect(names[0]).toBe('PK 18');
    expect(names.indexOf('Abobo')).toBeGreaterThan(0);
  });

  it("guesses no commune in Dakar, whose communes d'arrondissement have no points to compare", () => {
    // Nor from the places the lists put under "Dakar", which names the city, its département and its region.
    expect(namesFor(at('SN', 'Castor, villa 12', 'Dakar'))).toEqual(['Castor', 'Castors']);
  });

  it('climbs through the parents the project sourced: Vallon in the Deux Plateaux, the Akouédo camp in Cocody', () => {
    const vallon = namesFor(at('CI', 'Vallon villa 3', 'Abidjan'));
    expect(vallon.indexOf('II Plateaux-Vallons')).toBeGreaterThan(0);
    expect(vallon.indexOf('II Plateaux-Vallons')).toBeLessThan(vallon.indexOf('Deux Plateaux'));
    expect(vallon.indexOf('Deux Plateaux')).toBeLessThan(vallon.indexOf('Cocody'));
    expect(namesFor(at('CI', 'Akouedo camp militaire', 'Abidjan'))).toContain('Cocody');
  });

  it('tries the area the address names before the commune holding it ("Angre 9eme tranche": Angré, then Cocody)', () => {
    const names = namesFor(at('CI', 'Angre 9eme tranche', 'Abidjan'));
    expect(names.indexOf('Angré')).toBeGreaterThan(0);
    expect(names.indexOf('Angré')).toBeLessThan(names.indexOf('Cocody'));
  });

  it('tries the quartier holding a sub-area before the commune the address also names', () => {
    const names = namesFor(at('CI', 'Zone 4c, Marcory', 'Abidjan'));
    expect(names.indexOf('Zone 4')).toBeGreaterThan(0);
    expect(names.indexOf('Zone 4')).toBeLessThan(names.indexOf('Marcory'));
  });

  it('offers a Yopougon quartier under its commune\'s name ("Yopougon Sicogi")', () => {
    expect(namesFor(at('CI', 'Sicogi, Yopougon', 'Abidjan'))).toContain('Yopougon Sicogi');
  });

  it('holds "Medina Gounass 3" in Médina Gounass, not in the commune Medina across town', () => {
    const names = namesFor(at('SN', 'Medina Gounass 3', 'Guédiawaye'));
    expect(names).toContain('Médina Gounass');
    expect(names).not.toContain('Medina');
  });

  it("never puts a commune d'arrondissement inside a quartier that shares its arrondissement's name (Ouakam, Almadies)", () => {
    const names = namesFor(at('SN', 'Ouakam, cité Avion, villa 3', 'Dakar'));
    expect(names).toContain('Ouakam');
    expect(names).not.toContain('Almadies');
    expect(names).not.toContain('Les Almadies');
    expect(namesFor(at('SN', 'Medina, rue 11', 'Dakar'))).not.toContain('Plateau');
  });

  it('does not call the quartiers Mermoz or Almadies wider than the commune Mermoz-Sacré-Cœur', () => {
    const names = namesFor(at('SN', 'Mermoz-Sacré-Cœur, villa 3', 'Dakar'));
    expect(names[0]).toBe('Mermoz-Sacré-Cœur');
    expect(names).not.toContain('Mermoz');
    expect(names).not.toContain('Almadies');
  });

  it('tries the whole of a numbered quartier ("Hann Maristes" for Hann Maristes 1) right after its own names', async () => {
    expect(unnumbered('Hann Maristes 1')).toBe('Hann Maristes');
    expect(unnumbered('Unité 17')).toBeUndefined();
    const names = namesFor(at('SN', 'Hann Maristes 1, villa 8', 'Dakar'));
    expect(names[0]).toBe('Hann Maristes 1');
    expect(names).toContain('Hann Maristes');
  });

  it('never offers a town the name of the town its département is named after: Diamniadio is not sent as Rufisque', () => {
    const names = namesFor(at('SN', 'Diamniadio, cité des fonctionnaires', 'Dakar'));
    expect(names[0]).toBe('Diamniadio');
    expect(names).not.toContain('Rufisque');
    // A quartier of the town is still held by it.
    expect(namesFor(at('SN', 'Rufisque nord', 'Rufisque'))).toContain('Rufisque');
  });

  it('still holds "Yeumbeul Nord" in Yeumbeul, tried before the département Pikine', () => {
    const names = namesFor(at('SN', 'Yeumbeul Nord', 'Pikine'));
    expect(names.indexOf('Yeumbeul')).toBeGreaterThan(0);
    expect(names.indexOf('Yeumbeul')).toBeLessThan(names.indexOf('Pikine'));
  });
});
