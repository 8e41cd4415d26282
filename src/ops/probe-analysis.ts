/**
 * What `relais probe` learns from the raw answers it saved: which of the wire profile's spellings matched,
 * which keys the profile does not know (and, conservatively, which profile field each might be), which state
 * names the profile maps, what the error body looks like, and the fallback tariff. Then a draft profile:
 * the current one with the guesses appended at the END of the right lists, so that every name the profile
 * already knew keeps its priority, and validated with parseWireProfile before it is written.
 *
 * Pure functions over recorded exchanges: no network here.
 */
import { DELIVERY_STEPS, type DeliveryStep } from '../domain/shipment-status.js';
import { getPath } from '../adapters/dispatch-api/dotted-path.js';
import {
  parseWireProfile,
  type ErrorMeaning,
  type FieldKey,
  type WireProfile,
  type WireProfileDocument,
} from '../adapters/dispatch-api/profile.js';
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

/** Which profile fields each resource carries; `true` marks those Relais's readers require (wire.ts). */
const RESOURCE_FIELDS: Partial<Record<Resource, Array<[FieldKey, boolean]>>> = {
  quote: [
    ['quoteId', true],
    ['quoteExpiry', true],
    ['quoteTotal', true],
    ['breakdown', false],
  ],
  breakdown: [
    ['breakdownCustomer', false],
    ['breakdownCourier', false],
    ['breakdownPlatform', false],
    ['breakdownCodFee', false],
  ],
  shipment: [
    ['shipmentId', true],
    ['status', true],
    ['externalOrderId', false],
    ['trackingUrl', false],
    ['trackingCode', false],
    ['orderAmount', false],
    ['statusHistory', false],
  ],
  'shipment list': [['nextCursor', false]],
  'tracking view': [
    ['status', true],
    ['trackingCode', false],
    ['statusHistory', false],
  ],
  'price simulation': [['simulatedTotal', true]],
};

/**
 * Names outside the profile that Relais's readers read under a fixed name (wire.ts), or that echo the request
 * (the quote's weight and payment mode, the shipment's quote): known, so not reported.
 */
const FIXED_NAMES: Record<Resource, readonly string[]> = {
  quote: ['currency', 'pickup_zone', 'dropoff_zone', 'distance_km', 'pricing_basis', 'created_at', 'weight_kg'],
  breakdown: [],
  shipment: ['quote_id', 'quoteId', 'currency', 'total', 'courier_id', 'settlement_status', 'created_at', 'updated_at'],
  'shipment list': ['shipments'],
  'tracking view': ['events'],
  'price simulation': ['currency'],
  'status history entry': ['status', 'state', 'at', 'occurred_at', 'by', 'reason'],
};

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isWhole = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/**
 * Heuristics for an unknown key, by its name and the type of its value. Conservative: a guess needs both a
 * telling name and a value of the right type, and is only made for a field none of the profile's spellings
 * matched in the same answer.
 */
const FIELD_GUESSES: Record<FieldKey, { name: RegExp; value: (v: unknown) => boolean; why: string }> = {
  quoteId: { name: /quote|^id$/i, value: (v) => typeof v === 'string' && v.startsWith('qte_'), why: 'a qte_ id' },
  quoteExpiry: {
    name: /expir|valid/i,
    value: (v) => typeof v === 'string' && ISO_DATE.test(v),
    why: 'an ISO date under a name with "expir" or "valid"',
  },
  quoteTotal: {
    name: /total|price|amount/i,
    value: isWhole,
    why: 'a whole number under a name with "total", "price" or "amount"',
  },
  breakdown: {
    name: /breakdown|detail|split/i,
    value: (v) => isRecord(v) && Object.values(v).some(isWhole),
    why: 'an object of amounts under a name with "breakdown", "detail" or "split"',
  },
  breakdownCustomer: { name: /customer|client|buyer/i, value: isWhole, why: 'an amount under a name with "customer"' },
  breakdownCourier: {
    name: /courier|driver|rider/i,
    value: isWhole,
    why: 'an amount under a name with "courier" or "driver"',
  },
  breakdownPlatform: {
    name: /platform|commission|service/i,
    value: isWhole,
    why: 'an amount under a name with "platform" or "commission"',
  },
  breakdownCodFee: {
    name: /cod|collect|cash/i,
    value: isWhole,
    why: 'an amount under a name with "cod", "collect" or "cash"',
  },
  shipmentId: { name: /ship|^id$/i, value: (v) => typeof v === 'string' && v.startsWith('shp_'), why: 'a shp_ id' },
  externalOrderId: {
    name: /external|reference|order/i,
    value: (v) => typeof v === 'string',
    why: 'a string under a name with "external", "reference" or "order"',
  },
  status: {
    name: /status|state/i,
    value: (v) => typeof v === 'string',
    why: 'a string under a name with "status" or "state"',
  },
  trackingUrl: {
    name: /track|url|link/i,
    value: (v) => typeof v === 'string' && /^https?:\/\//.test(v),
    why: 'a URL under a name with "track", "url" or "link"',
  },
  trackingCode: {
    name: /code/i,
    value: (v) => typeof v === 'string' && /^[A-Za-z0-9]{10}$/.test(v),
    why: 'a 10-character code under a name with "code"',
  },
  orderAmount: {
    name: /amount|value|cod/i,
    value: (v) => v === null || isWhole(v),
    why: 'a whole number (or null) under a name with "amount", "value" or "cod"',
  },
  statusHistory: {
    name: /history|events|timeline|steps/i,
    value: (v) =>
      Array.isArray(v) && v.some((e) => isRecord(e) && (typeof e.status === 'string' || typeof e.state === 'string')),
    why: 'a list of entries with a status under a name with "history", "events" or "timeline"',
  },
  nextCursor: {
    name: /cursor|next/i,
    value: (v) => typeof v === 'string',
    why: 'a string under a name with "cursor" or "next"',
  },
  simulatedTotal: {
    name: /total|price|estimate|amount/i,
    value: isWhole,
    why: 'a whole number under a name with "total", "price", "estimate" or "amount"',
  },
};

