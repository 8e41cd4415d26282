import { describe, expect, it } from 'vitest';
import type { NameCandidate } from '../../geo/candidates.js';
import type { NamePrice } from '../../ledger/service-map.js';
import { chooseByPrice, freshKnowledge, MAP_FRESH_MS, tryOrder } from './name-choice.js';

const FALLBACK = 4_800;
const candidate = (name: string, precision: number): NameCandidate => ({
  name,
  place: name,
  precision,
  via: precision === 0 ? 'gazetteer' : 'area',
});
const known = (name: string, priced: boolean, at = new Date('2026-11-27T10:00:00Z')): [string, NamePrice] => [
  name,
  { name, priced, totalXof: priced ? 2_300 : FALLBACK, quotedFor: 'Plateau', learnedAt: at },
];
/** A service pricing these names (total per name), every other at the fallback; counts the quotes asked. */
function service(prices: Record<string, number>) {
  const asked: string[] = [];
  return {
    asked,
    quote: (name: string) => {
      asked.push(name);
      return Promise.resolve({ total: prices[name] ?? FALLBACK });
    },
    isPriced: (total: number) => total < FALLBACK,
  };
}

const cite = candidate('Cite Avion', 0);
const citeAccent = candidate('Cité Avion', 0);
const ouakam = candidate('Ouakam', 1);

describe('the order names are tried in', () => {
  it('puts a spelling known priced before the unknown ones of the same place, and leaves out names known at the fallback', () => {
    const plan = tryOrder([cite, citeAccent, ouakam], new Map([known('Cité Avion', true), known('Ouakam', false)]));
    expect(plan.map((p) => p.candidate.name)).toEqual(['Cité Avion', 'Cite Avion']);
  });

  it('tries an unknown sub-area before an area known priced: the customer may pay less', () => {
    const plan = tryOrder([cite, ouakam], new Map([known('Ouakam', true)]));
    expect(plan.map((p) => p.candidate.name)).toEqual(['Cite Avion', 'Ouakam']);
  });

  it('forgets what the map learned more than a week ago', () => {
    const now = new Date('2026-11-27T10:00:00Z');
    const old = new Date(now.getTime() - MAP_FRESH_MS - 1);
    expect([...freshKnowledge(new Map([known('Ouakam', true, old), known('Ngor', true, now)]), now).keys()]).toEqual([
      'Ngor',
    ]);
  });
});

describe('choosing by price', () => {
  it('sends the first name of the plan with its own quote when the service prices it: no extra quote', async () => {
    const svc = service({ 'Cite Avion': 2_300 });
    const choice = await chooseByPrice(tryOrder([cite, ouakam], new Map()), { first: { total: 2_300 }, ...svc });
    expect(choice).toMatchObject({ kind: 'chosen', candidate: { name: 'Cite Avion' } });
    expect(svc.asked).toEqual([]);
  });

  it('quotes the next candidate when one is at the fallback, and reports every quote with its verdict', async () => {
    const svc = service({ Ouakam: 2_800 });
    const choice = await chooseByPrice(tryOrder([cite, ouakam], new Map()), { first: { total: FALLBACK }, ...svc });
    expect(choice).toMatchObject({ kind: 'chosen', candidate: { name: 'Ouakam' }, quote: { total: 2_800 } });
    expect(choice.quoted).toEqual([
      { name: 'Cite Avion', totalXof: FALLBACK, priced: false },
      { name: 'Ouakam', totalXof: 2_800, priced: true },
    ]);
  });

  it('makes at most three quotes beyond the first, and says which names it did not try', async () => {
    const names = ['A', 'B', 'C', 'D', 'E', 'F'].map((n, i) => candidate(n, i));
    const svc = service({ F: 2_000 });
    const choice = await chooseByPrice(tryOrder(names, new Map()), { first: { total: FALLBACK }, ...svc });
    expect(svc.asked).toEqual(['B', 'C', 'D']);
    expect(choice).toMatchObject({ kind: 'none' });
    expect(choice.kind === 'none' && choice.untried.map((c) => c.name)).toEqual(['E', 'F']);
  });

  it('keeps its last quote for a wider name known priced rather than spend it on an unknown one', async () => {
    const names = ['A', 'B', 'C', 'D', 'E'].map((n, i) => candidate(n, i));
    const svc = service({ E: 2_300 });
    const choice = await chooseByPrice(tryOrder(names, new Map([known('E', true)])), {
      first: { total: FALLBACK },
      ...svc,
    });
    expect(svc.asked).toEqual(['B', 'C', 'E']);
    expect(choice).toMatchObject({ kind: 'chosen', candidate: { name: 'E' } });
  });

  it('uses the first quote as it is when the fallback tariff is not known (nothing to compare with)', async () => {
    const choice = await chooseByPrice(tryOrder([cite, ouakam], new Map()), {
      first: { total: 9_999 },
      quote: () => Promise.reject(new Error('no second quote expected')),
      isPriced: () => undefined,
    });
    expect(choice).toMatchObject({ kind: 'chosen', candidate: { name: 'Cite Avion' } });
  });
});
