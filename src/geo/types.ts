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
  /**
   * Which names the dispatch service prices (learned per service by the fallback-tariff guard): true,
   * false, or undefined when not known. Decides which of two nested names is sent (issue 18 §3).
   */
  pricing?: PricedNames;
}

export interface PricedNames {
  isPriced(name: string): boolean | undefined;
}

/**
 * Which of the names an address gives for one place is sent. "Ouakam, cité Avion", "Cocody Angré":
 * an area and a sub-area inside it, one answer. The most precise name the service is known to price is
 * sent; while that is not known, the area, and the sub-area stays in the address line.
 */
export interface LevelDecision {
  /** 'only': the address names one place; otherwise which of the nested names is sent. */
  sent: 'only' | 'area' | 'sub-area';
  /** Every nested name the address gives, most precise first, and whether the service prices it (when known). */
  levels: { name: string; placeType: string; priced?: boolean }[];
  /** Why this level, in words for `relais resolve`. */
  reason: string;
}

export interface MatchEvidence {
  field: keyof AddressFields | 'coords' | 'alias';
  text: string;
  via: 'exact' | 'alt_name' | 'alias' | 'numbered' | 'abbreviation' | 'reordered' | 'fuzzy' | 'coords';
  score: number;
}

export type Resolution =
  | {
      ok: true;
      neighbourhood: Neighbourhood;
      confidence: number;
      evidence: MatchEvidence[];
      alternatives: { name: string; confidence: number }[];
      /** Why this place won over the others (for `relais resolve`). */
      why?: string;
      /** Which level of nested names is sent, and the others. */
      level?: LevelDecision;
      /** The more precise name the address gives, when the area is sent instead (kept in the address line). */
      subArea?: Neighbourhood;
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
