/**
 * Reference words the resolver must recognise but never send as a neighbourhood: countries, regions,
 * city nicknames; words of address prose; abbreviations merchants' customers type. Each list says why.
 */

/** ISO 3166-1 alpha-2 codes of the countries the gazetteer covers. */
export const COUNTRIES = ['SN', 'CI', 'TG', 'BJ', 'ML', 'BF', 'NE'] as const;
export type CountryCode = (typeof COUNTRIES)[number];

export function isCountryCode(s: string): s is CountryCode {
  return (COUNTRIES as readonly string[]).includes(s);
}

/** Names of the countries themselves, in the spellings shops and customers use. */
export const COUNTRY_NAMES: Record<CountryCode, string[]> = {
  SN: ['Sénégal', 'Republique du Senegal', 'SN'],
  CI: ["Côte d'Ivoire", 'Cote-d-Ivoire', 'Ivory Coast', 'RCI', 'CI'],
  TG: ['Togo', 'Republique Togolaise', 'TG'],
  BJ: ['Bénin', 'Republique du Benin', 'BJ'],
  ML: ['Mali', 'ML'],
  BF: ['Burkina Faso', 'Burkina', 'BF'],
  NE: ['Niger', 'NE'],
};

/**
 * City names beyond the gazetteer's own `city` column and the alternate names of each city's row:
 * the nicknames people write in an address ("Ouaga", "Abj"). A city name falls back to the dispatch
 * service's highest tariff, so these are held, never sent.
 */
export const EXTRA_CITY_NAMES: Record<CountryCode, string[]> = {
  SN: ['Dakar Ville', 'Ville de Dakar'],
  CI: ['Abj', "Ville d'Abidjan"],
  TG: ['Lome Ville'],
  BJ: ['Ville de Cotonou'],
  ML: ['Bko', 'Ville de Bamako'],
  BF: ['Ouaga', 'Ville de Ouagadougou'],
  NE: ['Ville de Niamey'],
};

/**
 * Regions, districts and provinces that contain the whole city (what a Shopify "province" field or a
 * customer's last line carries). "Grand Dakar" is NOT here: it is a commune d'arrondissement of Dakar.
 */
export const REGION_NAMES: Record<CountryCode, string[]> = {
  SN: ['Région de Dakar', 'Region Dakar', 'Département de Dakar', 'Cap-Vert', 'Thiès'],
  CI: [
    'Lagunes',
    'District des Lagunes',
    "District autonome d'Abidjan",
    "District d'Abidjan",
    'Abidjan Autonomous District',
    'Grand Abidjan',
  ],
  TG: ['Maritime', 'Région Maritime', 'Golfe', 'Préfecture du Golfe', 'Grand Lomé'],
  BJ: ['Littoral', 'Atlantique'],
  ML: ['District de Bamako', 'Koulikoro'],
  BF: ['Centre', 'Région du Centre', 'Kadiogo'],
  NE: ['Communauté urbaine de Niamey', 'Région de Niamey'],
};

/**
 * Approximate bounding boxes (south, west, north, east) with a small margin. A point outside its
 * country's box is a geocoding error (or 0,0) and is ignored rather than matched to the nearest quartier.
 */
export const COUNTRY_BOXES: Record<CountryCode, [number, number, number, number]> = {
  SN: [12.2, -17.6, 16.8, -11.3],
  CI: [4.3, -8.7, 10.8, -2.4],
  TG: [6.0, -0.2, 11.2, 1.9],
  BJ: [6.1, 0.7, 12.5, 3.9],
  ML: [10.1, -12.3, 25.1, 4.3],
  BF: [9.4, -5.6, 15.1, 2.5],
  NE: [11.6, 0.1, 23.6, 16.0],
};

/** Street kinds: "Route de Ouakam" names a road, not the quartier it runs through. */
const STREET_WORDS = [
  'rue',
  'avenue',
  'av',
  'ave',
  'boulevard',
  'bd',
  'blvd',
  'route',
  'rte',
  'allee',
  'impasse',
  'autoroute',
  'voie',
];
/** Words placing the address near a landmark: "près de l'Hôpital" is not Abidjan's Hôpital quartier. */
const LANDMARK_WORDS = ['pres', 'proche', 'face', 'derriere', 'devant', 'cote', 'vers', 'apres', 'avant', 'loin'];
/** Articles skipped when looking back for a street or landmark word ("Route de la Corniche"). */
export const LINKING_WORDS = new Set(['de', 'du', 'des', 'la', 'le', 'les', 'l', 'd', 'a', 'au', 'aux', 'en']);

