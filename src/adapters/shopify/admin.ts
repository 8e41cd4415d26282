/**
 * The Shopify Admin GraphQL client Relais writes back with: @shopify/shopify-api's own GraphQL client, one per
 * shop, behind a single private `request()` that decides what a failed call means.
 *
 *  - userErrors: every mutation payload is checked; any userError becomes a non-retryable ShopifyWriteError
 *    carrying them (the writer catches the few cases that only mean "already done", see writer.ts).
 *  - THROTTLED (HTTP 200, `errors[].extensions.code`): the request was not executed. We wait exactly what the
 *    cost figures say, (requestedQueryCost - currentlyAvailable) / restoreRate seconds, and try again.
 *  - 429 and 5xx (Retry-After when given), network errors and timeouts: backed off and tried again.
 *  - A bounded number of attempts in process, each wait bounded too; past that a retryable ShopifyWriteError
 *    (`retryable: true`, `retryAfterMs`) lets the BullMQ job retry later instead of holding a worker slot.
 *
 * A mutation that got a 5xx or no answer may have been applied. Only operations safe to repeat blindly
 * (queries, and mutations marked `repeatable`) are retried in process after such a failure; the others fail
 * as retryable at once, so the job runs again and the writer reads the shop before writing anything.
 *
 * Routing to a local emulator: the library always calls https://{shop}/admin/api/..., through a fetch that is
 * process-global (`setAbstractFetchFunc`) and read once, when a client is built. A shop registered with an
 * `adminUrl` gets a client built with a fetch of its own that sends its https://{domain} calls there; the
 * process-global fetch is put back as soon as that client exists. Importing this module changes no fetch, and
 * a shop without adminUrl is served by the library's own fetch, to the real Shopify.
 *
 * The access token is a Secret: revealed into the library's session, and never logged (the library's logger is
 * silenced; our log lines carry the shop domain and the operation only). It comes from an AccessTokenSource
 * (access-token.ts): the registry's static token, or an OAuth provider that renews it. Before each call the client
 * asks the source for the token; a 401 asks it once for a renewed one and repeats the call once (a 401 means the
 * call was not executed, so even a mutation is safe to repeat).
 */
import type { ShopifyShopConfig } from './settings.js';
import '@shopify/shopify-api/adapters/node';
import {
  ApiVersion,
  GraphqlQueryError,
  HttpRequestError,
  HttpResponseError,
  HttpRetriableError,
  HttpThrottlingError,
  LogSeverity,
  Session,
  shopifyApi,
  type GraphqlClient,
} from '@shopify/shopify-api';
import { z } from 'zod';
import { Secret } from '../../shops/secret.js';
import { failureOf, RelaisError } from '../../domain/errors.js';
import type { Logger } from '../../log.js';
import type { StoreDeps } from '../../shops/platforms/platform.js';
import { AccessTokenError, StaticAccessToken, type AccessTokenSource } from './access-token.js';
import { accessTokenSourceFor } from './token-sources.js';
import { buildWithFetch, fetchRoutedTo } from './admin-routing.js';
import { RedisShopRateBudget, type BudgetTicket, type ShopRateBudget } from './rate-budget.js';

// ---- errors ---------------------------------------------------------------------------------------------

export interface ShopifyUserError {
  field: string[] | null;
  message: string;
  code?: string | null;
}

export interface ShopifyWriteErrorInit {
  operation: string;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  status?: number;
  userErrors?: ShopifyUserError[];
  cause?: unknown;
}

/**
 * What a failed Admin API call means for the job: `retryable` (try the whole job again later, after
 * `retryAfterMs` when known) or not (the shop refused: userErrors, an invalid document, a revoked token).
 * Messages name the operation and Shopify's own error messages; never a token or a header.
 */
export class ShopifyWriteError extends RelaisError {
  override readonly name = 'ShopifyWriteError';
  readonly operation: string;
  readonly status?: number;
  readonly userErrors: ShopifyUserError[];

  constructor(init: ShopifyWriteErrorInit) {
    super({
      failure: failureOf(init.retryable),
      message: init.message,
      retryAfterMs: init.retryAfterMs,
      cause: init.cause,
    });
    this.operation = init.operation;
    this.userErrors = init.userErrors ?? [];
    if (init.status !== undefined) this.status = init.status;
  }
}

