/**
 * The wire profile: every name of the dispatch service that the spec marks "not shown", in one declarative
 * file per service (config/dispatch-profiles/<name>.json), validated with zod when it is loaded.
 *
 * The spec names DELIVERED and SANDBOX_KEY_NOT_SUPPORTED and little else: state names, error codes and the
 * error body, the webhook's shape and signature, and several field spellings are guesses. A guess that
 * lives in code fails silently when the real service names things differently (a new shipment called
 * something other than CREATED was never marked ready). A guess that lives here is one line to change, is
 * checked by `relais probe` against a live key, and the emulator speaks whatever profile it is given, so
 * the tests run against a second, deliberately different dialect too.
 *
 * Nothing outside this module and the emulator names a service state, an error code or a webhook header.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { findProjectDir } from '../../config/project-files.js';
import { DELIVERY_ERROR_REASONS, type DeliveryErrorReason } from '../../domain/delivery.js';
import { RelaisError } from '../../domain/errors.js';
import { DELIVERY_STEPS, type DeliveryStep } from '../../domain/shipment-status.js';
import { firstString, getPath, setPath } from './dotted-path.js';

/**
 * What an error answer means to Relais, whatever the service calls it: the delivery port's reasons
 * (src/domain/delivery.ts), which the profile's `errors` section maps the service's codes and statuses onto.
 */
export const ERROR_MEANINGS = DELIVERY_ERROR_REASONS;
export type ErrorMeaning = DeliveryErrorReason;

/** The response fields Relais reads, each spelled one or more ways (tried in order). */
export const FIELD_KEYS = [
  'quoteId',
  'quoteExpiry',
  'quoteTotal',
  'breakdown',
  'breakdownCustomer',
  'breakdownCourier',
  'breakdownPlatform',
  'breakdownCodFee',
  'shipmentId',
  'externalOrderId',
  'status',
  'trackingUrl',
  'trackingCode',
  'orderAmount',
  'statusHistory',
  'nextCursor',
  'simulatedTotal',
] as const;
export type FieldKey = (typeof FIELD_KEYS)[number];

const name = z.string().trim().min(1, 'must not be empty');
const names = z.array(name).min(1, 'needs at least one name');
const path = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/, 'a dotted path such as data.shipment.id');
const paths = z.array(path).min(1, 'needs at least one path');

const meaningSchema = z
  .object({
    codes: z.array(name).default([]),
    /** HTTP statuses that mean this whatever the code (e.g. 429 is rate limited). */
    statuses: z.array(z.number().int().min(400).max(599)).default([]),
  })
  .strict();

export const wireProfileSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'lowercase letters, digits, dots, hyphens'),
    description: z.string().optional(),
    /** The service's state names for each of Relais's delivery steps; several names allowed per step. */
    states: z
      .object(Object.fromEntries(DELIVERY_STEPS.map((step) => [step, names])) as Record<DeliveryStep, typeof names>)
      .strict(),
    errors: z
      .object({
        /** Where the error code sits in an error body, tried in order (a string at that path). */
        codePaths: paths,
        messagePaths: paths,
        meanings: z
          .object(
            Object.fromEntries(ERROR_MEANINGS.map((m) => [m, meaningSchema.optional()])) as Record<
              ErrorMeaning,
              z.ZodOptional<typeof meaningSchema>
            >,
          )
          .strict(),
      })
      .strict(),
    webhook: z
      .object({
        signature: z
          .object({
            header: z.string().regex(/^[A-Za-z0-9-]+$/, 'an HTTP header name'),
            /** Written before the digest, e.g. "sha256="; "" for none. */
            prefix: z.string().default(''),
            encoding: z.enum(['hex', 'base64']),
            algorithm: z.enum(['sha256', 'sha1', 'sha512']).default('sha256'),
          })
          .strict(),
        shipmentIdPaths: paths,
        externalOrderIdPaths: paths,
        statePaths: paths,
        /** The event name of a status change, where the body carries one (used by the emulator). */
        event: z.object({ path, statusChanged: name }).strict().optional(),
      })
      .strict(),
    fields: z.object(Object.fromEntries(FIELD_KEYS.map((k) => [k, paths])) as Record<FieldKey, typeof paths>).strict(),
    requests: z.object({ paymentModeField: name }).strict(),
    /** Settlement states of a shipment (spec 3.4: a claim holds the settlement): the names meaning "held". */
    settlement: z
      .object({ heldNames: z.array(name).default([]) })
      .strict()
      .default({ heldNames: [] }),
  })
  .strict()
  .superRefine((profile, ctx) => {
    // A state name under two steps would make the mapping depend on the order of the file.
    const seen = new Map<string, DeliveryStep>();
    for (const step of DELIVERY_STEPS) {
      for (const [i, state] of profile.states[step].entries()) {
        const key = state.toUpperCase();
        const other = seen.get(key);
        if (other !== undefined && other !== step) {
          ctx.addIssue({
            code: 'custom',
            path: ['states', step, i],
            message: `"${state}" is already mapped to ${other}`,
          });
        }
        seen.set(key, step);
      }
    }
    const codeOwners = new Map<string, ErrorMeaning>();
    for (const meaning of ERROR_MEANINGS) {
      for (const [i, code] of (profile.errors.meanings[meaning]?.codes ?? []).entries()) {
        const other = codeOwners.get(code);
        if (other !== undefined && other !== meaning) {
          ctx.addIssue({
            code: 'custom',
            path: ['errors', 'meanings', meaning, 'codes', i],
            message: `"${code}" already means ${other}`,
          });
        }
        codeOwners.set(code, meaning);
      }
    }
  });

