import { describe, expect, it } from 'vitest';
import {
  candidateNames,
  candidatesOf,
  foldSpelling,
  pluralVariant,
  spellingVariants,
  underArea,
} from './candidates.js';
import { NeighbourhoodResolver } from './resolver.js';

const noCities = { isCityRegionOrCountry: () => false };
const place = (name: string, altNames: string[] = []) => ({ name, altNames });

describe('the candidate names of a resolved place', () => {
  it('lists the gazetteer\'s spelling, its name under its area and without "Cité", the merchant\'s aliases, then the wider areas, most precise first', () => {
    const names = candidateNames({
      place: place('Cite Avion', ['Cité Avion']),
      wider: [place('Ouakam', ['Wakam'])],
      aliases: { 'cite des aviateurs': 'Cité Avion', 'chez Awa': 'Mermoz' },
      ...noCities,
    });
    expect(names.map((c) => [c.name, c.precision, c.via])).toEqual([
      ['Cite Avion', 0, 'gazetteer'],
      ['Ouakam Cite Avion', 0, 'variant'],
      ['Avion', 0, 'variant'],
      ['cite des aviateurs', 0, 'alias'],
      ['Ouakam', 1, 'area'],
      ['Wakam', 1, 'spelling'],
    ]);
  });

  it('lists each spelling once, whatever its case, accents and hyphens, and never a city, region or country name', () => {
    const names = candidateNames({
      place: place('Sacré-Cœur 3', ['Sacre Coeur 3', 'SACRÉ CŒUR 3', 'Dakar']),
      wider: [place('Dakar', [])],
      aliases: {},
      isCityRegionOrCountry: (text) => text === 'Dakar',
    });
    expect(names.map((c) => c.name)).toEqual(['Sacré-Cœur 3']);
  });

  it('adds the name without its article, and "Les" before a plural name, after the sourced spellings', () => {
    expect(spellingVariants('Les Almadies')).toEqual(['Almadies']);
    expect(spellingVariants("L'Île de Gorée")).toEqual(['Île de Gorée']);
    expect(spellingVariants('Maristes')).toEqual(['Les Maristes']);
    expect(spellingVariants('Mermoz')).toEqual([]);
    const names = candidateNames({
      place: place('Le Plateau', ['Plateau-Centre']),
      wider: [],
      aliases: {},
      ...noCities,
    });
    expect(names.map((c) => c.name)).toEqual(['Le Plateau', 'Plateau-Centre', 'Plateau']);
  });

  it('leaves out spellings in other scripts and the names of wider administrative units folded into a place', () => {
    const names = candidateNames({
      place: place('Plateau', ['Плато', 'Plateau/Gorée Arrondissement', 'Dakar Plateau']),
      wider: [],
      aliases: {},
      ...noCities,
    });
    expect(names.map((c) => c.name)).toEqual(['Plateau', 'Dakar Plateau']);
  });

  it('never spends a quote on a plural no list writes: after an article, of a numbered name, of a cité or of a proper name', () => {
    expect(pluralVariant('Le Plateau')).toEqual([]);
    expect(pluralVariant('Plateau')).toEqual([]);
    expect(pluralVariant('7ᵉ tranche')).toEqual([]);
    expect(pluralVariant('Cite Avion')).toEqual([]);
    expect(pluralVariant('Ouakam')).toEqual([]);
    expect(pluralVariant('Castor')).toEqual(['Castors']);
    const names = candidateNames({ place: place('Le Plateau'), wider: [], aliases: {}, ...noCities });
    expect(names.map((c) => c.name)).not.toContain('Le Plateaus');
    expect(names.map((c) => c.name)).not.toContain('Plateaus');
  });

  it('never writes a place under an area whose name already carries it', () => {
    expect(underArea('Sacré Coeur', 'Mermoz-Sacré-Cœur')).toBeUndefined();
    expect(underArea('Sacré-Cœur 3', 'Sacré Coeur')).toBeUndefined();
    expect(underArea('8ᵉ tranche', 'Angré')).toBe('Angré 8ᵉ tranche');
  });

  it('folds spellings the way a service compares them, keeping numbers as written', () => {
    expect(foldSpelling('Sacré-Cœur  III')).toBe('sacre coeur iii');
    expect(foldSpelling("Cité de l'Avion")).toBe('cite de l avion');
  });
});

describe('the candidates of an address resolved against the gazetteer', () => {
  const resolver = NeighbourhoodResolver.load();
  const candidates = (address: string, country: string, aliases: Record<string, string> = {}) => {
    const resolution = resolver.resolve({ country, fields: { address1: address }, aliases });
    if (!resolution.ok) throw new Error(resolution.reason);
    return candidatesOf(resolver, resolution, aliases);
  };

  it('starts from the sub-area the address names even when the area is the level the resolver sends', () => {
    const names = candidates('Ouakam, cité Avion, villa 3', 'SN');
    expect(names[0]).toMatchObject({ name: 'Cite Avion', precision: 0 });
    expect(names.map((c) => c.name)).toContain('Ouakam');
  });

  it('goes from a numbered quartier to the quartier and the commune holding it, never to a place beside it', () => {
    const names = candidates('Sacré Coeur 3, villa 12', 'SN').map((c) => c.name);
    expect(names).toEqual(['Sacré-Cœur 3', 'Sacré Coeur', 'Mermoz-Sacré-Cœur']);
    expect(names).not.toContain('Mermoz-Sacré-Cœur Sacré Coeur');
  });

  it('offers the sourced spelling with its article, and the département of a Dakar row, but never the city', () => {
    expect(candidates('Les Almadies', 'SN').map((c) => c.name)).toEqual(['Almadies', 'Les Almadies']);
    const thiaroye = candidates('Thiaroye sur mer', 'SN').map((c) => c.name);
    expect(thiaroye).toContain('Pikine');
    expect(thiaroye).not.toContain('Dakar');
  });

  it('goes from an Abidjan sub-area, also written under its area, to the area and then the commune', () => {
    const names = candidates('Cocody Angré 7e tranche', 'CI').map((c) => c.name);
    expect(names).toEqual(['7ᵉ tranche', 'Angré 7ᵉ tranche', 'Angré', 'Cocody Angré', 'Cocody']);
    expect(names).not.toContain('7ᵉ tranches');
    expect(names).not.toContain('Abidjan');
  });
});
