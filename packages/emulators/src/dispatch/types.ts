/**
 * Public types of the dispatch emulator: what tests, the demo and `relais emulate dispatch` program against,
 * plus a few optional, additive extras marked "extra".
 */
import type { Logger, OperationName, WireProfile } from '../relais.js';

export interface EmulatedOrganisation {
  id: string;
  name: string;
  apiKeys: string[];
  webhookUrl?: string;
  webhookSecret?: string;
}

/** The spec's twelve operations, named as in src/adapters/dispatch-api/wire.ts (one list for the client and the emulator). */
export { OPERATIONS as OPERATION_NAMES, type OperationName } from '../relais.js';

export type FaultKind =
  | { kind: 'latency'; ms: number } // delay, then answer normally
  | { kind: 'status'; status: number } // answer this status (4xx: refused in this state; 5xx: service error) with a JSON error body, no side effect
  | { kind: 'rate_limit'; retryAfterSeconds: number } // 429 + Retry-After, no side effect
  | { kind: 'timeout' } // never answer (hold the socket until the client gives up / server closes)
  | { kind: 'reset' } // destroy the socket without answering, no side effect
  | { kind: 'commit_then_drop' }; // perform the operation (side effect happens), then destroy the socket

export interface FaultRule {
  operation: OperationName | '*';
  /** How many matching requests this rule hits; default: forever. */
  times?: number;
  fault: FaultKind;
  /** Only requests authenticated as this organisation (public operations never match a rule with orgId). */
  orgId?: string;
}

export type DeliveryOutcome = 'deliver' | 'fail';

export interface DispatchEmulatorOptions {
  organisations: EmulatedOrganisation[];
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (random). */
  port?: number;
  /**
   * When given (0 = random), the public operations (trackByCode, simulatePrice, the tracking page) are
   * served ONLY on this separate port, and the main port answers 404 for them; otherwise the main port serves them.
   */
  trackingPort?: number;
  /** 'manual' (default): time moves only via advance(). 'realtime': for demos. */
  clock?: 'manual' | 'realtime';
  /** Default 15 minutes. */
  quoteTtlMs?: number;
  /** Time between courier stages, default 60 s. */
  courierStepMs?: number;
  /** Default: always 'deliver'. Asked once per run, when the courier is out for delivery. */
  deliveryOutcome?: (s: { externalOrderId: string; shipmentId: string }) => DeliveryOutcome;
  /**
   * The dialect spoken on the wire (state names, error codes and body, webhook header and shape, field
   * spellings); default: defaultWireProfile(). Inside, and in shipments(), the emulator keeps its own names.
   */
  profile?: WireProfile;
  /**
   * 'spec' (default): each field under the profile's first spelling (default profile: expiresAt,
   * publicTrackingUrl, orderAmountXof); 'snake': under its first snake_case spelling (expires_at, ...).
   */
  responseSpelling?: 'spec' | 'snake';
  logger?: Logger;
  /** extra: where the neighbourhood CSVs are; default data/neighbourhoods found above this module. */
  gazetteerDir?: string;
  /** extra: gazetteer names this service does not price (quoted at the fallback tariff, as a city name is). */
  unpricedNeighbourhoods?: string[];
  /**
   * extra: the service's own list of priced places (zone-file.ts: `country,name,band,lat,lon,covers`): only these
   * names are priced, every other at the fallback tariff. Default: zones derived from the gazetteer.
   */
  zoneFile?: string;
  /** extra: request body limit in bytes, default 100 kB (over it: 413 PAYLOAD_TOO_LARGE). */
  bodyLimitBytes?: number;
}

export interface StatusEvent {
  /** The emulator's own name (names.ts ShipmentState); on the wire it is the profile's name for the same step. */
  status: string;
  at: string;
  /** Who triggered it (markReady / cancel): a person's name, so never shown on public tracking. */
  by?: string;
  reason?: string;
}

export interface EmulatedClaim {
  claim_id: string;
  shipment_id: string;
  reason: string;
  description: string;
  claimant_id: string;
  claimant_type: string;
  status: 'OPEN' | 'COMPENSATED' | 'REJECTED';
  outcome?: string;
  created_at: string;
  decided_at?: string;
}

/** What shipments() returns: the emulator's own view, in spec spelling and canonical state names whatever the profile and responseSpelling say. */
export interface EmulatedShipmentSnapshot {
  orgId: string;
  shipment_id: string;
  external_order_id: string;
  quote_id: string;
  /** The emulator's own name (names.ts ShipmentState), whatever the profile. */
  status: string;
  tracking_code: string;
  publicTrackingUrl: string;
  orderAmountXof?: number;
  payment_mode: string;
  total: number;
  courier_id?: string;
  settlement_status: 'PENDING' | 'HELD' | 'SETTLED';
  created_at: string;
  updated_at: string;
  status_history: StatusEvent[];
  claims: EmulatedClaim[];
}

export type RecordedOperation = OperationName | 'trackingPage' | 'unknown';

export interface RecordedCall {
  operation: RecordedOperation;
  method: string;
  /** Path without the query string. */
  path: string;
  orgId?: string;
  /** HTTP status answered; 0 when no answer was sent (timeout, reset, commit_then_drop, client gone). */
  status: number;
  /** Emulator-clock time at which the request arrived (ISO 8601). */
  at: string;
  /** extra: the fault kind applied, if any. */
  fault?: FaultKind['kind'];
}

export interface WebhookDelivery {
  orgId: string;
  url: string;
  body: unknown;
  /** Receiver's status; absent on a network failure. */
  status?: number;
  attempt: number;
  at: string;
  /** extra: the network error, if any. */
  error?: string;
}

export interface DispatchEmulator {
  /** e.g. http://127.0.0.1:PORT (paths start with /v1). */
  baseUrl: string;
  /** Same as baseUrl unless trackingPort was given. */
  trackingUrl: string;
  now(): Date;
  /** Moves time, runs the courier stages that fall due, sends (and awaits) the webhooks due. */
  advance(ms: number): Promise<void>;
  /** Advances step by step until nothing is scheduled any more (courier runs, webhook retries), bounded. */
  runUntilIdle(maxMs?: number): Promise<void>;
  faults: { add(rule: FaultRule): void; clear(): void };
  shipments(orgId?: string): EmulatedShipmentSnapshot[];
  calls(): RecordedCall[];
  webhookDeliveries(): WebhookDelivery[];
  decideDispute(claimId: string, decision: { status: 'COMPENSATED' | 'REJECTED'; outcome: string }): void;
  setOrganisationWebhook(orgId: string, url: string | undefined, secret?: string): void;
  close(): Promise<void>;
}