export type WireProfileDocument = z.output<typeof wireProfileSchema>;

/** A profile that cannot be used (unreadable, not JSON, or against the schema): permanent until someone edits it. */
export class WireProfileError extends RelaisError {
  override readonly name = 'WireProfileError';
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super({
      failure: 'permanent',
      message: `wire profile ${source} is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    });
  }
}

export interface ErrorBodyReading {
  code?: string;
  message?: string;
}

export interface WebhookReference {
  shipmentId?: string;
  externalOrderId?: string;
  state?: string;
}

/** A validated profile, with the look-ups every reader and use-case needs. */
export class WireProfile {
  readonly name: string;
  readonly document: WireProfileDocument;
  readonly #stepByState = new Map<string, DeliveryStep>();
  readonly #meaningByCode = new Map<string, ErrorMeaning>();
  readonly #meaningByStatus = new Map<number, ErrorMeaning>();

  constructor(document: WireProfileDocument) {
    this.name = document.name;
    this.document = document;
    for (const step of DELIVERY_STEPS)
      for (const state of document.states[step]) this.#stepByState.set(state.trim().toUpperCase(), step);
    for (const meaning of ERROR_MEANINGS) {
      const entry = document.errors.meanings[meaning];
      for (const code of entry?.codes ?? []) this.#meaningByCode.set(code, meaning);
      for (const status of entry?.statuses ?? [])
        if (!this.#meaningByStatus.has(status)) this.#meaningByStatus.set(status, meaning);
    }
  }

  /** The step a service state maps to, or undefined for a name this profile does not know (never progress). */
  stepOf(state: string): DeliveryStep | undefined {
    return this.#stepByState.get(state.trim().toUpperCase());
  }

  /** The name the service is expected to use for a step (the profile's first): what the emulator answers. */
  stateFor(step: DeliveryStep): string {
    return this.document.states[step][0]!;
  }

  /** Every name the profile knows, with its step (probe's report, the emulator's status filter). */
  knownStates(): Array<{ state: string; step: DeliveryStep }> {
    return DELIVERY_STEPS.flatMap((step) => this.document.states[step].map((state) => ({ state, step })));
  }

  /**
   * What an error answer means: by its code first (the service's own word), then by its status for the
   * meanings the profile ties to one (429 is rate limited whatever the code says).
   */
  meaningOf(status: number | undefined, code: string | undefined): ErrorMeaning | undefined {
    if (code !== undefined) {
      const byCode = this.#meaningByCode.get(code);
      if (byCode) return byCode;
    }
    return status === undefined ? undefined : this.#meaningByStatus.get(status);
  }

  /** True when the service's settlement state says the money is held (an open claim). */
  settlementHeld(state: string | undefined): boolean {
    return (
      state !== undefined &&
      this.document.settlement.heldNames.some((n) => n.toUpperCase() === state.trim().toUpperCase())
    );
  }

  /** The code the service is expected to send for a meaning (the emulator's answer); undefined when the profile has none. */
  codeFor(meaning: ErrorMeaning): string | undefined {
    return this.document.errors.meanings[meaning]?.codes[0];
  }

  /** Reads an error body wherever this profile says its code and message sit; anything else is ignored. */
  readErrorBody(body: unknown): ErrorBodyReading {
    const code = firstString(body, this.document.errors.codePaths);
    const message = firstString(body, this.document.errors.messagePaths);
    return { ...(code === undefined ? {} : { code }), ...(message === undefined ? {} : { message }) };
  }

  /** Builds an error body in this profile's shape (the emulator's answer). */
  errorBody(code: string, message: string): Record<string, unknown> {
    const body: Record<string, unknown> = {};
    setPath(body, this.document.errors.codePaths[0]!, code);
    const messagePath = this.document.errors.messagePaths[0]!;
    // A message path under the code's own path (code "error", message "error.message") cannot both hold.
    if (!messagePath.startsWith(`${this.document.errors.codePaths[0]!}.`)) setPath(body, messagePath, message);
    return body;
  }

  /** The value of a response field under any of its spellings, first found wins. */
  field(body: unknown, key: FieldKey): unknown {
    for (const p of this.document.fields[key]) {
      const value = getPath(body, p);
      if (value !== undefined && value !== null) return value;
    }
    return undefined;
  }

  /** The spelling the emulator writes for a field. */
  spelling(key: FieldKey): string {
    return this.document.fields[key][0]!;
  }

  // -- webhooks ---------------------------------------------------------------------------------------

  get signatureHeader(): string {
    return this.document.webhook.signature.header;
  }

  /** The header value the service sends for a body signed with `secret`. */
  sign(rawBody: Buffer | string, secret: string): string {
    const { prefix, encoding, algorithm } = this.document.webhook.signature;
    return `${prefix}${createHmac(algorithm, secret).update(rawBody).digest(encoding)}`;
  }

  /** Constant-time check of a signature header against the body and secret. */
  verify(rawBody: Buffer, given: string | undefined, secret: string): boolean {
    if (given === undefined) return false;
    const left = Buffer.from(given.trim());
    const right = Buffer.from(this.sign(rawBody, secret));
    return left.length === right.length && timingSafeEqual(left, right);
  }

  /** Where the shipment id, the external order id and the state sit in a webhook body (paths tried in order). */
  webhookReference(payload: unknown): WebhookReference {
    const { shipmentIdPaths, externalOrderIdPaths, statePaths } = this.document.webhook;
    const shipmentId = firstString(payload, shipmentIdPaths);
    const externalOrderId = firstString(payload, externalOrderIdPaths);
    const state = firstString(payload, statePaths);
    return {
      ...(shipmentId === undefined ? {} : { shipmentId }),
      ...(externalOrderId === undefined ? {} : { externalOrderId }),
      ...(state === undefined ? {} : { state }),
    };
  }

  /** A status-change webhook body in this profile's shape (the emulator's). */
  webhookBody(event: {
    shipmentId: string;
    externalOrderId: string;
    state: string;
    occurredAt: string;
  }): Record<string, unknown> {
    const { shipmentIdPaths, externalOrderIdPaths, statePaths, event: eventName } = this.document.webhook;
    const body: Record<string, unknown> = {};
    if (eventName) setPath(body, eventName.path, eventName.statusChanged);
    setPath(body, shipmentIdPaths[0]!, event.shipmentId);
    setPath(body, externalOrderIdPaths[0]!, event.externalOrderId);
    setPath(body, statePaths[0]!, event.state);
    const parent = statePaths[0]!.includes('.') ? statePaths[0]!.slice(0, statePaths[0]!.lastIndexOf('.')) : '';
    setPath(body, parent ? `${parent}.occurred_at` : 'occurred_at', event.occurredAt);
    return body;
  }
}

/** Validates a parsed profile document; every problem is listed at once. */
export function parseWireProfile(document: unknown, source: string): WireProfile {
  const parsed = wireProfileSchema.safeParse(document);
  if (!parsed.success) {
    throw new WireProfileError(
      source,
      parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`),
    );
  }
  return new WireProfile(parsed.data);
}

