/**
 * What `relais profile learn` works out from what the service showed (issue 28): the webhook's signature, found
 * by verifying the kept samples against the shop's own signing secret (never guessed); the webhook's shape, from
 * where each sample carries a shipment and order Relais knows; and a step for each state name the service used,
 * from the order in which the names appeared on real shipments and from their words. Pure functions over the
 * kept samples and sightings, except `learnShapes`, which asks the caller whether an order is Relais's.
 */
import { createHmac } from 'node:crypto';
import type { SeenState, WebhookSample } from '../ledger/first-contact.js';
import type { WireProfileDocument } from '../adapters/dispatch-api/profile.js';
import { DELIVERY_STEPS, type DeliveryStep } from '../domain/shipment-status.js';
import { parseJson } from '../shops/platforms/common.js';
import { guessStep } from './probe-guesses.js';

export type Signature = WireProfileDocument['webhook']['signature'];

export interface LearnedSignature extends Signature {
  /** How many of the signed samples it verifies. */
  verified: number;
  signed: number;
}

const ALGORITHMS: Array<Signature['algorithm']> = ['sha256', 'sha1', 'sha512'];
const ENCODINGS: Array<Signature['encoding']> = ['hex', 'base64'];
/** What may precede the digest: "sha256=", "v1=", "v1,". */
const PREFIX = /^[A-Za-z0-9_.-]{0,16}[=,:]?$/;

/** The scheme one header value verifies with over `body`, or undefined. */
function schemeOf(header: string, value: string, body: Buffer, secret: string): Signature | undefined {
  for (const algorithm of ALGORITHMS) {
    for (const encoding of ENCODINGS) {
      const digest = createHmac(algorithm, secret).update(body).digest(encoding);
      if (!value.endsWith(digest)) continue;
      const prefix = value.slice(0, value.length - digest.length);
      if (PREFIX.test(prefix)) return { header, prefix, encoding, algorithm };
    }
  }
  return undefined;
}

/**
 * The header, prefix, encoding and algorithm that verify the samples with the shop's secret: every header value
 * kept is tried; the scheme verifying the most samples wins. Undefined when none verifies: never a guess.
 */
export function learnSignature(samples: readonly WebhookSample[], secret: string): LearnedSignature | undefined {
  const signed = samples.filter((s) => s.refusal === 'unsigned' || s.refusal === 'bad_signature');
  const tally = new Map<string, { scheme: Signature; verified: number }>();
  for (const sample of signed) {
    for (const [header, value] of Object.entries(sample.signatureCandidates)) {
      const scheme = schemeOf(header, value, sample.body, secret);
      if (!scheme) continue;
      const key = JSON.stringify({ ...scheme, header: header.toLowerCase() });
      const entry = tally.get(key) ?? { scheme, verified: 0 };
      entry.verified += 1;
      tally.set(key, entry);
    }
  }
  const best = [...tally.values()].sort((a, b) => b.verified - a.verified)[0];
  return best ? { ...best.scheme, verified: best.verified, signed: signed.length } : undefined;
}

export interface LearnedShapes {
  shipmentIdPath?: string;
  externalOrderIdPath?: string;
  statePath?: string;
  event?: { path: string; statusChanged: string };
  /** Samples in which a known order was found. */
  read: number;
  samples: number;
}

/** Every string in a JSON value with its dotted path (objects only: profile paths do not index lists). */
function stringLeaves(value: unknown, path = '', depth = 0): Array<[string, string]> {
  if (depth > 8 || value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, child]): Array<[string, string]> => {
    const at = path ? `${path}.${key}` : key;
    if (typeof child === 'string') return /^[A-Za-z0-9_$-]+$/.test(key) ? [[at, child]] : [];
    return stringLeaves(child, at, depth + 1);
  });
}