// ---- the documents Relais sends ----------------------------------------------------------------------

/**
 * Every GraphQL document Relais sends to Shopify, in one place so tests can validate each one against the
 * real Admin schema. Sizes are chosen to stay far below the single-query cost limit (1000).
 */
export const ADMIN_DOCUMENTS = {
  orderState: `query RelaisOrderState($id: ID!) {
  order(id: $id) {
    id
    name
    tags
    note
    cancelledAt
    displayFinancialStatus
    metafields(first: 20, namespace: "relais") { nodes { namespace key type value } }
    fulfillmentOrders(first: 5) {
      nodes { id status lineItems(first: 50) { nodes { id remainingQuantity } } }
    }
    fulfillments(first: 10) {
      id
      status
      trackingInfo(first: 5) { company number url }
      events(first: 25) { nodes { status happenedAt } }
    }
  }
}`,
  metafieldsSet: `mutation RelaisMetafieldsSet($metafields: [MetafieldsSetInput!]!) {
  metafieldsSet(metafields: $metafields) {
    metafields { namespace key }
    userErrors { field message code }
  }
}`,
  tagsAdd: `mutation RelaisTagsAdd($id: ID!, $tags: [String!]!) {
  tagsAdd(id: $id, tags: $tags) {
    node { id }
    userErrors { field message }
  }
}`,
  fulfillmentCreate: `mutation RelaisFulfillmentCreate($fulfillment: FulfillmentInput!) {
  fulfillmentCreate(fulfillment: $fulfillment) {
    fulfillment { id status trackingInfo(first: 5) { company number url } }
    userErrors { field message }
  }
}`,
  fulfillmentEventCreate: `mutation RelaisFulfillmentEventCreate($fulfillmentEvent: FulfillmentEventInput!) {
  fulfillmentEventCreate(fulfillmentEvent: $fulfillmentEvent) {
    fulfillmentEvent { id status happenedAt }
    userErrors { field message }
  }
}`,
  orderMarkAsPaid: `mutation RelaisOrderMarkAsPaid($input: OrderMarkAsPaidInput!) {
  orderMarkAsPaid(input: $input) {
    order { id displayFinancialStatus }
    userErrors { field message }
  }
}`,
  orderUpdateNote: `mutation RelaisOrderUpdateNote($input: OrderInput!) {
  orderUpdate(input: $input) {
    order { id note }
    userErrors { field message }
  }
}`,
} as const;

/** The fulfillment event statuses of Admin API 2026-10 (enum FulfillmentEventStatus). */
export type FulfillmentEventStatus =
  | 'ATTEMPTED_DELIVERY'
  | 'CARRIER_PICKED_UP'
  | 'CONFIRMED'
  | 'DELAYED'
  | 'DELIVERED'
  | 'FAILURE'
  | 'IN_TRANSIT'
  | 'LABEL_PRINTED'
  | 'LABEL_PURCHASED'
  | 'OUT_FOR_DELIVERY'
  | 'READY_FOR_PICKUP';

// ---- what we read back -------------------------------------------------------------------------------

const orderStateSchema = z.object({
  id: z.string(),
  name: z.string(),
  tags: z.array(z.string()),
  note: z.string().nullable(),
  cancelledAt: z.string().nullable(),
  displayFinancialStatus: z.string().nullable(),
  metafields: z.object({
    nodes: z.array(z.object({ namespace: z.string(), key: z.string(), type: z.string(), value: z.string() })),
  }),
  fulfillmentOrders: z.object({
    nodes: z.array(
      z.object({
        id: z.string(),
        status: z.string(),
        lineItems: z.object({ nodes: z.array(z.object({ id: z.string(), remainingQuantity: z.number().int() })) }),
      }),
    ),
  }),
  fulfillments: z.array(
    z.object({
      id: z.string(),
      status: z.string(),
      trackingInfo: z.array(
        z.object({ company: z.string().nullable(), number: z.string().nullable(), url: z.string().nullable() }),
      ),
      events: z.object({ nodes: z.array(z.object({ status: z.string(), happenedAt: z.string() })) }),
    }),
  ),
});

