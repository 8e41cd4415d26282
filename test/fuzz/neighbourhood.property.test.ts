/**
 * Neighbourhood resolution never answers a city name. The dispatch service prices a city name at its
 * highest tariff, so whatever the address says, the resolver must answer a quartier or nothing.
 *
 * src/geo/resolver.test.ts already checks a fixed vocabulary of capitals, countries and regions. This
 * property is broader: it draws from the gazetteer's own list of names that must never be sent (every
 * spelling of every city from the data, in every language listed, plus regions, countries and
 * nicknames), misspells them, mixes them with real quartier names and address words in any field, adds
 * coordinates on or near city centres, and merchant aliases pointing anywhere, including at a city.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadGazetteer } from '../../src/geo/gazetteer.js';
import { COUNTRIES } from '../../src/geo/names.js';
import { NeighbourhoodResolver, normaliseText, type AddressFields, type ResolveInput } from '../../src/geo/resolver.js';

const resolver = NeighbourhoodResolver.load();
const gazetteer = loadGazetteer(resolver.dataDir);

/** Names never to send in country c: its own cities and regions, and any country's name. */
const blockedIn = new Map(
  COUNTRIES.map((c) => [
    c,
    new Set(gazetteer.blocked.filter((b) => b.country === c || b.kind === 'country').map((b) => b.key)),
  ]),
);
/** Another country's city or region: a quartier may carry it (Niamey's "Abidjan") only when the shop's country is given. */
const blockedElsewhere = new Map(
  COUNTRIES.map((c) => [
    c,
    new Set(gazetteer.blocked.filter((b) => b.country !== c && b.kind !== 'country').map((b) => b.key)),
  ]),
);
const listedNames = new Map(
  [...gazetteer.countries].map(([c, index]) => [c, new Set(index.places.map((p) => normaliseText(p.name)))]),
);

const blockedDisplays = [...new Set(gazetteer.blocked.map((b) => b.display))];
const placeNames = [...gazetteer.countries.values()].flatMap((index) =>
  index.places.flatMap((p) => [p.name, ...p.altNames.slice(0, 2)]),
);
const addressWords = [
  'Rue 10',
  'villa 12',
  'BP 1234',
  'lot 45',
  'près de la mosquée',
  'cité',
  'quartier',
  'immeuble B',
  'face pharmacie',
  'zone 4',
  'x',
  '',
];

/** How people mistype a name: case, accents, hyphens, one letter dropped, doubled or replaced. */
const typed = (name: string) =>
  fc
    .tuple(
      fc.constantFrom('as is', 'upper', 'lower', 'no accents', 'hyphens', 'compact'),
      fc.nat(),
      fc.constantFrom('none', 'drop', 'double', 'swap'),
    )
    .map(([style, at, typo]) => {
      let s = name;
      if (style === 'upper') s = s.toUpperCase();
      if (style === 'lower') s = s.toLowerCase();
      if (style === 'no accents') s = s.normalize('NFD').replace(/\p{M}/gu, '');
      if (style === 'hyphens') s = s.replace(/ /g, '-');
      if (style === 'compact') s = s.replace(/[\s-]/g, '');
      if (s.length > 2 && typo !== 'none') {
        const i = at % s.length;
        if (typo === 'drop') s = s.slice(0, i) + s.slice(i + 1);
        if (typo === 'double') s = s.slice(0, i) + s.charAt(i) + s.slice(i);
        if (typo === 'swap') s = s.slice(0, i) + 'e' + s.slice(i + 1);
      }
      return s;
    });

const word = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...blockedDisplays).chain(typed) },
  { weight: 2, arbitrary: fc.constantFrom(...placeNames).chain(typed) },
  { weight: 2, arbitrary: fc.constantFrom(...addressWords) },
);
const field = fc
  .array(word, { maxLength: 4 })
  .chain((ws) => fc.constantFrom(', ', ' ', ' - ', '/', '\n').map((sep) => ws.join(sep)));
const nearCentre = fc
  .tuple(
    fc.constantFrom(...gazetteer.cityCentres),
    fc.double({ min: -0.03, max: 0.03, noNaN: true }),
    fc.double({ min: -0.03, max: 0.03, noNaN: true }),
  )
  .map(([centre, dLat, dLng]) => ({ lat: centre.point.lat + dLat, lng: centre.point.lng + dLng }));
const aliases = fc.dictionary(
  fc.constantFrom(...addressWords.filter(Boolean), ...blockedDisplays.slice(0, 20)),
  fc.constantFrom(...blockedDisplays, ...placeNames),
  { maxKeys: 2 },
);

const input = fc.record(
  {
    country: fc.constantFrom(...COUNTRIES, 'ne', 'ci'),
    fields: fc.record(
      {
        address1: field,
        address2: field,
        city: field,
        province: field,
        zip: fc.constantFrom('', '12000', 'BP 15'),
        company: field,
      },
      { requiredKeys: [] },
    ),
    coords: nearCentre,
    aliases,
  },
  { requiredKeys: ['fields'] },
);

describe('neighbourhood resolution', () => {
  it('never answers a city, region or country name, however the address spells or mixes them', () => {
    fc.assert(
      fc.property(input, (raw) => {
        const request: ResolveInput = { fields: raw.fields as AddressFields };
        if (raw.country !== undefined) request.country = raw.country;
        if (raw.coords !== undefined) request.coords = raw.coords;
        if (raw.aliases !== undefined) request.aliases = raw.aliases;
        const r = resolver.resolve(request);
        if (!r.ok) {
          expect(r.reason.length).toBeGreaterThan(0);
          return;
        }
        const country = r.neighbourhood.country as (typeof COUNTRIES)[number];
        const key = normaliseText(r.neighbourhood.name);
        expect(
          blockedIn.get(country)?.has(key),
          `${r.neighbourhood.name} is a city, region or country name of ${country}`,
        ).toBe(false);
        if (blockedElsewhere.get(country)?.has(key)) {
          expect(request.country?.toUpperCase(), `${r.neighbourhood.name} names another country's city`).toBe(country);
        }
        // An answer is always a place the gazetteer lists, never text lifted from the address.
        expect(listedNames.get(country)?.has(key)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("holds an address made only of its own country's city, region and country names, in any case, accents or hyphens", () => {
    // Another country's city name may be a real quartier here (Niamey has an "Abidjan"): the first property covers those.
    const ownNames = (country: (typeof COUNTRIES)[number]) =>
      fc
        .constantFrom(
          ...gazetteer.blocked.filter((b) => b.country === country || b.kind === 'country').map((b) => b.display),
        )
        .chain((name) =>
          fc.constantFrom(
            name,
            name.toUpperCase(),
            name.toLowerCase(),
            name.normalize('NFD').replace(/\p{M}/gu, ''),
            name.replace(/ /g, '-'),
          ),
        );
    const onlyCities = fc.constantFrom(...COUNTRIES).chain((country) =>
      fc.record({
        country: fc.constant(country),
        fields: fc.record(
          {
            address1: ownNames(country),
            address2: ownNames(country),
            city: ownNames(country),
            province: ownNames(country),
          },
          { requiredKeys: [] },
        ),
      }),
    );
    fc.assert(
      fc.property(onlyCities, (raw) => {
        const r = resolver.resolve({ country: raw.country, fields: raw.fields });
        expect(r.ok, r.ok ? `${JSON.stringify(raw)} resolved to ${r.neighbourhood.name}` : '').toBe(false);
      }),
      { numRuns: 1500 },
    );
  });
});