const mostCommon = (counts: Map<string, number>): string | undefined =>
  [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
const bump = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

/**
 * Where the samples carry the shipment id, the external order id and the state: in each sample, the string that
 * is an order Relais knows (`shipmentOf` answers its shipment id), the string that is that order's shipment id,
 * and the string that is a state name the service used. The event name: a string every sample carries alike.
 */
export async function learnShapes(
  samples: readonly WebhookSample[],
  shipmentOf: (externalOrderId: string) => Promise<string | undefined>,
  stateNames: ReadonlySet<string>,
): Promise<LearnedShapes> {
  const paths = {
    shipment: new Map<string, number>(),
    order: new Map<string, number>(),
    state: new Map<string, number>(),
  };
  const constant = new Map<string, Set<string>>();
  let read = 0;
  let parsed = 0;
  for (const sample of samples) {
    const leaves = stringLeaves(parseJson(sample.body));
    if (leaves.length > 0) parsed += 1;
    for (const [path, value] of leaves) (constant.get(path) ?? constant.set(path, new Set()).get(path)!).add(value);
    for (const [orderPath, value] of leaves) {
      const shipmentId = await shipmentOf(value);
      if (shipmentId === undefined) continue;
      read += 1;
      bump(paths.order, orderPath);
      for (const [path, other] of leaves) if (other === shipmentId) bump(paths.shipment, path);
      break;
    }
    for (const [path, value] of leaves) if (stateNames.has(value)) bump(paths.state, path);
  }
  const found = {
    shipment: mostCommon(paths.shipment),
    order: mostCommon(paths.order),
    state: mostCommon(paths.state),
  };
  const taken = new Set(Object.values(found));
  const event = [...constant.entries()].find(
    ([path, values]) =>
      !taken.has(path) && values.size === 1 && parsed > 1 && !path.includes('.') && /event|type|kind|topic/i.test(path),
  );
  return {
    ...(found.shipment ? { shipmentIdPath: found.shipment } : {}),
    ...(found.order ? { externalOrderIdPath: found.order } : {}),
    ...(found.state ? { statePath: found.state } : {}),
    ...(event ? { event: { path: event[0], statusChanged: [...event[1]][0]! } } : {}),
    read,
    samples: samples.length,
  };
}

export interface PlacedState {
  state: string;
  step: DeliveryStep;
  /** Why this step, in words an operator checks. */
  why: string;
}

/** The steps a delivery goes through when all goes well, in order. */
const OFF_PATH = new Set<DeliveryStep>(['delivery_failed', 'returned', 'cancelled']);
const HAPPY_PATH: DeliveryStep[] = DELIVERY_STEPS.filter((step) => !OFF_PATH.has(step));

/**
 * A step for each state name the profile does not map: the answer to createShipment is `created`, to markReady
 * `ready`; a name first seen after another is the step after that one's on the happy path, unless its words name
 * a failure, a return or a cancellation. Every placement is a guess, to be checked.
 */
export function placeStates(
  seen: readonly SeenState[],
  known: (state: string) => DeliveryStep | undefined,
): PlacedState[] {
  const byName = new Map(seen.map((s) => [s.state, s]));
  const placed = new Map<string, PlacedState>();
  const stepOf = (state: string, depth: number): DeliveryStep | undefined => {
    const mapped = known(state) ?? placed.get(state)?.step;
    if (mapped !== undefined || depth > HAPPY_PATH.length) return mapped;
    const place = placeOne(byName.get(state), (before) => stepOf(before, depth + 1));
    if (place) placed.set(state, place);
    return place?.step;
  };
  for (const s of seen) if (known(s.state) === undefined) stepOf(s.state, 0);
  return seen.flatMap((s) => placed.get(s.state) ?? []);
}

function placeOne(
  sighting: SeenState | undefined,
  stepBefore: (state: string) => DeliveryStep | undefined,
): PlacedState | undefined {
  if (!sighting) return undefined;
  const { state } = sighting;
  const words = guessStep(state);
  if (words && OFF_PATH.has(words.step)) return { state, step: words.step, why: `its words (${words.why})` };
  let byOrder: { step: DeliveryStep; why: string } | undefined;
  if (sighting.after === undefined && sighting.source === 'createShipment')
    byOrder = { step: 'created', why: 'the answer to createShipment' };
  else if (sighting.source === 'markReady') byOrder = { step: 'ready', why: 'the answer to markReady' };
  else if (sighting.after !== undefined) {
    const before = stepBefore(sighting.after) ?? sighting.afterStep;
    const next = before === undefined ? undefined : HAPPY_PATH[HAPPY_PATH.indexOf(before) + 1];
    if (next) byOrder = { step: next, why: `first seen after "${sighting.after}" (${before})` };
  }
  if (byOrder && words && words.step !== byOrder.step)
    return { state, ...byOrder, why: `${byOrder.why}; its words say ${words.step} instead` };
  if (byOrder) return { state, ...byOrder, why: words ? `${byOrder.why}, and its words agree` : byOrder.why };
  return words ? { state, step: words.step, why: `its words only (${words.why})` } : undefined;
}
