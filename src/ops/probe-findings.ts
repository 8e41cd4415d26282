/**
 * What `relais probe` records and what it finds in the records: the saved exchanges (probe-caller.ts writes them)
 * and the findings the analysis makes of them (probe-analysis.ts), which learned.json and the printed report show.
 */
import type { DeliveryStep } from '../domain/shipment-status.js';
import type { ErrorMeaning, FieldKey } from '../adapters/dispatch-api/profile.js';
import type { ProbeOperation } from './probe-routes.js';

/** One saved request and answer (the API key already redacted). */
export interface Exchange {
  /** What the probe meant by this call, e.g. "quote for the pickup neighbourhood". */
  step: string;
  operation: ProbeOperation;
  method: 'GET' | 'POST';
  /** Path with its query string, on the base or the tracking host. */
  path: string;
  host: 'base' | 'tracking';
  requestHeaders: Record<string, string>;
  requestBody?: unknown;
  /** HTTP status; absent when no answer came (network error, timeout). */
  status?: number;
  responseHeaders: Record<string, string>;
  /** Parsed JSON, or the text when the answer was not JSON. */
  responseBody?: unknown;
  /** Network failure, when there was no answer. */
  error?: string;
  ms: number;
  /** For the provoked errors: what Relais should read this answer as. */
  expectedMeaning?: ErrorMeaning;
}

export type Resource =
  'quote' | 'breakdown' | 'shipment' | 'shipment list' | 'tracking view' | 'price simulation' | 'status history entry';

export interface FieldFinding {
  resource: Resource;
  field: FieldKey;
  /** Relais cannot read the resource without it. */
  required: boolean;
  /** The profile spelling found in at least one answer. */
  matched?: string;
  /** Spellings the profile tries, for the report. */
  tried: string[];
  /** When no spelling matched: the unknown key that probably is this field (see UnknownKey.guess). */
  guessed?: string;
}

export interface UnknownKey {
  resource: Resource;
  /** The key as seen (relative to the resource, e.g. "valid_until" or "price_breakdown.customer_pays"). */
  key: string;
  /** Type and a short example of its value. */
  example: string;
  /** A profile field it probably is, and why; absent when no guess was safe. */
  guess?: { field: FieldKey; why: string };
}

export interface StateFinding {
  state: string;
  /** Where it was seen, e.g. "getShipment status", "listShipments history". */
  seenIn: string[];
  step?: DeliveryStep;
  guess?: { step: DeliveryStep; why: string };
}

export interface ErrorFinding {
  step: string;
  status: number;
  code?: string;
  message?: string;
  /** The profile's codePaths/messagePaths found them. */
  readByProfile: boolean;
  /** Where the code and message were found when the profile's paths did not (guessed). */
  guessedCodePath?: string;
  guessedMessagePath?: string;
  /** What the profile makes of it (profile.meaningOf). */
  meaning?: ErrorMeaning;
  expectedMeaning?: ErrorMeaning;
  /** The JSON keys of the body down to depth 2, to show its shape. */
  shape: string[];
}

export interface FallbackFinding {
  neighbourhood: string;
  city: string;
  neighbourhoodTotal?: number;
  cityTotal?: number;
  /** What a city name instead of the neighbourhood costs more (same weight, cash on delivery). */
  difference?: number;
  /** pricing_basis of each quote, when the service says it. */
  neighbourhoodBasis?: string;
  cityBasis?: string;
}

export interface Analysis {
  fields: FieldFinding[];
  unknownKeys: UnknownKey[];
  states: StateFinding[];
  errors: ErrorFinding[];
  fallback: FallbackFinding;
}
