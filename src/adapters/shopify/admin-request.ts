/**
 * The one request path of the Shopify Admin client (admin.ts): @shopify/shopify-api's own GraphQL client, one per
 * shop, sending a document and trying again as far as the answer allows (admin-classify.ts says what an answer
 * means, admin-throttle.ts how long to wait).
 *
 *  - A bounded number of attempts in process, each wait bounded too; past that a retryable ShopifyWriteError
 *    (`retryable: true`, `retryAfterMs`) lets the BullMQ job retry later instead of holding a worker slot.
 *  - A mutation that got a 5xx or no answer may have been applied. Only operations safe to repeat blindly
 *    (queries, and mutations marked `repeatable`) are retried in process after such a failure; the others fail
 *    as retryable at once, so the job runs again and the writer reads the shop before writing anything.
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
import '@shopify/shopify-api/adapters/node';
import {
  ApiVersion,
  GraphqlQueryError,
  HttpResponseError,
  LogSeverity,
  Session,
  shopifyApi,
  type GraphqlClient,
} from '@shopify/shopify-api';
import { Secret } from '../../shops/secret.js';
import type { Logger } from '../../log.js';
import { StaticAccessToken, type AccessTokenSource } from './access-token.js';
import { buildWithFetch, fetchRoutedTo } from './admin-routing.js';
import { classifyAnswer, classifyThrown, classifyTokenFailure, type Attempt } from './admin-classify.js';
import { ShopifyWriteError } from './admin-errors.js';
import { backoffMs, BudgetGate } from './admin-throttle.js';
import type { BudgetTicket, ShopRateBudget } from './rate-budget.js';

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

export const DEFAULT_ADMIN_API_VERSION = '2026-10';
const DEFAULT_MAX_ATTEMPTS = 4;
const DEFAULT_MAX_WAIT_MS = 5_000;
const DEFAULT_TIMEOUT_MS = 15_000;

const KNOWN_VERSIONS: ReadonlySet<string> = new Set(Object.values(ApiVersion));

export interface RequestOptions {
  /** A name for logs and errors (the GraphQL operation). */
  operation: string;
  /** True when sending it twice has the same effect as once (queries; setting a value). */
  repeatable: boolean;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Sends GraphQL documents to one shop's Admin API, trying again as far as each answer allows. */
export class ShopifyAdminRequester {
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
  readonly #gate: BudgetGate;

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
    this.#gate = new BudgetGate({
      budget: options.budget,
      maxWaitMs: this.#maxWaitMs,
      maxAttempts: this.#maxAttempts,
      sleep: this.#sleep,
      onBudgetWait: options.onBudgetWait,
    });
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

  /**
   * One line per retry series at info or above, not one per call (a burst of throttled calls made thousands):
   * each retry is at debug; a series that succeeds after retries says so once, with the attempts and the time
   * waited; one handed back to the queue says so once, as a warning. `shopDomain`, not `shop`: loggers of
   * this client are children bound to the shop id as `shop`, and a key twice in one JSON line is ambiguous.
   */
  async request(query: string, variables: Record<string, unknown>, options: RequestOptions): Promise<unknown> {
    let waitedMs = 0;
    let lastError: string | undefined;
    for (let attempt = 1; ; attempt += 1) {
      const budget = await this.#gate.take(options.operation);
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
      await this.#gate.settle(ticket, operation, extensions);
    };
    try {
      return await this.attemptCall(query, variables, operation, settle);
    } finally {
      await settle(undefined);
    }
  }

  /** One call with the current token, once more with a renewed one after a 401; then what the answer means. */
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
      return classifyTokenFailure(operation, error);
    }
    try {
      response = await send(token);
    } catch (error) {
      if (!(error instanceof HttpResponseError) || error.response.code !== 401) return classifyThrown(operation, error);
      let renewed: Secret | undefined;
      try {
        renewed = await this.#tokens.afterUnauthorized(token);
      } catch (tokenError) {
        return classifyTokenFailure(operation, tokenError);
      }
      if (renewed === undefined) return classifyThrown(operation, error);
      try {
        response = await send(renewed);
      } catch (again) {
        return classifyThrown(operation, again);
      }
    }
    await settle(response.extensions);
    return classifyAnswer(operation, response.data);
  }
}