/** The order as the writer needs to see it before writing. */
export type ShopifyOrderState = z.infer<typeof orderStateSchema>;

const fulfillmentCreated = z.object({ fulfillmentCreate: z.object({ fulfillment: z.object({ id: z.string() }) }) });

// ---- the client --------------------------------------------------------------------------------------

export interface ShopifyAdminOptions {
  /** The shop's myshopify domain. */
  domain: string;
  /** A static token, or where to get a token that may be renewed (access-token.ts). */
  accessToken: Secret | AccessTokenSource;
  /** The app's client secret; the library requires one, Admin calls do not use it. */
  clientSecret: Secret;
  /** Admin API version, e.g. "2026-10" (the registry's shopify.apiVersion). */
  apiVersion?: string;
  /** Base URL replacing https://{domain}: a local emulator. */
  adminUrl?: string;
  logger: Logger;
  /** In-process retries before handing the job back to the queue. */
  maxAttempts?: number;
  /** Longest single wait in process; a longer one is handed to the queue as retryAfterMs. */
  maxWaitMs?: number;
  /** Time budget of one HTTP call. */
  timeoutMs?: number;
  /** For tests: how to wait. */
  sleep?: (ms: number) => Promise<void>;
  /** The shop's rate budget shared by every process (rate-budget.ts); without one, only Shopify's answers pace calls. */
  budget?: ShopRateBudget;
  /** Told how long a call waited for the budget. */
  onBudgetWait?: (ms: number) => void;
}

/** Where a shop's rate budget is shared: the process's Redis and prefix (StoreDeps). */
export type SharedBudget = Pick<StoreDeps, 'redis' | 'prefix' | 'onRateBudgetWait'>;

/** The shared budget of callers given a Redis, none for those (tests, one-off tools) given only a logger. */
export function sharedBudgetOf(deps: Partial<StoreDeps>): SharedBudget | undefined {
  if (!deps.redis || deps.prefix === undefined) return undefined;
  return {
    redis: deps.redis,
    prefix: deps.prefix,
    ...(deps.onRateBudgetWait ? { onRateBudgetWait: deps.onRateBudgetWait } : {}),
  };
}

/**
 * The Admin client of a Shopify shop of the registry: its domain, token, client secret, API version and, for a
 * local emulator, adminUrl. Callers choose only how patient the client is (and where it logs).
 */
export function shopifyAdminClientFor(
  shop: ShopifyShopConfig,
  options: Pick<ShopifyAdminOptions, 'logger' | 'maxAttempts' | 'maxWaitMs' | 'timeoutMs'>,
  /** The process's Redis: calls then share the shop's rate budget with every other worker. */
  shared?: SharedBudget,
): ShopifyAdminClient {
  const budget = shared
    ? {
        budget: new RedisShopRateBudget(shared.redis, shared.prefix, shop.shopify.domain, options.logger),
        onBudgetWait: (ms: number) => shared.onRateBudgetWait?.(shop.id, ms),
      }
    : {};
  return new ShopifyAdminClient({
    ...budget,
    domain: shop.shopify.domain,
    accessToken: accessTokenSourceFor(shop),
    clientSecret: shop.shopify.webhookSecret,
    apiVersion: shop.shopify.apiVersion,
    ...(shop.shopify.adminUrl === undefined ? {} : { adminUrl: shop.shopify.adminUrl }),
    ...options,
  });
}

export const DEFAULT_ADMIN_API_VERSION = '2026-10';
const DEFAULT_MAX_ATTEMPTS = 4;
const DEFAULT_MAX_WAIT_MS = 5_000;
const DEFAULT_TIMEOUT_MS = 15_000;
/** Shopify sends Retry-After: 2.0 on REST 429s; the same default serves a GraphQL 429 without the header. */
const DEFAULT_RETRY_AFTER_MS = 2_000;
const MIN_WAIT_MS = 100;
/** What a call is taken to cost before Shopify has reported its operation's cost (a mutation's usual 10 points). */
const DEFAULT_ESTIMATED_COST = 10;

const KNOWN_VERSIONS: ReadonlySet<string> = new Set(Object.values(ApiVersion));

interface RequestOptions {
  /** A name for logs and errors (the GraphQL operation). */
  operation: string;
  /** True when sending it twice has the same effect as once (queries; setting a value). */
  repeatable: boolean;
}

