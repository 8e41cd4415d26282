/**
 * `relais probe`: a safe first contact with a live dispatch key. It checks the shop's wire profile (every
 * name the spec leaves "not shown") against what the service really answers, without creating anything a
 * courier or a customer sees.
 *
 * It calls only: createQuote (for the shop's pickup neighbourhood, and for a plain city name, which shows the
 * fallback tariff), getQuote (the quote just made, and a made-up id to see a 404 error body), simulatePrice,
 * the first page of listShipments, getShipment (a made-up id, and the id the operator names),
 * getShipmentByExternalOrder and public tracking for what the operator names. Never createShipment,
 * markReady, cancelShipment, openDispute or listShipmentDisputes: `allowedRoute` is the one place a method
 * and path are chosen, and it refuses every operation outside PROBE_ROUTES.
 *
 * It makes its own HTTP calls (fetch), not through DispatchClient, because it needs the RAW answers: field
 * names the profile does not know, error bodies, unknown state names, all of which the client's readers
 * drop by design.
 *
 * It writes, in `outDir`: exchanges.json (every request and answer, the API key replaced by [REDACTED]
 * everywhere), learned.json (the findings) and draft-profile.json (the profile with the guesses appended,
 * valid per wireProfileSchema). It never changes the shop's profile itself.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ShopConfig } from '../shops/shops.js';
import { wireProfileOf } from '../adapters/dispatch-api/for-shop.js';
import type { WireProfile } from '../adapters/dispatch-api/profile.js';
import { API_KEY_HEADER, PaymentMode } from '../adapters/dispatch-api/wire.js';
import {
  analyseExchanges,
  draftProfile,
  everythingMatched,
  stepsNotSeen,
  type Analysis,
  type Draft,
  type Exchange,
} from './probe-analysis.js';
import { PROBE_ROUTES, type ProbeOperation } from './probe-routes.js';

export { PROBE_ROUTES, type ProbeOperation };

export class ProbeRefusedOperation extends Error {
  override readonly name = 'ProbeRefusedOperation';
  constructor(readonly operation: string) {
    super(`relais probe never calls ${operation}: it may only call ${Object.keys(PROBE_ROUTES).join(', ')}`);
  }
}

/**
 * The side-effect guard: the route of an allowed operation, or a throw. Every call probe makes takes its
 * method and path from here, so an operation outside the list (createShipment, markReady, cancelShipment,
 * openDispute...) cannot be sent even by mistake.
 */
export function allowedRoute(operation: string): (typeof PROBE_ROUTES)[ProbeOperation] {
  if (!Object.hasOwn(PROBE_ROUTES, operation)) throw new ProbeRefusedOperation(operation);
  return PROBE_ROUTES[operation as ProbeOperation];
}

/** Why a probe could not run at all (the CLI exits non-zero with this message). */
export class ProbeFailure extends Error {
  override readonly name = 'ProbeFailure';
  constructor(
    readonly reason: 'unreachable' | 'key_refused',
    message: string,
    /** Where the exchanges were saved anyway, so the operator can see the answer. */
    readonly exchangesFile?: string,
  ) {
    super(message);
  }
}

