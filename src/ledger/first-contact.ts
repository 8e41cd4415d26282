/**
 * What a delivery service showed Relais of its dialect, kept so a profile can be drafted from it (`relais profile
 * learn`, issue 28), and the shops' own wire profiles once stored. The ports; the PostgreSQL adapter is
 * src/adapters/postgres/pg-first-contact.ts.
 *
 * - Webhook samples: delivery webhooks that reached a shop's secret URL (its token authenticates the sender) but
 *   that the shop's profile could not verify or read. Bounded: the last SAMPLES_PER_SHOP per shop, SAMPLE_DAYS.
 * - Seen states: every state name the service used (answers, webhooks, polling), with where it first appeared.
 * - Stored profiles: a shop's profile, versioned; the newest is the one in force (src/shops/shop-profiles.ts).
 */
import type { StateSighting } from '../domain/delivery.js';

export type { SightingSource, StateSighting } from '../domain/delivery.js';

export const SAMPLES_PER_SHOP = 20;
export const SAMPLE_DAYS = 7;

/** Why the shop's profile refused or could not read a webhook. */
export type SampleRefusal = 'unsigned' | 'bad_signature' | 'no_reference' | 'shape';

export interface WebhookSample {
  shopId: string;
  receivedAt: Date;
  refusal: SampleRefusal;
  /** The body's bytes, as sent: a signature is learned by verifying it over them. */
  body: Buffer;
  /** Every request header's name, never its value... */
  headerNames: string[];
  /**
   * ...except the headers that look like a signature (a name or a value shaped like an HMAC digest): a MAC over
   * the body reveals nothing of the secret it was made with, and without it no signature can be learned. A
   * credential-bearing header (Authorization, Cookie, an API key) is never kept, whatever its value looks like.
   */
  signatureCandidates: Record<string, string>;
}

export interface SeenState extends StateSighting {
  firstSeenAt: Date;
}

export interface FirstContactStore {
  /** Keeps a sample, dropping the shop's samples past the bound (count and age). */
  keepWebhookSample(sample: WebhookSample): Promise<void>;
  /** The shop's samples within SAMPLE_DAYS of `now`, newest first. */
  webhookSamples(shopId: string, now: Date): Promise<WebhookSample[]>;
  /**
   * Records state names; a name already seen for the shop keeps its first sighting (its time, its step then),
   * completed once with the state before it and where that was read, when the first sighting did not show it.
   */
  noteStates(shopId: string, sightings: StateSighting[], at: Date): Promise<void>;
  seenStates(shopId: string): Promise<SeenState[]>;
}

export interface StoredProfile {
  shopId: string;
  version: number;
  /** A wire profile document (src/adapters/dispatch-api/profile.ts), validated when it was stored and when it is loaded. */
  document: unknown;
  /** Who stored it: "relais profile learn", "dashboard". */
  source: string;
  storedAt: Date;
}

export interface ShopProfileStore {
  /** Stores a new version of the shop's profile; answers its version number. */
  save(shopId: string, document: unknown, source: string): Promise<number>;
  /** The newest version of every shop's stored profile. */
  latest(): Promise<StoredProfile[]>;
}

/** Headers whose value is a credential, never kept whatever it looks like. */
const CREDENTIAL_HEADERS = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key)$/i;
/** A name that says "signature". */
const SIGNATURE_NAME = /sig|hmac|mac$|digest|hash/i;
/** A value shaped like an HMAC digest: hex or base64 of 20, 32 or 64 bytes, after an optional "sha256="-style prefix. */
const DIGEST_VALUE =
  /^(?:[A-Za-z0-9_-]{1,16}=)?(?:[0-9a-f]{40}|[0-9a-f]{64}|[0-9a-f]{128}|[A-Za-z0-9+/]{27}=|[A-Za-z0-9+/]{43}=|[A-Za-z0-9+/]{86}==)$/i;

/**
 * The sample of a refused webhook: its body, its header names, and the values of the headers that may be its
 * signature (a digest-shaped value, or a signature-like name), never of a credential-bearing header.
 */
export function webhookSampleOf(input: {
  shopId: string;
  receivedAt: Date;
  refusal: SampleRefusal;
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
}): WebhookSample {
  const signatureCandidates: Record<string, string> = {};
  const headerNames: string[] = [];
  for (const [name, raw] of Object.entries(input.headers)) {
    headerNames.push(name);
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined || CREDENTIAL_HEADERS.test(name) || value.length > 300) continue;
    if (SIGNATURE_NAME.test(name) || DIGEST_VALUE.test(value.trim())) signatureCandidates[name] = value.trim();
  }
  return {
    shopId: input.shopId,
    receivedAt: input.receivedAt,
    refusal: input.refusal,
    body: input.body,
    headerNames,
    signatureCandidates,
  };
}

/** What the runtime gives each shop's delivery service: its sightings kept in the store, a failure only logged. */
export function stateNoter(
  store: Pick<FirstContactStore, 'noteStates'>,
  logger: { warn(fields: object, message: string): void },
  now: () => Date,
): (shopId: string) => (sightings: StateSighting[]) => void {
  return (shopId) => (sightings) =>
    void store
      .noteStates(shopId, sightings, now())
      .catch((error: Error) => logger.warn({ shop: shopId, err: error.message }, 'could not keep state names'));
}