type Attempt =
  { ok: true; data: unknown } | { ok: false; error: ShopifyWriteError; waitMs?: number; executed: 'no' | 'maybe' };

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class ShopifyAdminClient {
  readonly domain: string;
  readonly apiVersion: string;
  readonly #shopify: ReturnType<typeof shopifyApi>;
  readonly #tokens: AccessTokenSource;
  readonly #adminUrl: string | undefined;
  /** The library's client for the last token used (rebuilt when the token changes). */
  #client: { token: string; client: GraphqlClient } | undefined;
  readonly #logger: Logger;
  readonly #maxAttempts: number;
  readonly #maxWaitMs: number;
  readonly #timeoutMs: number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #budget: ShopRateBudget | undefined;
  readonly #onBudgetWait: ((ms: number) => void) | undefined;

  constructor(options: ShopifyAdminOptions) {
    this.domain = options.domain.toLowerCase();
    this.apiVersion = options.apiVersion ?? DEFAULT_ADMIN_API_VERSION;
    if (!/^\d{4}-\d{2}$/.test(this.apiVersion) && this.apiVersion !== 'unstable') {
      throw new Error(`Shopify API version "${this.apiVersion}" is not a version like 2026-10`);
    }
    this.#logger = options.logger;
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
    this.#maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#sleep = options.sleep ?? sleepFor;
    this.#budget = options.budget;
    this.#onBudgetWait = options.onBudgetWait;
    if (!KNOWN_VERSIONS.has(this.apiVersion)) {
      this.#logger.warn(
        { shopDomain: this.domain, apiVersion: this.apiVersion },
        '@shopify/shopify-api does not list this Admin API version; using it as given',
      );
    }
    this.#shopify = shopifyApi({
      apiKey: 'relais',
      apiSecretKey: options.clientSecret.reveal(),
      hostName: 'relais.local',
      // The registry validates the format; the library passes the string through to the URL.
      apiVersion: this.apiVersion as ApiVersion,
      isEmbeddedApp: false,
      // Relais logs through pino; the library's console logger would print outside our redaction.
      logger: { level: LogSeverity.Error, log: () => undefined, httpRequests: false },
    });
    this.#tokens =
      options.accessToken instanceof Secret ? new StaticAccessToken(options.accessToken) : options.accessToken;
    this.#adminUrl = options.adminUrl;
  }

  /**
   * An offline session for the token: the shop and its Admin API access token, nothing else. For a shop served
   * by a local emulator (adminUrl), the client is built with a fetch routed there (no process-wide change).
   */
  #clientFor(token: Secret): GraphqlClient {
    if (this.#client?.token !== token.reveal()) {
      const session = new Session({
        id: `offline_${this.domain}`,
        shop: this.domain,
        state: '',
        isOnline: false,
        accessToken: token.reveal(),
      });
      const build = () => new this.#shopify.clients.Graphql({ session });
      const client =
        this.#adminUrl === undefined ? build() : buildWithFetch(fetchRoutedTo(this.domain, this.#adminUrl), build);
      this.#client = { token: token.reveal(), client };
    }
    return this.#client.client;
  }

  // ---- typed operations (what the writer calls) -------------------------------------------------------

  /** The order's write-back state, or undefined when the shop has no such order. */
  async orderState(orderGid: string): Promise<ShopifyOrderState | undefined> {
    const data = await this.request(
      ADMIN_DOCUMENTS.orderState,
      { id: orderGid },
      { operation: 'orderState', repeatable: true },
    );
    const parsed = z.object({ order: orderStateSchema.nullable() }).safeParse(data);
    if (!parsed.success) throw this.unexpected('orderState', parsed.error);
    return parsed.data.order ?? undefined;
  }

  async setMetafields(
    metafields: { ownerId: string; namespace: string; key: string; type: string; value: string }[],
  ): Promise<void> {
    await this.request(ADMIN_DOCUMENTS.metafieldsSet, { metafields }, { operation: 'metafieldsSet', repeatable: true });
  }

  async addTags(id: string, tags: string[]): Promise<void> {
    await this.request(ADMIN_DOCUMENTS.tagsAdd, { id, tags }, { operation: 'tagsAdd', repeatable: true });
  }

  /** Creates a fulfillment; returns its id. Not repeated blindly: a lost answer may hide a created fulfillment. */
  async createFulfillment(fulfillment: {
    lineItemsByFulfillmentOrder: {
      fulfillmentOrderId: string;
      fulfillmentOrderLineItems: { id: string; quantity: number }[];
    }[];
    trackingInfo: { company: string; number?: string; url?: string };
    notifyCustomer: boolean;
  }): Promise<string> {
    const data = await this.request(
      ADMIN_DOCUMENTS.fulfillmentCreate,
      { fulfillment },
      { operation: 'fulfillmentCreate', repeatable: false },
    );
    const parsed = fulfillmentCreated.safeParse(data);
    if (!parsed.success) throw this.unexpected('fulfillmentCreate', parsed.error);
    return parsed.data.fulfillmentCreate.fulfillment.id;
  }

  /** Adds an event to a fulfillment. Not repeated blindly: a second call would add a second event. */
  async createFulfillmentEvent(event: {
    fulfillmentId: string;
    status: FulfillmentEventStatus;
    happenedAt: string;
    message?: string;
  }): Promise<void> {
    await this.request(
      ADMIN_DOCUMENTS.fulfillmentEventCreate,
      { fulfillmentEvent: event },
      { operation: 'fulfillmentEventCreate', repeatable: false },
    );
  }

  /** Marks the order paid. Repeating it only answers a userError, which the writer reads as "already paid". */
  async markAsPaid(orderGid: string): Promise<void> {
    await this.request(
      ADMIN_DOCUMENTS.orderMarkAsPaid,
      { input: { id: orderGid } },
      { operation: 'orderMarkAsPaid', repeatable: false },
    );
  }

  /** Replaces the order note (the writer computes it from the note it just read). */
  async updateNote(orderGid: string, note: string): Promise<void> {
    await this.request(
      ADMIN_DOCUMENTS.orderUpdateNote,
      { input: { id: orderGid, note } },
      { operation: 'orderUpdate', repeatable: true },
    );
  }

  /**
   * A read-only query whose document lives with the module that owns it (orders.ts: reconciliation's order
   * listing), through the same request path: THROTTLED waits by cost, 429/5xx retries, the same errors.
   * Only queries: a query is always safe to repeat, so it is sent as `repeatable`.
   */
  async query(document: string, variables: Record<string, unknown>, operation: string): Promise<unknown> {
    return this.request(document, variables, { operation, repeatable: true });
  }

  /**
   * A mutation whose document lives with the module that owns it (`relais doctor --fix`: webhook subscriptions,
   * the carrier service), through the same request path. Never repeated blindly after a lost answer (it may have
   * been applied); userErrors throw a ShopifyWriteError carrying them, as for every mutation here.
   */
  async mutate(document: string, variables: Record<string, unknown>, operation: string): Promise<unknown> {
    return this.request(document, variables, { operation, repeatable: false });
  }

  // ---- the one request path ---------------------------------------------------------------------------

  /**
   * One line per retry series at info or above, not one per call (a burst of throttled calls made thousands):
   * each retry is at debug; a series that succeeds after retries says so once, with the attempts and the time
   * waited; one handed back to the queue says so once, as a warning. `shopDomain`, not `shop`: loggers of
   * this client are children bound to the shop id as `shop`, and a key twice in one JSON line is ambiguous.
   */
  private async request(query: string, variables: Record<string, unknown>, options: RequestOptions): Promise<unknown> {
    let waitedMs = 0;
    let lastError: string | undefined;
    for (let attempt = 1; ; attempt += 1) {
      const budget = await this.takeBudget(options.operation);
      waitedMs += budget.waitedMs;
      const result = await this.attempt(query, variables, options.operation, budget.ticket);
      if (result.ok) {
        if (attempt > 1) {
          this.#logger.info(
            { shopDomain: this.domain, operation: options.operation, attempts: attempt, waitedMs, lastErr: lastError },
            'Shopify call succeeded after retries',
          );
        }
        return result.data;
      }
      const { error } = result;
      if (!error.retryable) throw error;
      const waitMs = result.waitMs ?? backoffMs(attempt);
      const safeToRepeat = result.executed === 'no' || options.repeatable;
      const lastAttempt = attempt >= this.#maxAttempts;
      if (!safeToRepeat || lastAttempt || waitMs > this.#maxWaitMs) {
        this.#logger.warn(
          {
            shopDomain: this.domain,
            operation: options.operation,
            attempts: attempt,
            waitedMs,
            retryAfterMs: waitMs,
            err: error.message,
          },
          'Shopify call handed back to the queue for a later retry',
        );
        throw new ShopifyWriteError({
          operation: options.operation,
          message: error.message,
          retryable: true,
          retryAfterMs: waitMs,
          ...(error.status === undefined ? {} : { status: error.status }),
          cause: error.cause,
        });
      }
      this.#logger.debug(
        { shopDomain: this.domain, operation: options.operation, attempt, waitMs, err: error.message },
        'Shopify call retried',
      );
      waitedMs += waitMs;
      lastError = error.message;
      await this.#sleep(waitMs);
    }
  }

  /**
   * Reserves the call's cost in the shop's shared budget, waiting while the bucket refills or other calls hold
   * it. A wait longer than this client's patience hands the job back to the queue (retryable, the wait as
   * retryAfterMs) rather than holding a worker slot; the order lister is patient enough to wait (reconciliation
   * does not report THROTTLED for a bucket the workers emptied). Answers the ticket and the time waited.
   */
  private async takeBudget(operation: string): Promise<{ ticket: BudgetTicket | undefined; waitedMs: number }> {
    if (!this.#budget) return { ticket: undefined, waitedMs: 0 };
    const patienceMs = this.#maxWaitMs * this.#maxAttempts;
    let waitedMs = 0;
    for (;;) {
      const taken = await this.#budget.take(operation, DEFAULT_ESTIMATED_COST);
      if ('ticket' in taken) {
        if (waitedMs > 0) this.#onBudgetWait?.(waitedMs);
        return { ticket: taken.ticket, waitedMs };
      }
      if (taken.waitMs > this.#maxWaitMs || waitedMs + taken.waitMs > patienceMs) {
        this.#onBudgetWait?.(waitedMs);
        throw new ShopifyWriteError({
          operation,
          message: `${operation}: the shop's Shopify rate budget is spent; retrying once it refills`,
          retryable: true,
          retryAfterMs: taken.waitMs,
        });
      }
      await this.#sleep(taken.waitMs);
      waitedMs += taken.waitMs;
    }
  }

  /** Ends the call's reservation, with Shopify's account of the bucket and the call's cost when it gave one. */
  private async settleBudget(ticket: BudgetTicket | undefined, operation: string, extensions: unknown): Promise<void> {
    if (!this.#budget || !ticket) return;
    const reported = z.object({ cost: costSchema }).safeParse(extensions);
    await this.#budget.settle(
      ticket,
      reported.success
        ? { operation, requestedCost: reported.data.cost.requestedQueryCost, status: reported.data.cost.throttleStatus }
        : undefined,
    );
  }

  private async attempt(
    query: string,
    variables: Record<string, unknown>,
    operation: string,
    ticket: BudgetTicket | undefined,
  ): Promise<Attempt> {
    let settled = false;
    const settle = async (extensions: unknown) => {
      if (settled) return;
      settled = true;
      await this.settleBudget(ticket, operation, extensions);
    };
    try {
      return await this.attemptCall(query, variables, operation, settle);
    } finally {
      await settle(undefined);
    }
  }

  private async attemptCall(
    query: string,
    variables: Record<string, unknown>,
    operation: string,
    settle: (extensions: unknown) => Promise<void>,
  ): Promise<Attempt> {
    let response: { data?: unknown; extensions?: unknown };
    const send = async (token: Secret) => {
      try {
        return await this.#clientFor(token).request(query, {
          variables,
          retries: 0,
          signal: AbortSignal.timeout(this.#timeoutMs),
        });
      } catch (error) {
        // A THROTTLED answer (or any GraphQL error) still reports the bucket.
        if (error instanceof GraphqlQueryError)
          await settle((error.body as { extensions?: unknown } | undefined)?.extensions);
        throw error;
      }
    };
    let token: Secret;
    try {
      token = await this.#tokens.current();
    } catch (error) {
      return this.tokenFailure(operation, error);
    }
    try {
      response = await send(token);
    } catch (error) {
      if (!(error instanceof HttpResponseError) || error.response.code !== 401) return this.classify(operation, error);
      let renewed: Secret | undefined;
      try {
        renewed = await this.#tokens.afterUnauthorized(token);
      } catch (tokenError) {
        return this.tokenFailure(operation, tokenError);
      }
      if (renewed === undefined) return this.classify(operation, error);
      try {
        response = await send(renewed);
      } catch (again) {
        return this.classify(operation, again);
      }
    }
    await settle(response.extensions);
    const data = response.data;
    if (data === undefined || data === null) {
      return {
        ok: false,
        executed: 'maybe',
        error: new ShopifyWriteError({
          operation,
          message: `${operation}: Shopify answered without data`,
          retryable: true,
        }),
      };
    }
    const userErrors = collectUserErrors(data);
    if (userErrors.length > 0) {
      return {
        ok: false,
        executed: 'maybe',
        error: new ShopifyWriteError({
          operation,
          message: `${operation} refused by Shopify: ${userErrors.map(describeUserError).join('; ')}`,
          retryable: false,
          userErrors,
        }),
      };
    }
    return { ok: true, data };
  }

  /** What a thrown library error means: throttled, worth retrying, or refused. */
  private classify(operation: string, error: unknown): Attempt {
    if (error instanceof GraphqlQueryError) {
      const body = graphqlErrorBody.safeParse(error.body);
      const errors = body.success ? body.data.errors.graphQLErrors : [];
      const codes = errors.map((e) => e.extensions?.code);
      const messages = errors.map((e) => e.message).join('; ') || error.message;
      if (codes.includes('THROTTLED')) {
        const cost = body.success ? body.data.extensions?.cost : undefined;
        return {
          ok: false,
          executed: 'no',
          waitMs: throttleWaitMs(cost),
          error: new ShopifyWriteError({
            operation,
            message: `${operation}: throttled by Shopify (THROTTLED)`,
            retryable: true,
            cause: error,
          }),
        };
      }
      if (codes.includes('INTERNAL_SERVER_ERROR')) {
        return {
          ok: false,
          executed: 'maybe',
          error: new ShopifyWriteError({
            operation,
            message: `${operation}: ${messages}`,
            retryable: true,
            cause: error,
          }),
        };
      }
      // Validation errors, MAX_COST_EXCEEDED, ACCESS_DENIED...: sending the same document again cannot help.
      return {
        ok: false,
        executed: 'no',
        error: new ShopifyWriteError({
          operation,
          message: `${operation} rejected by Shopify: ${messages}`,
          retryable: false,
          cause: error,
        }),
      };
    }
    if (error instanceof HttpThrottlingError) {
      const retryAfter = error.response.retryAfter;
      return {
        ok: false,
        executed: 'no',
        waitMs:
          retryAfter !== undefined && Number.isFinite(retryAfter)
            ? Math.max(MIN_WAIT_MS, Math.ceil(retryAfter * 1000))
            : DEFAULT_RETRY_AFTER_MS,
        error: new ShopifyWriteError({
          operation,
          message: `${operation}: HTTP 429 from Shopify`,
          retryable: true,
          status: 429,
          cause: error,
        }),
      };
    }
    if (error instanceof HttpRetriableError) {
      const status = error.response.code;
      const retryAfter = retryAfterMsOf(error.response.headers);
      return {
        ok: false,
        executed: 'maybe',
        ...(retryAfter === undefined ? {} : { waitMs: retryAfter }),
        error: new ShopifyWriteError({
          operation,
          message: `${operation}: HTTP ${status} from Shopify`,
          retryable: true,
          status,
          cause: error,
        }),
      };
    }
    if (error instanceof HttpResponseError) {
      // 401 (token revoked), 402 (shop frozen), 403 (scope missing), 404 (shop gone), 423 (shop locked)...
      const status = error.response.code;
      return {
        ok: false,
        executed: 'no',
        error: new ShopifyWriteError({
          operation,
          message: `${operation}: HTTP ${status} from Shopify`,
          retryable: false,
          status,
          cause: error,
        }),
      };
    }
    if (error instanceof HttpRequestError) {
      // No answer at all: refused, reset, timed out. The mutation may or may not have been applied.
      return {
        ok: false,
        executed: 'maybe',
        error: new ShopifyWriteError({
          operation,
          message: `${operation}: no answer from Shopify`,
          retryable: true,
          cause: error,
        }),
      };
    }
    return {
      ok: false,
      executed: 'maybe',
      error: new ShopifyWriteError({
        operation,
        message: `${operation}: ${error instanceof Error ? error.message : String(error)}`,
        retryable: true,
        cause: error,
      }),
    };
  }

  /** No token to send: the call was not made. */
  private tokenFailure(operation: string, error: unknown): Attempt {
    const retryable = error instanceof AccessTokenError ? error.retryable : true;
    const message = `${operation}: ${error instanceof Error ? error.message : String(error)}`;
    return {
      ok: false,
      executed: 'no',
      error: new ShopifyWriteError({
        operation,
        message,
        retryable,
        ...(retryable ? {} : { status: 401 }),
        cause: error,
      }),
    };
  }

  private unexpected(operation: string, problem: z.ZodError): ShopifyWriteError {
    return new ShopifyWriteError({
      operation,
      message: `${operation}: unexpected answer from Shopify (${z.prettifyError(problem)})`,
      retryable: false,
    });
  }
}

