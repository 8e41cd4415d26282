/**
 * `relais probe`: a safe first contact with a live dispatch key. It checks the shop's wire profile (every
 * name the spec leaves "not shown") against what the service really answers, without creating anything a
 * courier or a customer sees.
 *
 * It calls only: createQuote (for the shop's pickup neighbourhood, and for a plain city name, which shows the
 * fallback tariff), getQuote (the quote just made, and a made-up id to see a 404 error body), simulatePrice,
 * the first page of listShipments, getShipment (a made-up id, and the id the operator names),
 * getShipmentByExternalOrder and public tracking for what the operator names. Never createShipment,
 * markReady, cancelShipment, openDispute or listShipmentDisputes: `allowedRoute` (probe-routes.ts) is the one
 * place a method and path are chosen, and it refuses every operation outside PROBE_ROUTES.
 *
 * It makes its own HTTP calls (fetch, probe-caller.ts), not through DispatchClient, because it needs the RAW
 * answers: field names the profile does not know, error bodies, unknown state names, all of which the client's
 * readers drop by design. The analysis is probe-analysis.ts's, the draft probe-draft.ts's, the printed report
 * probe-report.ts's.
 *
 * It writes, in `outDir`: exchanges.json (every request and answer, the API key replaced by [REDACTED]
 * everywhere), learned.json (the findings) and draft-profile.json (the profile with the guesses appended,
 * valid per wireProfileSchema). It never changes the shop's profile itself.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RelaisError } from '../domain/errors.js';
import type { ShopConfig } from '../shops/shops.js';
import { wireProfileOf } from '../adapters/dispatch-api/for-shop.js';
import type { WireProfile } from '../adapters/dispatch-api/profile.js';
import { PaymentMode } from '../adapters/dispatch-api/wire.js';
import { analyseExchanges, everythingMatched } from './probe-analysis.js';
import { ProbeCaller, redact, type ProbeEndpoint } from './probe-caller.js';
import { draftProfile, type Draft } from './probe-draft.js';
import type { Analysis, Exchange } from './probe-findings.js';
import type { ProbeOperation } from './probe-routes.js';

/**
 * Why a probe could not run at all (the CLI exits non-zero with this message). No answer may come later
 * (transient); a refused key is refused again until the shop's settings change (permanent).
 */
export class ProbeFailure extends RelaisError {
  override readonly name = 'ProbeFailure';
  constructor(
    readonly reason: 'unreachable' | 'key_refused',
    message: string,
    /** Where the exchanges were saved anyway, so the operator can see the answer. */
    readonly exchangesFile?: string,
  ) {
    super({ failure: reason === 'unreachable' ? 'transient' : 'permanent', message });
  }
}

export interface ProbeTarget extends ProbeEndpoint {
  profile: WireProfile;
  pickupNeighbourhood: string;
  /** A plain city name (not a neighbourhood): its quote shows the fallback tariff. */
  city: string;
}

export interface ProbeOptions {
  /** The shop to probe (its dispatch settings, profile and pickup); or `target`. */
  shop?: ShopConfig;
  target?: ProbeTarget;
  /** Operator-named objects to read (optional). */
  shipmentId?: string;
  externalOrderId?: string;
  trackingCode?: string;
  outDir: string;
  now?: () => Date;
  fetch?: typeof globalThis.fetch;
  /** Per call. Default 10 s. */
  timeoutMs?: number;
}

export interface ProbeReport extends Analysis {
  probedAt: string;
  profile: string;
  baseUrl: string;
  trackingUrl: string;
  /** Each call made: operation, status (or the network error). */
  calls: Array<{
    step: string;
    operation: ProbeOperation;
    method: string;
    path: string;
    status?: number;
    error?: string;
  }>;
  allMatched: boolean;
  draft: Omit<Draft, 'document'>;
  webhook: string;
  files: ProbeFiles;
}

interface ProbeFiles {
  exchanges: string;
  learned: string;
  draft: string;
}

