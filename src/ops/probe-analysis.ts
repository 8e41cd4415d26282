/**
 * What `relais probe` learns from the raw answers it saved: which of the wire profile's spellings matched,
 * which keys the profile does not know (and, conservatively, which profile field each might be: probe-guesses.ts),
 * which state names the profile maps, what the error body looks like, and the fallback tariff. The draft profile
 * made of it is probe-draft.ts's.
 *
 * Pure functions over recorded exchanges: no network here.
 */
import { DELIVERY_STEPS, type DeliveryStep } from '../domain/shipment-status.js';
import type { WireProfile } from '../adapters/dispatch-api/profile.js';
import { Collector } from './probe-collector.js';
import { readError } from './probe-error-bodies.js';
import type { Analysis, ErrorFinding, Exchange, FallbackFinding, Resource } from './probe-findings.js';
import { isRecord, isWhole } from './probe-guesses.js';
import type { ProbeOperation } from './probe-routes.js';

const RESOURCE_OF: Record<ProbeOperation, Resource | undefined> = {
  createQuote: 'quote',
  getQuote: 'quote',
  simulatePrice: 'price simulation',
  listShipments: 'shipment list',
  getShipment: 'shipment',
  getShipmentByExternalOrder: 'shipment',
  trackByCode: 'tracking view',
};

export interface FallbackSteps {
  neighbourhood: string;
  city: string;
  neighbourhoodStep: string;
  cityStep: string;
}

export function analyseExchanges(
  profile: WireProfile,
  exchanges: readonly Exchange[],
  fallback: FallbackSteps,
): Analysis {
  const collector = new Collector(profile);
  const errors: ErrorFinding[] = [];
  for (const exchange of exchanges) {
    if (exchange.status === undefined) continue;
    if (exchange.status >= 400) {
      errors.push(readError(profile, { ...exchange, status: exchange.status }));
      continue;
    }
    const resource = RESOURCE_OF[exchange.operation];
    if (resource === undefined) continue;
    collector.resource(resource, exchange.responseBody, exchange.operation);
    if (
      resource === 'shipment list' &&
      isRecord(exchange.responseBody) &&
      Array.isArray(exchange.responseBody.shipments)
    ) {
      for (const item of exchange.responseBody.shipments) collector.resource('shipment', item, 'listShipments');
    }
  }
  return { ...collector.result(), errors, fallback: readFallback(profile, exchanges, fallback) };
}

/** The two quotes' totals (same weight, cash on delivery), and what a city name costs more than the neighbourhood. */
function readFallback(profile: WireProfile, exchanges: readonly Exchange[], steps: FallbackSteps): FallbackFinding {
  const quoteOf = (step: string) =>
    exchanges.find((e) => e.step === step && e.status !== undefined && e.status < 400)?.responseBody;
  const totalOf = (body: unknown): number | undefined => {
    const seen = profile.field(body, 'quoteTotal');
    return isWhole(seen) ? seen : undefined;
  };
  const basisOf = (body: unknown): string | undefined => {
    const basis = isRecord(body) ? body.pricing_basis : undefined;
    return typeof basis === 'string' ? basis : undefined;
  };
  const near = quoteOf(steps.neighbourhoodStep);
  const far = quoteOf(steps.cityStep);
  const neighbourhoodTotal = totalOf(near);
  const cityTotal = totalOf(far);
  const nearBasis = basisOf(near);
  const farBasis = basisOf(far);
  return {
    neighbourhood: steps.neighbourhood,
    city: steps.city,
    ...(neighbourhoodTotal === undefined ? {} : { neighbourhoodTotal }),
    ...(cityTotal === undefined ? {} : { cityTotal }),
    ...(neighbourhoodTotal !== undefined && cityTotal !== undefined
      ? { difference: cityTotal - neighbourhoodTotal }
      : {}),
    ...(nearBasis === undefined ? {} : { neighbourhoodBasis: nearBasis }),
    ...(farBasis === undefined ? {} : { cityBasis: farBasis }),
  };
}

/** True when every profile field seen matched, every state maps to a step, and every error body was read. */
export function everythingMatched(analysis: Analysis): boolean {
  return (
    analysis.fields.every((f) => f.matched !== undefined || !f.required) &&
    analysis.unknownKeys.length === 0 &&
    analysis.states.every((s) => s.step !== undefined) &&
    analysis.errors.every(
      (e) => e.readByProfile && (e.expectedMeaning === undefined || e.meaning === e.expectedMeaning),
    )
  );
}

/** Every delivery step, for the report's "steps never seen" line. */
export function stepsNotSeen(analysis: Analysis): DeliveryStep[] {
  const seen = new Set(analysis.states.map((s) => s.step ?? s.guess?.step));
  return DELIVERY_STEPS.filter((step) => !seen.has(step));
}
