/**
 * Issue 24: names customers type the way they say them, which the gazetteer spells otherwise: a plural
 * written singular ("Toit Rouge" for Toits-Rouges), a doubled letter written once ("Pate d oie" for Patte
 * d'Oie), a unit number after a commune's part ("Dieuppeul 2"), and a spelling the project sourced
 * (data/neighbourhoods/additions.csv: Karpala for OSM's Karpalin).
 */
import { describe, expect, it } from 'vitest';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { held, resolved } from './resolution-asserts.js';

const resolver = NeighbourhoodResolver.load();
const resolve = (country: string, address1: string, city: string) =>
  resolver.resolve({ country, fields: { address1, city } });

describe('names typed as they sound', () => {
  it('finds Toits-Rouges in "Yopougon Toit Rouge", as a place inside Yopougon', () => {
    const r = resolved(resolve('CI', 'Yopougon Toit Rouge', 'Abidjan'));
    expect(r.level?.levels.map((l) => l.name)).toEqual(['Toits-Rouges', 'Yopougon']);
  });

  it('finds Patte d\'Oie in "Pate d oie" (Ouagadougou)', () => {
    expect(resolved(resolve('BF', 'Pate d oie, près du rond point', 'Ouaga')).neighbourhood.name).toBe("Patte d'Oie");
  });

  it('still holds a word that only sounds like a place when it is too short to mean anything alone', () => {
    held(resolve('CI', 'Toi', 'Abidjan'));
  });
});

describe('numbers and sourced spellings', () => {
  it('sends the commune for "Dieuppeul 2", a numbered part of Dieuppeul-Derklé', () => {
    expect(resolved(resolve('SN', 'Dieuppeul 2 villa 2345', 'Dakar')).neighbourhood.name).toBe('Dieuppeul-Derklé');
  });

  it('knows Karpala, the spelling people use, as the quartier OpenStreetMap calls Karpalin', () => {
    expect(resolved(resolve('BF', 'Karpala', 'Ouagadougou')).neighbourhood.name).toBe('Karpalin');
  });
});

describe('an estate name the city uses in several communes', () => {
  it('sends the commune typed before it: "Abobo Sogefiha" is in Abobo, though the lists put a Sogefiha in Yopougon', () => {
    expect(resolved(resolve('CI', 'Abobo Sogefiha, derrière la mairie', 'Abidjan')).neighbourhood.name).toBe('Abobo');
  });

  it('still holds a quartier found in one commune only and typed after another commune ("Yopougon Angré")', () => {
    held(resolve('CI', 'Yopougon Angré', 'Abidjan'));
  });
});