/** The main city of each country Relais serves: a city name, never a neighbourhood. */
export const CITY_OF_COUNTRY: Record<ShopConfig['country'], string> = {
  SN: 'Dakar',
  CI: 'Abidjan',
  TG: 'Lomé',
  BJ: 'Cotonou',
  ML: 'Bamako',
  BF: 'Ouagadougou',
  NE: 'Niamey',
  GW: 'Bissau',
};

export function probeTargetForShop(shop: ShopConfig): ProbeTarget {
  return {
    baseUrl: shop.dispatch.baseUrl,
    ...(shop.dispatch.trackingUrl ? { trackingUrl: shop.dispatch.trackingUrl } : {}),
    apiKey: shop.dispatch.apiKey.reveal(),
    profile: wireProfileOf(shop),
    pickupNeighbourhood: shop.pickup.neighbourhood,
    city: CITY_OF_COUNTRY[shop.country],
  };
}

const UNKNOWN_QUOTE_ID = 'qte_relais_probe_unknown';
const UNKNOWN_SHIPMENT_ID = 'shp_relais_probe_unknown';
const PROBE_WEIGHT_KG = 1;
const STEP = {
  quoteNeighbourhood: 'quote for the pickup neighbourhood',
  quoteCity: 'quote for a plain city name (fallback tariff)',
} as const;

const idOf = (profile: WireProfile, exchange: Exchange): string | undefined => {
  if (exchange.status === undefined || exchange.status >= 400) return undefined;
  const id = profile.field(exchange.responseBody, 'quoteId');
  return typeof id === 'string' && id !== '' ? id : undefined;
};

function writeJson(file: string, value: unknown): void {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
}

export const WEBHOOK_NOTE =
  'The webhook (signature header, encoding, body shape, event names) cannot be learned by probing: the service ' +
  'sends it, Relais never asks for it. Run `relais doctor` to see the delivery webhook URL and the header the ' +
  'profile checks, then compare the first real delivery (its headers and body) with the "webhook" section of the profile.';

export async function runProbe(options: ProbeOptions): Promise<ProbeReport> {
  const target = options.target ?? (options.shop ? probeTargetForShop(options.shop) : undefined);
  if (!target) throw new TypeError('runProbe needs a shop or a target');
  const now = options.now ?? (() => new Date());
  const caller = new ProbeCaller(target, options.fetch ?? globalThis.fetch, options.timeoutMs ?? 10_000);
  mkdirSync(options.outDir, { recursive: true });
  const files: ProbeFiles = {
    exchanges: join(options.outDir, 'exchanges.json'),
    learned: join(options.outDir, 'learned.json'),
    draft: join(options.outDir, 'draft-profile.json'),
  };
  const saveExchanges = () => writeJson(files.exchanges, caller.exchanges);

  // The first authenticated call says whether the service answers and accepts the key.
  const first = await caller.call(STEP.quoteNeighbourhood, 'createQuote', {
    body: quoteBody(target, target.pickupNeighbourhood),
  });
  const refused = whyItCannotRun(target, first);
  if (refused) {
    saveExchanges();
    throw new ProbeFailure(refused.reason, refused.message, files.exchanges);
  }
  await readTheRest(caller, target, options, first);
  saveExchanges();

  const { report, document } = probeReport(target, caller.exchanges, now().toISOString(), files);
  writeJson(files.learned, redact(report, target.apiKey));
  writeJson(files.draft, redact(document, target.apiKey));
  return report;
}

function quoteBody(target: ProbeTarget, dropoff: string): Record<string, unknown> {
  const place = (city: string) => ({ city, address: 'relais probe: price check only, no shipment' });
  return {
    pickup: place(target.pickupNeighbourhood),
    dropoff: place(dropoff),
    parcel: { weight_kg: PROBE_WEIGHT_KG },
    [target.profile.document.requests.paymentModeField]: PaymentMode.cashOnDelivery,
  };
}

