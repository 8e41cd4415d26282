/**
 * The gazetteer's types: places, their index keys, the names a quartier may never be, and the whole gazetteer.
 * Apart from gazetteer.ts so the files that build it (gazetteer-rows.ts, gazetteer-index.ts) need no import of it.
 */
import type { CountryCode } from './names.js';

export interface Point {
  lat: number;
  lng: number;
}

/** How a lookup key relates to its place's name. */
export type KeyKind = 'exact' | 'alt_name' | 'abbreviation';

export interface Place {
  id: number;
  country: CountryCode;
  city: string;
  name: string;
  tokens: string[];
  placeType: string;
  coords?: Point;
  altNames: string[];
  /** Every sourced point of this name (OSM / WOF rows), for the nearest-quartier search. */
  points: Point[];
  /** Normalised names of the administrative parents the official lists give ("Parcelles Assainies"). */
  parents: string[][];
  /** Every normalised key that leads here. */
  keys: Set<string>;
  /** 1: a whole commune, arrondissement or town; 2: a quartier; 3: a numbered or officially listed quartier. */
  specificity: 1 | 2 | 3;
  /**
   * A quartier-sized place that is also an official commune d'arrondissement (Ouakam, Médina, HLM):
   * it holds the quartiers around it, so "Mamelles, Ouakam" is one address, and Mamelles the finer answer.
   */
  commune: boolean;
  /** Weight for the kind of place: communes and villages are answers only when nothing finer is found. */
  typeFactor: number;
  /** The name is also another country's city (Niamey's "Abidjan"): valid only when the country is given. */
  onlyWithCountry: boolean;
}

export interface KeyHit {
  place: Place;
  kind: KeyKind;
}

export interface FuzzyKey {
  tokens: string[];
  /** Letters without spaces: a candidate whose length differs by more than its edit budget is skipped. */
  length: number;
  hit: KeyHit;
}

export interface CountryIndex {
  country: CountryCode;
  places: Place[];
  byKey: Map<string, KeyHit[]>;
  byCompact: Map<string, KeyHit[]>;
  /**
   * The compact form as it sounds (soundKey word by word): "Toits-Rouges" typed "Toit Rouge", "Patte d'Oie"
   * typed "Pate d oie". Read only where the words as typed name nothing.
   */
  bySound: Map<string, KeyHit[]>;
  /** Every leading run of tokens of every key: an n-gram is extended only while it can still become a key. */
  prefixes: Set<string>;
  /** Names of two or more words by their words sorted ("akouedo camp militaire"): the same words typed in another order. */
  byWords: Map<string, KeyHit[]>;
  /** Names and alternate names by number of tokens, then by letter count (typos compare token by token). */
  fuzzyByLength: Map<number, Map<number, FuzzyKey[]>>;
}

export type BlockedKind = 'city' | 'region' | 'country';

/** A name that must never be sent as a neighbourhood, and which country it belongs to. */
export interface BlockedName {
  country: CountryCode;
  kind: BlockedKind;
  display: string;
  tokens: string[];
  key: string;
  compact: string;
}

export interface Gazetteer {
  dataDir: string;
  countries: Map<CountryCode, CountryIndex>;
  blocked: BlockedName[];
  blockedByFirstToken: Map<string, BlockedName[]>;
  /** Single words that are (part of) a city, region or country name: never edited into a quartier. */
  blockedWords: Set<string>;
  /** Where each city's own point lies: coordinates this close are a geocoder's city centroid. */
  cityCentres: { country: CountryCode; point: Point }[];
}