// ---- helpers -----------------------------------------------------------------------------------------

const throttleStatusSchema = z.object({
  maximumAvailable: z.number(),
  currentlyAvailable: z.number(),
  restoreRate: z.number(),
});
const costSchema = z.object({ requestedQueryCost: z.number(), throttleStatus: throttleStatusSchema });

const graphqlErrorBody = z.object({
  errors: z.object({
    graphQLErrors: z
      .array(
        z
          .object({ message: z.string(), extensions: z.object({ code: z.string().optional() }).loose().optional() })
          .loose(),
      )
      .default([]),
  }),
  extensions: z.object({ cost: costSchema.optional() }).loose().optional(),
});

/** (requested - available) / restoreRate seconds: exactly when the bucket will hold enough points again. */
export function throttleWaitMs(cost: z.infer<typeof costSchema> | undefined): number {
  if (!cost || cost.throttleStatus.restoreRate <= 0) return DEFAULT_RETRY_AFTER_MS;
  const missing = cost.requestedQueryCost - cost.throttleStatus.currentlyAvailable;
  return Math.max(MIN_WAIT_MS, Math.ceil((missing / cost.throttleStatus.restoreRate) * 1000));
}

function backoffMs(attempt: number): number {
  return Math.min(250 * 2 ** (attempt - 1), 4_000);
}