/**
 * Words of address prose: streets, buildings, landmarks, articles. They never start a typo match
 * ("Villa" is one letter from nothing we want), though a gazetteer name that contains them
 * ("Quartier Chicane", "Cité Keur Gorgui") still matches exactly.
 */
export const NOISE_WORDS = new Set([
  ...STREET_WORDS,
  ...LANDMARK_WORDS,
  ...LINKING_WORDS,
  'r',
  'place',
  'pl',
  'corniche',
  'villa',
  'vla',
  'lot',
  'lots',
  'lotissement',
  'parcelle',
  'immeuble',
  'imm',
  'bat',
  'batiment',
  'residence',
  'appartement',
  'appart',
  'appt',
  'apt',
  'etage',
  'porte',
  'bp',
  'cedex',
  'non',
  'entre',
  'et',
  'sur',
  'chez',
  'dans',
  'par',
  'quartier',
  'qrt',
  'qtr',
  'quart',
  'commune',
  'ville',
  'cite',
  'secteur',
  'zone',
  'tel',
  'telephone',
  'maison',
  'domicile',
  'pharmacie',
  'mosquee',
  'eglise',
  'ecole',
  'lycee',
  'boutique',
  'magasin',
  'station',
  'garage',
  'marche',
  'carrefour',
  'rond',
  'point',
  'pont',
  'arret',
  'bus',
  'centre',
  'region',
  'departement',
  'district',
  'arrondissement',
  'province',
  'extension',
  'ext',
  'nord',
  'sud',
  'est',
  'ouest',
  'grand',
  'petit',
  'nouveau',
  'nouvelle',
  'ancien',
  'ancienne',
  'village',
  'numero',
  'email',
  'livraison',
  'client',
]);

/** Words that, after a unit's number, name another unit ("Liberté 6 Extension", "Zone 4 Nord"), not an address. */
export const UNIT_QUALIFIERS = new Set(['extension', 'ext', 'nord', 'sud', 'est', 'ouest', 'bis']);

/** Words that, just before a name, make it a street or a landmark rather than the customer's quartier. */
export const STREET_OR_LANDMARK_WORDS = new Set([...STREET_WORDS, ...LANDMARK_WORDS]);

/**
 * Abbreviations customers type, expanded before matching. Each entry is local to a country because
 * "PA" means Parcelles Assainies only in Dakar. `beforeNumber` limits an expansion to a number
 * following it ("U17" → "Unité 17"; a lone "u" stays a letter).
 */
export interface Abbreviation {
  from: string[];
  to: string[];
  beforeNumber?: boolean;
}
const EVERYWHERE: Abbreviation[] = [
  { from: ['st'], to: ['saint'] },
  { from: ['ste'], to: ['sainte'] },
  { from: ['grd'], to: ['grand'] },
  { from: ['gd'], to: ['grand'] },
  { from: ['qtr'], to: ['quartier'] },
  { from: ['qrt'], to: ['quartier'] },
  { from: ['qt'], to: ['quartier'] },
  { from: ['qtier'], to: ['quartier'] },
];
export const ABBREVIATIONS: Record<CountryCode, Abbreviation[]> = {
  SN: [
    ...EVERYWHERE,
    { from: ['pa'], to: ['parcelles', 'assainies'] },
    { from: ['p', 'a'], to: ['parcelles', 'assainies'] },
    { from: ['u'], to: ['unite'], beforeNumber: true },
    { from: ['unit'], to: ['unite'], beforeNumber: true },
    { from: ['sc'], to: ['sacre', 'coeur'], beforeNumber: true },
  ],
  CI: [
    ...EVERYWHERE,
    { from: ['yop'], to: ['yopougon'] },
    { from: ['koum'], to: ['koumassi'] },
    { from: ['treich'], to: ['treichville'] },
    { from: ['riv'], to: ['riviera'] },
  ],
  TG: EVERYWHERE,
  BJ: EVERYWHERE,
  ML: EVERYWHERE,
  BF: EVERYWHERE,
  NE: EVERYWHERE,
};