/**
 * A step for a state name the profile does not map, from words in the name. Checked in this order so that
 * "awaiting_driver" reads as ready (not assigned) and "out_for_delivery" not as delivered.
 */
const STATE_GUESSES: Array<[DeliveryStep, RegExp]> = [
  ['cancelled', /cancel|void|abort|annul/i],
  ['returned', /return|back_to|to_sender/i],
  ['delivery_failed', /fail|attempt|undeliver/i],
  ['out_for_delivery', /out_for|arriv|last_mile/i],
  ['delivered', /(^|_)delivered$|^completed?$/i],
  ['ready', /ready|await|queue|pending/i],
  ['created', /draft|creat|^new$|regist/i],
  ['assigned', /assign|driver|courier|accept/i],
  ['picked_up', /pick|collect/i],
  ['in_transit', /transit|on_the_way|en_route|moving/i],
];

export function guessStep(state: string): { step: DeliveryStep; why: string } | undefined {
  for (const [step, pattern] of STATE_GUESSES) {
    if (pattern.test(state)) return { step, why: `the name matches ${String(pattern)}` };
  }
  return undefined;
}

function example(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `list of ${value.length}`;
  if (isRecord(value)) return `object {${Object.keys(value).slice(0, 6).join(', ')}}`;
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 37)}...` : text}`;
}

/** The first of a field's spellings present in the body (null counts as present: the service said "none"). */
function presentSpelling(profile: WireProfile, body: unknown, field: FieldKey): string | undefined {
  return profile.document.fields[field].find((p) => getPath(body, p) !== undefined);
}

class Collector {
  readonly #fields = new Map<string, FieldFinding>();
  readonly #unknown = new Map<string, UnknownKey>();
  readonly #states = new Map<string, StateFinding>();

  constructor(private readonly profile: WireProfile) {}

