/**
 * What probe expects in each answer, and its heuristics for what it did not expect: which profile fields each
 * resource carries, the names Relais reads under a fixed spelling, and the guesses for an unknown key (a profile
 * field) or an unmapped state name (a delivery step). Conservative: a wrong guess lands in a draft profile an
 * operator reviews, a missed one is only reported.
 */
import type { DeliveryStep } from '../domain/shipment-status.js';
import type { FieldKey } from '../adapters/dispatch-api/profile.js';
import type { Resource } from './probe-findings.js';

/** Which profile fields each resource carries; `true` marks those Relais's readers require (wire.ts). */
export const RESOURCE_FIELDS: Partial<Record<Resource, Array<[FieldKey, boolean]>>> = {
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
export const FIXED_NAMES: Record<Resource, readonly string[]> = {
  quote: ['currency', 'pickup_zone', 'dropoff_zone', 'distance_km', 'pricing_basis', 'created_at', 'weight_kg'],
  breakdown: [],
  shipment: ['quote_id', 'quoteId', 'currency', 'total', 'courier_id', 'settlement_status', 'created_at', 'updated_at'],
  'shipment list': ['shipments'],
  'tracking view': ['events'],
  'price simulation': ['currency'],
  'status history entry': ['status', 'state', 'at', 'occurred_at', 'by', 'reason'],
};

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
export const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
export const isWhole = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isString = (v: unknown): v is string => typeof v === 'string';

export interface FieldGuess {
  name: RegExp;
  value: (v: unknown) => boolean;
  why: string;
}

/** A guess from a telling name and a value of the right kind; `why` says both ('a string under a name with "x"'). */
function under(name: RegExp, words: readonly string[], kind: string, value: (v: unknown) => boolean): FieldGuess {
  const quoted = words.map((w) => `"${w}"`);
  const listed = quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)!}` : quoted.join('');
  return { name, value, why: `${kind} under a name with ${listed}` };
}

/**
 * Heuristics for an unknown key, by its name and the type of its value. Conservative: a guess needs both a
 * telling name and a value of the right type, and is only made for a field none of the profile's spellings
 * matched in the same answer.
 */
export const FIELD_GUESSES: Record<FieldKey, FieldGuess> = {
  quoteId: { name: /quote|^id$/i, value: (v) => isString(v) && v.startsWith('qte_'), why: 'a qte_ id' },
  quoteExpiry: under(/expir|valid/i, ['expir', 'valid'], 'an ISO date', (v) => isString(v) && ISO_DATE.test(v)),
  quoteTotal: under(/total|price|amount/i, ['total', 'price', 'amount'], 'a whole number', isWhole),
  breakdown: under(
    /breakdown|detail|split/i,
    ['breakdown', 'detail', 'split'],
    'an object of amounts',
    (v) => isRecord(v) && Object.values(v).some(isWhole),
  ),
  breakdownCustomer: under(/customer|client|buyer/i, ['customer'], 'an amount', isWhole),
  breakdownCourier: under(/courier|driver|rider/i, ['courier', 'driver'], 'an amount', isWhole),
  breakdownPlatform: under(/platform|commission|service/i, ['platform', 'commission'], 'an amount', isWhole),
  breakdownCodFee: under(/cod|collect|cash/i, ['cod', 'collect', 'cash'], 'an amount', isWhole),
  shipmentId: { name: /ship|^id$/i, value: (v) => isString(v) && v.startsWith('shp_'), why: 'a shp_ id' },
  externalOrderId: under(/external|reference|order/i, ['external', 'reference', 'order'], 'a string', isString),
  status: under(/status|state/i, ['status', 'state'], 'a string', isString),
  trackingUrl: under(
    /track|url|link/i,
    ['track', 'url', 'link'],
    'a URL',
    (v) => isString(v) && /^https?:\/\//.test(v),
  ),
  trackingCode: under(/code/i, ['code'], 'a 10-character code', (v) => isString(v) && /^[A-Za-z0-9]{10}$/.test(v)),
  orderAmount: under(
    /amount|value|cod/i,
    ['amount', 'value', 'cod'],
    'a whole number (or null)',
    (v) => v === null || isWhole(v),
  ),
  statusHistory: under(
    /history|events|timeline|steps/i,
    ['history', 'events', 'timeline'],
    'a list of entries with a status',
    (v) => Array.isArray(v) && v.some((e) => isRecord(e) && (isString(e.status) || isString(e.state))),
  ),
  nextCursor: under(/cursor|next/i, ['cursor', 'next'], 'a string', isString),
  simulatedTotal: under(
    /total|price|estimate|amount/i,
    ['total', 'price', 'estimate', 'amount'],
    'a whole number',
    isWhole,
  ),
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
