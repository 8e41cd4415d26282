/**
 * The Shopify Admin GraphQL client Relais writes back with: typed operations (what the writer, the order lister
 * and the doctor call) over one request path per shop.
 *
 *  - admin-request.ts: the request path: the library's GraphQL client, the access token and its renewal after a
 *    401, the routing to a local emulator, the bounded retries and the handing back to the queue.
 *  - admin-classify.ts: what an answer or a thrown error means (userErrors, THROTTLED, 429, 5xx, no answer).
 *  - admin-throttle.ts: how long to wait, and the shop's rate budget shared by every worker.
 *  - admin-documents.ts: the GraphQL documents sent and the shapes of the answers read back.
 *  - admin-errors.ts: ShopifyWriteError, the one error every call throws.
 */
import type { ShopifyShopConfig } from './settings.js';
import { z } from 'zod';
import type { StoreDeps } from '../../shops/platforms/platform.js';
import { accessTokenSourceFor } from './token-sources.js';
import {
  ADMIN_DOCUMENTS,
  fulfillmentCreated,
  orderStateSchema,
  type FulfillmentEventStatus,
  type ShopifyOrderState,
} from './admin-documents.js';
import { unexpectedAnswer } from './admin-classify.js';
import { ShopifyAdminRequester, type RequestOptions, type ShopifyAdminOptions } from './admin-request.js';
import { RedisShopRateBudget } from './rate-budget.js';

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

export class ShopifyAdminClient {
  readonly domain: string;
  readonly apiVersion: string;
  readonly #requests: ShopifyAdminRequester;

  constructor(options: ShopifyAdminOptions) {
    this.#requests = new ShopifyAdminRequester(options);
    this.domain = this.#requests.domain;
    this.apiVersion = this.#requests.apiVersion;
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
    if (!parsed.success) throw unexpectedAnswer('orderState', parsed.error);
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
    if (!parsed.success) throw unexpectedAnswer('fulfillmentCreate', parsed.error);
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

  /** Every operation goes through the shop's one request path (admin-request.ts). */
  private request(query: string, variables: Record<string, unknown>, options: RequestOptions): Promise<unknown> {
    return this.#requests.request(query, variables, options);
  }
}