let builtInDir: string | undefined;

/** The folder of the profiles shipped with Relais (config/dispatch-profiles), looked for once per process. */
export function builtInProfileDir(): string {
  builtInDir ??= findProjectDir(import.meta.url, join('config', 'dispatch-profiles'), 'default.json');
  if (!builtInDir) throw new Error('config/dispatch-profiles/default.json not found above src/adapters/dispatch-api');
  return builtInDir;
}

const loaded = new Map<string, WireProfile>();

/**
 * A profile by built-in name ("default") or by file path (absolute, or relative to the working directory).
 * Loaded once per process; later calls (one per delivery webhook) touch no file.
 */
export function loadWireProfile(reference = 'default'): WireProfile {
  const file =
    /^[a-z0-9][a-z0-9._-]*$/.test(reference) && !reference.endsWith('.json')
      ? join(builtInProfileDir(), `${reference}.json`)
      : isAbsolute(reference)
        ? reference
        : resolve(reference);
  const cached = loaded.get(file);
  if (cached) return cached;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new WireProfileError(reference, [`cannot read ${file}: ${(error as Error).message}`]);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new WireProfileError(reference, [`${file} is not valid JSON: ${(error as Error).message}`]);
  }
  const profile = parseWireProfile(document, reference);
  loaded.set(file, profile);
  return profile;
}

/** Today's guesses: what a shop uses when its dispatch settings name no profile. */
export function defaultWireProfile(): WireProfile {
  return loadWireProfile('default');
}