/** Retry-After (seconds) from the library's canonicalised headers ({ 'Retry-After': ['2.0'] }). */
function retryAfterMsOf(headers: Record<string, unknown> | undefined): number | undefined {
  if (!headers) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'retry-after') continue;
    const raw = Array.isArray(value) ? value[0] : value;
    const seconds = typeof raw === 'string' || typeof raw === 'number' ? Number(raw) : Number.NaN;
    if (Number.isFinite(seconds) && seconds >= 0) return Math.max(MIN_WAIT_MS, Math.ceil(seconds * 1000));
  }
  return undefined;
}

const userErrorSchema = z.object({
  field: z.array(z.string()).nullable().optional(),
  message: z.string(),
  code: z.string().nullable().optional(),
});

/** Every userErrors list of every mutation field in the answer. */
function collectUserErrors(data: unknown): ShopifyUserError[] {
  if (typeof data !== 'object' || data === null) return [];
  const found: ShopifyUserError[] = [];
  for (const payload of Object.values(data)) {
    if (typeof payload !== 'object' || payload === null || !('userErrors' in payload)) continue;
    const parsed = z.array(userErrorSchema).safeParse((payload as { userErrors: unknown }).userErrors);
    if (!parsed.success) continue;
    for (const e of parsed.data)
      found.push({ field: e.field ?? null, message: e.message, ...(e.code ? { code: e.code } : {}) });
  }
  return found;
}

function describeUserError(error: ShopifyUserError): string {
  return error.field && error.field.length > 0 ? `${error.field.join('.')}: ${error.message}` : error.message;
}