/** The first answer when it shows the probe cannot go on: no answer at all, or the key refused. */
function whyItCannotRun(
  target: ProbeTarget,
  first: Exchange,
): { reason: ProbeFailure['reason']; message: string } | undefined {
  if (first.status === undefined) {
    return {
      reason: 'unreachable',
      message: `the dispatch service at ${target.baseUrl} did not answer (${first.error ?? 'no answer'}); check dispatch.baseUrl and the network`,
    };
  }
  if (first.status !== 401 && first.status !== 403) return undefined;
  const { code, message } = target.profile.readErrorBody(first.responseBody);
  const said = [code, message].filter(Boolean).join(': ');
  return {
    reason: 'key_refused',
    message: `the dispatch service refused the key with ${first.status}${said ? ` (${said})` : ''}; check dispatch.apiKey (a live key begins with pk_live_; pk_test_ keys are always refused)`,
  };
}

/** Every other call, once the key is accepted: the city quote, the reads, and the two provoked 404s. */
async function readTheRest(
  caller: ProbeCaller,
  target: ProbeTarget,
  options: ProbeOptions,
  first: Exchange,
): Promise<void> {
  await caller.call(STEP.quoteCity, 'createQuote', { body: quoteBody(target, target.city) });
  const quoteId = idOf(target.profile, first);
  if (quoteId) await caller.call('reread the quote just made', 'getQuote', { arg: quoteId });
  await caller.call('made-up quote id (to see a 404 error body)', 'getQuote', {
    arg: UNKNOWN_QUOTE_ID,
    expectedMeaning: 'quote_not_found',
  });
  await caller.call('price simulation (public)', 'simulatePrice', {
    body: {
      pickup_city: target.pickupNeighbourhood,
      dropoff_city: target.pickupNeighbourhood,
      weight_kg: PROBE_WEIGHT_KG,
    },
  });
  await caller.call('first page of shipments', 'listShipments');
  await caller.call('made-up shipment id (to see a 404 error body)', 'getShipment', {
    arg: UNKNOWN_SHIPMENT_ID,
    expectedMeaning: 'shipment_not_found',
  });
  if (options.shipmentId)
    await caller.call('shipment named by the operator', 'getShipment', { arg: options.shipmentId });
  if (options.externalOrderId)
    await caller.call('external order named by the operator', 'getShipmentByExternalOrder', {
      arg: options.externalOrderId,
    });
  if (options.trackingCode)
    await caller.call('tracking code named by the operator (public)', 'trackByCode', { arg: options.trackingCode });
}

/** The report of a run (learned.json, and the printed report) and the draft profile's document. */
function probeReport(
  target: ProbeTarget,
  exchanges: readonly Exchange[],
  probedAt: string,
  files: ProbeFiles,
): { report: ProbeReport; document: Draft['document'] } {
  const { profile } = target;
  const analysis = analyseExchanges(profile, exchanges, {
    neighbourhood: target.pickupNeighbourhood,
    city: target.city,
    neighbourhoodStep: STEP.quoteNeighbourhood,
    cityStep: STEP.quoteCity,
  });
  const { document, ...draft } = draftProfile(profile, analysis, probedAt);
  const report: ProbeReport = {
    probedAt,
    profile: profile.name,
    baseUrl: target.baseUrl,
    trackingUrl: target.trackingUrl ?? target.baseUrl,
    calls: exchanges.map(callOf),
    ...analysis,
    allMatched: everythingMatched(analysis),
    draft,
    webhook: WEBHOOK_NOTE,
    files,
  };
  return { report, document };
}

/** A call as the report lists it: what was asked, and the status or the network error. */
function callOf({ step, operation, method, path, status, error }: Exchange): ProbeReport['calls'][number] {
  const call: ProbeReport['calls'][number] = { step, operation, method, path };
  if (status !== undefined) call.status = status;
  if (error !== undefined) call.error = error;
  return call;
}