  /** Reads one resource body; returns where its status and history were found (profile spelling or guess). */
  resource(resource: Resource, body: unknown, seenIn: string): void {
    if (!isRecord(body)) return;
    const fields = RESOURCE_FIELDS[resource] ?? [];
    const found = new Map<FieldKey, string>();
    for (const [field, required] of fields) {
      const matched = presentSpelling(this.profile, body, field);
      const id = `${resource}:${field}`;
      const finding = this.#fields.get(id) ?? { resource, field, required, tried: this.profile.document.fields[field] };
      if (matched !== undefined) {
        finding.matched ??= matched;
        found.set(field, matched);
      }
      this.#fields.set(id, finding);
    }
    const known = new Set<string>([
      ...FIXED_NAMES[resource],
      ...fields.flatMap(([field]) => this.profile.document.fields[field].map((p) => p.split('.')[0]!)),
    ]);
    if (resource === 'quote' || resource === 'shipment') known.add(this.profile.document.requests.paymentModeField);

    for (const [key, value] of Object.entries(body)) {
      if (known.has(key)) continue;
      const free = fields.filter(([field]) => !found.has(field)).map(([field]) => field);
      const guessed = free.find((field) => FIELD_GUESSES[field].name.test(key) && FIELD_GUESSES[field].value(value));
      const id = `${resource}:${key}`;
      if (!this.#unknown.has(id)) {
        this.#unknown.set(id, {
          resource,
          key,
          example: example(value),
          ...(guessed ? { guess: { field: guessed, why: FIELD_GUESSES[guessed].why } } : {}),
        });
      }
      if (guessed) {
        found.set(guessed, key);
        const finding = this.#fields.get(`${resource}:${guessed}`);
        if (finding && finding.matched === undefined) finding.guessed ??= key;
      }
    }

    const breakdown = found.get('breakdown');
    if (resource === 'quote' && breakdown !== undefined) this.resource('breakdown', getPath(body, breakdown), seenIn);

    const status = found.get('status');
    if (status !== undefined) {
      const value = getPath(body, status);
      if (typeof value === 'string') this.state(value, `${seenIn} status`);
    }
    const histories = [found.get('statusHistory'), resource === 'tracking view' ? 'events' : undefined];
    for (const path of histories) {
      const entries = path === undefined ? undefined : getPath(body, path);
      if (!Array.isArray(entries)) continue;
      for (const entry of entries) {
        if (!isRecord(entry)) continue;
        this.historyEntry(entry, `${seenIn} history`);
      }
    }
  }

  historyEntry(entry: Record<string, unknown>, seenIn: string): void {
    const state =
      typeof entry.status === 'string' ? entry.status : typeof entry.state === 'string' ? entry.state : undefined;
    if (state !== undefined) this.state(state, seenIn);
    for (const [key, value] of Object.entries(entry)) {
      const id = `status history entry:${key}`;
      if (FIXED_NAMES['status history entry'].includes(key) || this.#unknown.has(id)) continue;
      this.#unknown.set(id, { resource: 'status history entry', key, example: example(value) });
    }
  }

  state(state: string, seenIn: string): void {
    const finding =
      this.#states.get(state) ??
      (() => {
        const step = this.profile.stepOf(state);
        const guess = step === undefined ? guessStep(state) : undefined;
        return { state, seenIn: [], ...(step ? { step } : {}), ...(guess ? { guess } : {}) } as StateFinding;
      })();
    if (!finding.seenIn.includes(seenIn)) finding.seenIn.push(seenIn);
    this.#states.set(state, finding);
  }

  result(): Pick<Analysis, 'fields' | 'unknownKeys' | 'states'> {
    return {
      fields: [...this.#fields.values()],
      unknownKeys: [...this.#unknown.values()],
      states: [...this.#states.values()],
    };
  }
}

/** String leaves at depth ≤ 2, with their dotted path: where an error's code and message may sit. */
function stringLeaves(body: unknown, prefix = '', depth = 1): Array<[string, string]> {
  if (!isRecord(body) || depth > 2) return [];
  return Object.entries(body).flatMap(([key, value]): Array<[string, string]> => {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'string') return [[path, value]];
    return stringLeaves(value, path, depth + 1);
  });
}

function shapeOf(body: unknown, prefix = '', depth = 1): string[] {
  if (!isRecord(body) || depth > 2) return [];
  return Object.entries(body).flatMap(([key, value]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return isRecord(value) ? [path, ...shapeOf(value, path, depth + 1)] : [path];
  });
}

const CODE_KEY = /(^|\.)(code|type|error|kind|error_code)$/i;
const MESSAGE_KEY = /(^|\.)(message|detail|details|description|msg|error_description)$/i;

function readError(profile: WireProfile, exchange: Exchange & { status: number }): ErrorFinding {
  const body = exchange.responseBody;
  const read = profile.readErrorBody(body);
  const leaves = stringLeaves(body);
  const codeLeaf = read.code === undefined ? leaves.find(([path]) => CODE_KEY.test(path)) : undefined;
  const messageLeaf =
    read.message === undefined ? leaves.find(([path]) => MESSAGE_KEY.test(path) && path !== codeLeaf?.[0]) : undefined;
  const code = read.code ?? codeLeaf?.[1];
  const message = read.message ?? messageLeaf?.[1];
  const meaning = profile.meaningOf(exchange.status, code);
  return {
    step: exchange.step,
    status: exchange.status,
    ...(code === undefined ? {} : { code }),
    ...(message === undefined ? {} : { message }),
    readByProfile: read.code !== undefined,
    ...(codeLeaf ? { guessedCodePath: codeLeaf[0] } : {}),
    ...(messageLeaf ? { guessedMessagePath: messageLeaf[0] } : {}),
    ...(meaning ? { meaning } : {}),
    ...(exchange.expectedMeaning ? { expectedMeaning: exchange.expectedMeaning } : {}),
    shape: shapeOf(body),
  };
}

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
  const near = quoteOf(fallback.neighbourhoodStep);
  const far = quoteOf(fallback.cityStep);
  const neighbourhoodTotal = totalOf(near);
  const cityTotal = totalOf(far);
  const nearBasis = basisOf(near);
  const farBasis = basisOf(far);
  return {
    ...collector.result(),
    errors,
    fallback: {
      neighbourhood: fallback.neighbourhood,
      city: fallback.city,
      ...(neighbourhoodTotal === undefined ? {} : { neighbourhoodTotal }),
      ...(cityTotal === undefined ? {} : { cityTotal }),
      ...(neighbourhoodTotal !== undefined && cityTotal !== undefined
        ? { difference: cityTotal - neighbourhoodTotal }
        : {}),
      ...(nearBasis === undefined ? {} : { neighbourhoodBasis: nearBasis }),
      ...(farBasis === undefined ? {} : { cityBasis: farBasis }),
    },
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

export interface Draft {
  document: WireProfileDocument;
  /** What was added, one line each (the report prints them; learned.json keeps them). */
  changes: string[];
  /** Why a learning was NOT put in the draft (a conflict with a name the profile already gives to something else). */
  skipped: string[];
  /** Set when the draft failed validation: then `document` is the unchanged profile. */
  invalid?: string;
}

const appendOnce = (list: string[], value: string): boolean => {
  if (list.includes(value)) return false;
  list.push(value);
  return true;
};

/**
 * The current profile with what was learned appended: guessed spellings at the end of their field's list,
 * unmapped state names under their guessed step, the error body's code and message paths, and the codes of
 * the provoked errors under the meaning they should have. Validated; an invalid draft is not written.
 */
export function draftProfile(profile: WireProfile, analysis: Analysis, probedAt: string): Draft {
  const document = structuredClone(profile.document);
  const changes: string[] = [];
  const skipped: string[] = [];

  for (const unknown of analysis.unknownKeys) {
    if (!unknown.guess) continue;
    if (appendOnce(document.fields[unknown.guess.field], unknown.key)) {
      changes.push(`fields.${unknown.guess.field}: added "${unknown.key}" (${unknown.resource}; ${unknown.guess.why})`);
    }
  }
  for (const state of analysis.states) {
    if (state.step !== undefined) continue;
    if (!state.guess) {
      skipped.push(
        `state "${state.state}": no step could be guessed from its name; add it under the right step of "states" by hand`,
      );
      continue;
    }
    document.states[state.guess.step].push(state.state);
    changes.push(`states.${state.guess.step}: added "${state.state}" (${state.guess.why}: CHECK)`);
  }
  const codeOwner = (code: string) =>
    Object.entries(document.errors.meanings).find(([, m]) => m?.codes.includes(code))?.[0];
  for (const error of analysis.errors) {
    if (error.guessedCodePath && appendOnce(document.errors.codePaths, error.guessedCodePath)) {
      changes.push(
        `errors.codePaths: added "${error.guessedCodePath}" (a string under a code-like name in the ${error.status} body)`,
      );
    }
    if (error.guessedMessagePath && appendOnce(document.errors.messagePaths, error.guessedMessagePath)) {
      changes.push(
        `errors.messagePaths: added "${error.guessedMessagePath}" (a string under a message-like name in the ${error.status} body)`,
      );
    }
    if (error.code === undefined || error.expectedMeaning === undefined) continue;
    const owner = codeOwner(error.code);
    if (owner === error.expectedMeaning) continue;
    if (owner !== undefined) {
      skipped.push(
        `error code "${error.code}" (${error.step}) already means ${owner} in the profile; Relais expected ${error.expectedMeaning}: check which is right`,
      );
      continue;
    }
    const entry = (document.errors.meanings[error.expectedMeaning] ??= { codes: [], statuses: [] });
    entry.codes.push(error.code);
    changes.push(
      `errors.meanings.${error.expectedMeaning}.codes: added "${error.code}" (answered with ${error.status} to ${error.step})`,
    );
  }
  const suffix = '-probed';
  if (!document.name.endsWith(suffix)) document.name = `${document.name}${suffix}`.slice(0, 100);
  document.description =
    `Draft written by relais probe on ${probedAt} from profile "${profile.name}". Review learned.json and every line marked CHECK before using it as a shop's profile. ${profile.document.description ?? ''}`.trim();

  try {
    parseWireProfile(document, 'draft profile');
  } catch (error) {
    return {
      document: structuredClone(profile.document),
      changes: [],
      skipped: [...skipped, ...changes],
      invalid: (error as Error).message,
    };
  }
  return { document, changes, skipped };
}

/** Every delivery step, for the report's "steps never seen" line. */
export function stepsNotSeen(analysis: Analysis): DeliveryStep[] {
  const seen = new Set(analysis.states.map((s) => s.step ?? s.guess?.step));
  return DELIVERY_STEPS.filter((step) => !seen.has(step));
}
