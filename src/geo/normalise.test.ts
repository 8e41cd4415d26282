import { describe, expect, it } from 'vitest';
import { parseCsv } from './csv.js';
import { allowedEdits, boundedEditDistance, normaliseText, segmentsOf } from './normalise.js';

describe('normaliseText', () => {
  it.each([
    ['Sacré-Cœur 3', 'sacre coeur 3'],
    ['SACRE COEUR III', 'sacre coeur 3'],
    ['7ᵉ tranche', '7 e tranche'],
    ['7ème Tranche', '7 e tranche'],
    ['Deuxième tranche', '2 e tranche'],
    ['Parcelles U17', 'parcelles u 17'],
    ['Unité 07', 'unite 7'],
    ['Cité CIE n°5', 'cite cie 5'],
    ["Patte d'Oie", 'patte d oie'],
    ["N'diarème Limamoulaye", 'ndiareme limamoulaye'],
    ['M’Badon', 'mbadon'],
    ["près de l'Hôpital", 'pres de l hopital'],
    ['Deux Plateaux', '2 plateaux'],
    ['II Plateaux', '2 plateaux'],
    ['Arafat I', 'arafat 1'],
    ['Adjifou Un', 'adjifou 1'],
    ['Pikine North', 'pikine nord'],
    ['Zone 4C', 'zone 4 c'],
    ['Cité Barry & Ly', 'cite barry ly'],
    ['  Fann\u00a0Résidence ', 'fann residence'],
  ])('folds %j to %j', (input, expected) => {
    expect(normaliseText(input)).toBe(expected);
  });

  it('gives one key to every way of writing the same name', () => {
    const spellings = ['Port-Bouët', 'PORT BOUET', 'port bouët', 'Port  -  Bouet'];
    expect(new Set(spellings.map(normaliseText))).toEqual(new Set(['port bouet']));
  });
});

describe('segmentsOf', () => {
  it('splits at commas, slashes, brackets and a spaced dash, keeping the raw words', () => {
    const segments = segmentsOf('Villa 12, Sacré Coeur 3 - Dakar (près de la VDN) / Yoff');
    expect(segments.map((s) => s.rawWords.join(' '))).toEqual([
      'Villa 12',
      'Sacré Coeur 3',
      'Dakar',
      'près de la VDN',
      'Yoff',
    ]);
    expect(segments[1]!.tokens.map((t) => t.text)).toEqual(['sacre', 'coeur', '3']);
  });

  it('keeps a hyphen inside a word as a joint, not a break', () => {
    expect(segmentsOf('Grand-Yoff').map((s) => s.tokens.map((t) => t.text))).toEqual([['grand', 'yoff']]);
  });
});

describe('boundedEditDistance', () => {
  it('counts substitutions, insertions and adjacent transpositions', () => {
    expect(boundedEditDistance('ouakem', 'ouakam', 2)).toBe(1);
    expect(boundedEditDistance('ouakma', 'ouakam', 2)).toBe(1);
    expect(boundedEditDistance('youpougon', 'yopougon', 2)).toBe(1);
    expect(boundedEditDistance('mermoz', 'mermoz', 0)).toBe(0);
  });

  it('stops at the bound and reports bound + 1', () => {
    expect(boundedEditDistance('abcdef', 'uvwxyz', 1)).toBe(2);
    expect(boundedEditDistance('dakar', 'ouagadougou', 2)).toBe(3);
  });

  it('allows no typo on short words and more on long ones', () => {
    expect([4, 5, 7, 8, 12].map(allowedEdits)).toEqual([0, 1, 1, 2, 3]);
  });
});

describe('parseCsv', () => {
  it('reads quoted fields with commas, doubled quotes and line breaks', () => {
    expect(parseCsv('a,b,c\r\n1,"x, ""y""","line\nbreak"\n')).toEqual([
      ['a', 'b', 'c'],
      ['1', 'x, "y"', 'line\nbreak'],
    ]);
  });

  it('refuses a file that ends inside quotes', () => {
    expect(() => parseCsv('a,"b')).toThrow('CSV ends inside a quoted field');
  });
});
