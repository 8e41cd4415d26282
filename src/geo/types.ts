/** The resolver's public types: what the worker, the CLI and the held-order views read. */

export interface Neighbourhood {
  country: string;
  city: string;
  name: string;
  coords?: { lat: number; lng: number };
  altNames: string[];
  placeType: string;
}

export interface AddressFields {
  address1?: string;
  address2?: string;
  city?: string;
  province?: string;
  zip?: string;
  company?: string;
}

export interface ResolveInput {
  /** ISO 3166-1 alpha-2 ('SN', 'CI'); when absent, every country the gazetteer covers. */
  country?: string;
  fields: AddressFields;
  /**
   * Where the drop-off is. `accuracyM`, when the source reports it (a phone's fix: 5–50 m; a geocoder's
   * city-level answer: kilometres), tells a precise point from a city centroid; without it the number of
   * decimals and the distance to the city's own point decide (see usableCoords in resolver.ts).
   */
  coords?: { lat: number; lng: number; accuracyM?: number };
  /** The merchant's alias text → canonical neighbourhood name (as the gazetteer spells it). */
  aliases?: Record<string, string>;
}

export interface MatchEvidence {
  field: keyof AddressFields | 'coords' | 'alias';
  text: string;
  via: 'exact' | 'alt_name' | 'alias' | 'numbered' | 'abbreviation' | 'fuzzy' | 'coords';
  score: number;
}

export type Resolution =
  | {
      ok: true;
      neighbourhood: Neighbourhood;
      confidence: number;
      evidence: MatchEvidence[];
      alternatives: { name: string; confidence: number }[];
    }
  | {
      ok: false;
      /** Merchant-readable: what was wrong and what to do. */
      reason: string;
      candidates: { name: string; confidence: number }[];
      /** The words that matched something, for `relais resolve` and the held-order page. */
      evidence?: MatchEvidence[];
    };

export const DEFAULT_MIN_CONFIDENCE = 0.75;
/** Beyond this distance a gazetteer point says nothing about an address (see data/neighbourhoods/README.md). */
export const COORDS_RADIUS_KM = 2.5;