export interface ProbeTarget {
  baseUrl: string;
  /** Default: baseUrl. */
  trackingUrl?: string;
  apiKey: string;
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
  files: { exchanges: string; learned: string; draft: string };
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

export const REDACTED = '[REDACTED]';
const UNKNOWN_QUOTE_ID = 'qte_relais_probe_unknown';
const UNKNOWN_SHIPMENT_ID = 'shp_relais_probe_unknown';
const PROBE_WEIGHT_KG = 1;
const KEPT_RESPONSE_HEADERS =
  /^(content-type|date|retry-after|server|www-authenticate|x-request-id|request-id|x-ratelimit-.*|ratelimit-.*)$/i;
const STEP = {
  quoteNeighbourhood: 'quote for the pickup neighbourhood',
  quoteCity: 'quote for a plain city name (fallback tariff)',
} as const;

/** Replaces the key wherever it occurs in a value (strings at any depth, and object keys). */
export function redact<T>(value: T, secret: string): T {
  if (secret.length < 4) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return v.split(secret).join(REDACTED);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [walk(k) as string, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

class ProbeCaller {
  readonly exchanges: Exchange[] = [];

  constructor(
    private readonly target: ProbeTarget,
    private readonly fetchFn: typeof globalThis.fetch,
    private readonly timeoutMs: number,
  ) {}

  /** One call of an allowed operation; the answer is recorded whatever it is. */
  async call(
    step: string,
    operation: ProbeOperation,
    options: { arg?: string; body?: unknown; expectedMeaning?: Exchange['expectedMeaning'] } = {},
  ): Promise<Exchange> {
    const route = allowedRoute(operation);
    const path = route.path(options.arg ?? '');
    const base = route.host === 'tracking' ? (this.target.trackingUrl ?? this.target.baseUrl) : this.target.baseUrl;
    const url = `${base.replace(/\/+$/, '')}${path}`;
    // Public operations send no key (spec section 5, rule 5).
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'relais-probe/0.1' };
    if (route.host === 'base') headers[API_KEY_HEADER] = this.target.apiKey;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const started = performance.now();
    const exchange: Exchange = {
      step,
      operation,
      method: route.method,
      path,
      host: route.host,
      requestHeaders: { ...headers, ...(route.host === 'base' ? { [API_KEY_HEADER]: REDACTED } : {}) },
      ...(options.body === undefined ? {} : { requestBody: options.body }),
      responseHeaders: {},
      ms: 0,
      ...(options.expectedMeaning ? { expectedMeaning: options.expectedMeaning } : {}),
    };
    try {
      const response = await this.fetchFn(url, {
        method: route.method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'manual',
      });
      const text = await response.text();
      exchange.status = response.status;
      response.headers.forEach((value, name) => {
        if (KEPT_RESPONSE_HEADERS.test(name)) exchange.responseHeaders[name] = value;
      });
      try {
        exchange.responseBody = text === '' ? undefined : (JSON.parse(text) as unknown);
      } catch {
        exchange.responseBody = text.length > 2000 ? `${text.slice(0, 2000)}...` : text;
      }
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      exchange.error = `${(error as Error).name}: ${cause?.code ?? cause?.message ?? (error as Error).message}`;
    }
    exchange.ms = Math.round(performance.now() - started);
    const safe = redact(exchange, this.target.apiKey);
    this.exchanges.push(safe);
    return safe;
  }
}

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
  const { profile } = target;
  const now = options.now ?? (() => new Date());
  const caller = new ProbeCaller(target, options.fetch ?? globalThis.fetch, options.timeoutMs ?? 10_000);
  mkdirSync(options.outDir, { recursive: true });
  const files = {
    exchanges: join(options.outDir, 'exchanges.json'),
    learned: join(options.outDir, 'learned.json'),
    draft: join(options.outDir, 'draft-profile.json'),
  };
  const saveExchanges = () => writeJson(files.exchanges, caller.exchanges);

  const place = (city: string) => ({ city, address: 'relais probe: price check only, no shipment' });
  const quoteBody = (dropoff: string) => ({
    pickup: place(target.pickupNeighbourhood),
    dropoff: place(dropoff),
    parcel: { weight_kg: PROBE_WEIGHT_KG },
    [profile.document.requests.paymentModeField]: PaymentMode.cashOnDelivery,
  });

  // The first authenticated call says whether the service answers and accepts the key.
  const first = await caller.call(STEP.quoteNeighbourhood, 'createQuote', {
    body: quoteBody(target.pickupNeighbourhood),
  });
  if (first.status === undefined) {
    saveExchanges();
    throw new ProbeFailure(
      'unreachable',
      `the dispatch service at ${target.baseUrl} did not answer (${first.error ?? 'no answer'}); check dispatch.baseUrl and the network`,
      files.exchanges,
    );
  }
  if (first.status === 401 || first.status === 403) {
    saveExchanges();
    const { code, message } = profile.readErrorBody(first.responseBody);
    const said = [code, message].filter(Boolean).join(': ');
    throw new ProbeFailure(
      'key_refused',
      `the dispatch service refused the key with ${first.status}${said ? ` (${said})` : ''}; check dispatch.apiKey (a live key begins with pk_live_; pk_test_ keys are always refused)`,
      files.exchanges,
    );
  }
  await caller.call(STEP.quoteCity, 'createQuote', { body: quoteBody(target.city) });
  const quoteId = idOf(profile, first);
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
  saveExchanges();

  const analysis = analyseExchanges(profile, caller.exchanges, {
    neighbourhood: target.pickupNeighbourhood,
    city: target.city,
    neighbourhoodStep: STEP.quoteNeighbourhood,
    cityStep: STEP.quoteCity,
  });
  const probedAt = now().toISOString();
  const { document, ...draft } = draftProfile(profile, analysis, probedAt);
  const report: ProbeReport = {
    probedAt,
    profile: profile.name,
    baseUrl: target.baseUrl,
    trackingUrl: target.trackingUrl ?? target.baseUrl,
    calls: caller.exchanges.map((e) => ({
      step: e.step,
      operation: e.operation,
      method: e.method,
      path: e.path,
      ...(e.status === undefined ? {} : { status: e.status }),
      ...(e.error === undefined ? {} : { error: e.error }),
    })),
    ...analysis,
    allMatched: everythingMatched(analysis),
    draft,
    webhook: WEBHOOK_NOTE,
    files,
  };
  writeJson(files.learned, redact(report, target.apiKey));
  writeJson(files.draft, redact(document, target.apiKey));
  return report;
}

// ---- the printed report ----------------------------------------------------------------------------------

const OK = '✔';
const NO = '✘';

export function renderProbeReport(report: ProbeReport): string {
  const lines: string[] = [];
  const out = (line = '') => lines.push(line);
  out(
    `relais probe: ${report.baseUrl} (tracking ${report.trackingUrl}), wire profile "${report.profile}", ${report.probedAt}`,
  );
  out();
  out('Calls (read-only and quotes; nothing a courier or customer sees):');
  for (const c of report.calls) out(`  ${c.method.padEnd(4)} ${c.path}  ${c.status ?? c.error ?? '?'}  (${c.step})`);
  out();
  out('Fields:');
  for (const f of report.fields) {
    if (f.matched !== undefined) out(`  ${OK} ${f.resource}: ${f.field} as "${f.matched}"`);
    else if (f.guessed !== undefined)
      out(`  ${NO} ${f.resource}: ${f.field} not under ${f.tried.join(', ')}; probably "${f.guessed}" (below)`);
    else if (f.required)
      out(
        `  ${NO} ${f.resource}: ${f.field} missing (tried ${f.tried.join(', ')}): Relais cannot read this answer; add the service's spelling to fields.${f.field}`,
      );
    else out(`  - ${f.resource}: ${f.field} not seen (optional; tried ${f.tried.join(', ')})`);
  }
  for (const u of report.unknownKeys) {
    const what = u.guess
      ? `probably ${u.guess.field} (${u.guess.why}): add "${u.key}" to fields.${u.guess.field}`
      : 'not read by Relais; no guess';
    out(`  ${NO} ${u.resource}: ${u.key} unknown (${u.example}); ${what}`);
  }
  out();
  out('States:');
  if (report.states.length === 0)
    out('  - none seen (no shipment in the first page; name one with --shipment to see more)');
  for (const s of report.states) {
    if (s.step) out(`  ${OK} ${s.state} → ${s.step}  (${s.seenIn.join(', ')})`);
    else
      out(
        `  ${NO} ${s.state} unknown to the profile (${s.seenIn.join(', ')}): ${s.guess ? `probably ${s.guess.step} (${s.guess.why}); add it to states.${s.guess.step}` : 'add it under the right step of "states"'}. Until then Relais never treats it as progress`,
      );
  }
  const unseen = stepsNotSeen(report);
  if (unseen.length > 0) out(`  - steps not seen in any answer (still guesses): ${unseen.join(', ')}`);
  out();
  out('Errors:');
  for (const e of report.errors) {
    const where = e.readByProfile
      ? 'read by the profile'
      : `NOT read by the profile's codePaths${e.guessedCodePath ? `; found at "${e.guessedCodePath}"` : ''}${e.guessedMessagePath ? `, message at "${e.guessedMessagePath}"` : ''}`;
    const mark = e.readByProfile && (e.expectedMeaning === undefined || e.meaning === e.expectedMeaning) ? OK : NO;
    const meaning =
      e.expectedMeaning && e.meaning !== e.expectedMeaning
        ? `; means ${e.meaning ?? 'nothing'} to the profile, expected ${e.expectedMeaning}: add "${e.code ?? '?'}" to errors.meanings.${e.expectedMeaning}.codes`
        : e.meaning
          ? `; means ${e.meaning}`
          : '';
    out(
      `  ${mark} ${e.status} ${e.code ?? '(no code)'}${e.message ? ` "${e.message}"` : ''} (${e.step}): ${where}${meaning}; body keys: ${e.shape.join(', ') || '(none)'}`,
    );
  }
  out();
  const fb = report.fallback;
  out('Fallback tariff (same weight, cash on delivery):');
  if (fb.neighbourhoodTotal !== undefined && fb.cityTotal !== undefined) {
    out(
      `  "${fb.neighbourhood}" (neighbourhood): ${fb.neighbourhoodTotal} XOF${fb.neighbourhoodBasis ? ` [${fb.neighbourhoodBasis}]` : ''}; "${fb.city}" (city name): ${fb.cityTotal} XOF${fb.cityBasis ? ` [${fb.cityBasis}]` : ''}`,
    );
    out(`  a city name instead of the neighbourhood costs ${fb.difference ?? 0} XOF more per delivery`);
  } else {
    out(
      `  not learned: ${fb.neighbourhoodTotal === undefined ? 'the neighbourhood quote' : 'the city-name quote'} gave no total the profile can read`,
    );
  }
  out();
  out(`Webhook: ${report.webhook}`);
  out();
  out(
    report.allMatched
      ? `${OK} Every field, state and error body seen matched the profile "${report.profile}".`
      : `${NO} The profile "${report.profile}" does not know everything the service answered (see ${NO} above).`,
  );
  if (report.draft.changes.length > 0) {
    out('Draft profile changes (guesses, review each):');
    for (const c of report.draft.changes) out(`  + ${c}`);
  }
  for (const s of report.draft.skipped) out(`  ! ${s}`);
  if (report.draft.invalid)
    out(`  ! the draft did not validate, so draft-profile.json is the unchanged profile: ${report.draft.invalid}`);
  out();
  out(`Saved: ${report.files.exchanges} (API key redacted), ${report.files.learned}, ${report.files.draft}`);
  return `${lines.join('\n')}\n`;
}
