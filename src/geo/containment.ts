/**
 * Wider places the official lists do not state but the gazetteer's names and points show, for an order's
 * candidate names (geography.ts PlaceTree.placeNamed): a commune named after its quartiers holds them, and in a
 * district the lists divide wholly into communes, a place with no listed commune lies in the one whose point is
 * clearly the nearest. Each rule states what must hold in the data; where it does not (Dakar's communes
 * d'arrondissement have no points of their own), nothing is guessed.
 */
import type { CountryIndex, Gazetteer, Place } from './gazetteer.js';
import { NOISE_WORDS } from './names.js';
import { normaliseTokens } from './normalise.js';
import { COMMUNE_REACH_KM, placeDistanceKm, placesDistanceKm } from './resolver-model.js';

/**
 * A district's communes: the places the official lists give one parent that is the region's or district's
 * name (Abidjan's ten communes and four sous-préfectures, all under "District autonome d'Abidjan"), at least
 * DISTRICT_MIN_COMMUNES of them, each with a point. Not where that name is also the city's: "Dakar" names the
 * city, its département and its region, so the places listed under it (départements, arrondissements and a
 * commune d'arrondissement) do not divide one area at one level, and the nearest of them says nothing.
 */
export const DISTRICT_MIN_COMMUNES = 5;
/**
 * The nearest commune point must be this many times nearer than the next one: communes differ in size (Le
 * Plateau is a few km², Yopougon over 100) and a point is not a boundary. Measured on the Abidjan list
 * (data/service-maps/CI_abidjan.csv, the communes' quartiers): no place at 1.5 or more lay in another commune
 * than the nearest, while below it Biétri (Marcory) is nearer Koumassi's point and Danga (Cocody) Le Plateau's;
 * twice as near keeps a margin for the places no list checks (Jérusalem, 2.5 km from Le Plateau's point and
 * 3.8 from Attécoubé's, gets none).
 */
export const DISTRICT_CLEARLY_NEARER = 2;

const meaningful = (tokens: string[]) => tokens.filter((t) => !NOISE_WORDS.has(t)).join(' ');

/** Is this place a whole commune, sous-préfecture or commune d'arrondissement? */
export const isCommune = (p: Place): boolean => p.specificity === 1 || p.commune;

/** The communes dividing the district of each country, when the lists name them all with a point. */
export function districtCommunes(gazetteer: Gazetteer, index: CountryIndex): Place[] {
  const here = gazetteer.blocked.filter((b) => b.country === index.country);
  const cities = new Set(here.filter((b) => b.kind === 'city').map((b) => meaningful(b.tokens)));
  const district = new Set(
    here
      .filter((b) => b.kind === 'region')
      .map((b) => meaningful(b.tokens))
      .filter((key) => !cities.has(key)),
  );
  const byParent = new Map<string, Place[]>();
  for (const p of index.places) {
    if (!isCommune(p)) continue;
    for (const parent of p.parents) {
      const key = meaningful(parent);
      if (district.has(key)) byParent.set(key, [...(byParent.get(key) ?? []), p]);
    }
  }
  const whole = [...byParent.values()].filter(
    (members) => members.length >= DISTRICT_MIN_COMMUNES && members.every((m) => m.coords !== undefined),
  );
  return [...new Set(whole.flat())];
}

/**
 * The district commune whose point is clearly the nearest to the place's, within a commune's reach; or merely
 * the nearest when the place's name opens with it ("Abobo Nord", 4.3 km from Abobo's point and 5.9 from
 * Cocody's): the name and the points agree. "Port-Bouet II", whose nearest commune is Yopougon, gets none.
 */
export function nearestDistrictCommune(place: Place, communes: Place[]): Place | undefined {
  const ranked = communes
    .filter((c) => c !== place)
    .map((c) => ({ c, km: placeDistanceKm(place, c.coords!) }))
    .filter((r): r is { c: Place; km: number } => r.km !== undefined)
    .sort((a, b) => a.km - b.km);
  const [first, second] = ranked;
  if (!first || first.km > COMMUNE_REACH_KM) return undefined;
  const named = first.c.tokens.length < place.tokens.length && first.c.tokens.every((t, i) => place.tokens[i] === t);
  return named || !second || second.km >= DISTRICT_CLEARLY_NEARER * Math.max(first.km, 0.1) ? first.c : undefined;
}

/**
 * The communes named after this place among others: "Sicap-Liberté" holds Liberté, "Dieuppeul-Derklé" holds
 * Derklé, "Fann-Point E-Amitié" holds Fann and Amitié (Dakar names its communes d'arrondissement after the
 * quartiers they join). The place's whole name must be one or more hyphen-joined parts of the commune's, and
 * neither may be a commune of another (Yoff is not in Grand-Yoff), nor farther apart than a commune's reach.
 */
export function communesNamedAfter(place: Place, index: CountryIndex): Place[] {
  if (isCommune(place)) return [];
  const key = place.tokens.join(' ');
  return index.places.filter((c) => {
    if (c === place || !isCommune(c) || c.city !== place.city || !c.name.includes('-')) return false;
    const parts = c.name.split('-').map((part) => normaliseTokens(part).join(' '));
    const runs = parts.flatMap((_, i) => parts.slice(i).map((__, j) => parts.slice(i, i + j + 1).join(' ')));
    if (!runs.includes(key)) return false;
    const km = placesDistanceKm(place, c);
    return km === undefined || km <= COMMUNE_REACH_KM;
  });
}

/**
 * Is this name given to places far apart in the city (farther than a commune's reach)? Estates built by one
 * developer carry its name in several communes (Sogefiha: a cité in Yopougon, another in Cocody, and in Abobo),
 * so the name alone says nothing of the commune: the commune typed before it ("Abobo Sogefiha") does.
 */
export function nameUsedApart(place: Place, index: CountryIndex): boolean {
  const named = index.places.filter((p) => place.tokens.every((t) => p.tokens.includes(t)));
  return named.some((a) => named.some((b) => (placesDistanceKm(a, b) ?? 0) > COMMUNE_REACH_KM));
}
