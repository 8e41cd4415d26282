/**
 * The dispatch client: the twelve operations of the dispatch service (spec section 4), nothing more.
 *
 * - Every call goes through one private request() (http.ts): base URL, X-Api-Key, time budget, JSON, error
 *   mapping. Public operations (trackByCode, simulatePrice) go to the tracking host and send no key.
 * - Every answer is read through the zod readers of wire.ts: both spellings, unknown fields ignored; an answer
 *   that is not the resource is a non-retryable DispatchError of kind 'invalid_response'.
 * - The client never retries: the job that called it decides, using `DispatchError.retryable`.
 * - The API key lives in a private field of the transport and never reaches a message, a log or JSON.
 * - Programmer errors (an empty id, a page size of 500) throw TypeError/RangeError before any call.
 */
import { inspect } from 'node:util';
import { silentLogger, type Logger } from '../../log.js';
import { DispatchConfigError, DispatchError } from './errors.js';
import {
  checkApiKey,
  checkBaseUrl,
  requireObject,
  requirePageSize,
  requirePositiveNumber,
  requireText,
} from './client-checks.js';
import { DispatchHttp, type CallOptions } from './http.js';
export { SANDBOX_KEY_MESSAGE } from './client-checks.js';
import {
  LIST_MAX_LIMIT,
  paths,
  wireReaders,
  type WireCancelRequest,
  type WireClaim,
  type WireCreateShipmentRequest,
  type WireOpenDisputeRequest,
  type WirePriceSimulation,
  type WireQuote,
  type WireQuoteRequest,
  type WireShipment,
  type WireShipmentList,
  type WireSimulatePriceRequest,
  type WireReaders,
  type WireTrackingView,
} from './wire.js';
import { defaultWireProfile, type WireProfile } from './profile.js';

export type { CallOptions } from './http.js';

export interface DispatchClientOptions {
  /** The authenticated gateway, e.g. https://api.example.com (paths add /v1/...). */
  baseUrl: string;
  /** The public tracking host; defaults to baseUrl (spec: "It may be the same host"). */
  trackingUrl?: string;
  /** A live key (pk_live_...). Sandbox keys (pk_test_...) are refused here, before any call. */
  apiKey: string;
  /** Time budget of one whole call. Default 10 s. */
  timeoutMs?: number;
  logger?: Logger;
  userAgent?: string;
  /** The service's names (states, error codes, spellings): the shop's wire profile; default: today's guesses. */
  profile?: WireProfile;
}

export interface ListShipmentsQuery {
  /** A shipment state (spec 3.5), e.g. DELIVERED. */
  status?: string;
  /** next_cursor of the previous page. */
  cursor?: string;
  /** 1..100, default 20 on the service side. */
  limit?: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_USER_AGENT = 'relais-dispatch-client/0.1';

export class DispatchClient {
  readonly baseUrl: string;
  readonly trackingUrl: string;
  readonly profile: WireProfile;
  readonly #http: DispatchHttp;
  readonly #read: WireReaders;

  constructor(options: DispatchClientOptions) {
    const logger = (options.logger ?? silentLogger).child({ component: 'dispatch-client' });
    const apiKey = checkApiKey(options.apiKey, logger);
    const baseUrl = checkBaseUrl(options.baseUrl, 'baseUrl');
    const trackingUrl = options.trackingUrl === undefined ? baseUrl : checkBaseUrl(options.trackingUrl, 'trackingUrl');
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
      throw new DispatchConfigError('dispatch timeoutMs must be a positive number');
    this.baseUrl = baseUrl.href.replace(/\/+$/, '');
    this.trackingUrl = trackingUrl.href.replace(/\/+$/, '');
    this.profile = options.profile ?? defaultWireProfile();
    this.#read = wireReaders(this.profile);
    this.#http = new DispatchHttp({
      profile: this.profile,
      apiKey,
      baseUrl,
      trackingUrl,
      timeoutMs,
      userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
      logger,
    });
  }

  /** Prices a delivery; the price is firm until the quote's expiresAt. */
  createQuote(request: WireQuoteRequest, options?: CallOptions): Promise<WireQuote> {
    requireObject(request, 'quote request');
    if (request.parcel?.weight_kg !== undefined) requirePositiveNumber(request.parcel.weight_kg, 'parcel.weight_kg');
    // The field that carries the payment mode is "not shown" in the spec: the profile names it.
    const { payment_mode: paymentMode, ...rest } = request;
    const body =
      paymentMode === undefined ? rest : { ...rest, [this.profile.document.requests.paymentModeField]: paymentMode };
    return this.#http.request(
      { operation: 'createQuote', method: 'POST', path: paths.quotes, body, read: this.#read.quote },
      options,
    );
  }

  /** Rereads a quote. The service answers 404 once it has expired. */
  getQuote(quoteId: string, options?: CallOptions): Promise<WireQuote> {
    requireText(quoteId, 'quoteId');
    return this.#http.request(
      { operation: 'getQuote', method: 'GET', path: paths.quote(quoteId), read: this.#read.quote },
      options,
    );
  }

  /** Creates a shipment from a quote. Writes `orderAmountXof` as the spec spells it. */
  createShipment(request: WireCreateShipmentRequest, options?: CallOptions): Promise<WireShipment> {
    requireObject(request, 'shipment request');
    requireText(request.quote_id, 'quote_id');
    requireText(request.external_order_id, 'external_order_id');
    // Whole francs only (spec section 1): a fraction here means someone divided by 100 or forgot to convert.
    if (request.orderAmountXof !== undefined && !Number.isSafeInteger(request.orderAmountXof)) {
      throw new RangeError('orderAmountXof must be a whole number of XOF francs');
    }
    const body: WireCreateShipmentRequest = {
      quote_id: request.quote_id,
      external_order_id: request.external_order_id,
      ...(request.orderAmountXof === undefined ? {} : { orderAmountXof: request.orderAmountXof }),
    };
    return this.#http.request(
      { operation: 'createShipment', method: 'POST', path: paths.shipments, body, read: this.#read.shipment },
      options,
    );
  }

  getShipment(shipmentId: string, options?: CallOptions): Promise<WireShipment> {
    requireText(shipmentId, 'shipmentId');
    return this.#http.request(
      { operation: 'getShipment', method: 'GET', path: paths.shipment(shipmentId), read: this.#read.shipment },
      options,
    );
  }

  /** One page of the organisation's shipments. Pass `nextCursor` back as `cursor` for the next page. */
  listShipments(query: ListShipmentsQuery = {}, options?: CallOptions): Promise<WireShipmentList> {
    if (query.status !== undefined) requireText(query.status, 'status');
    if (query.cursor !== undefined) requireText(query.cursor, 'cursor');
    if (query.limit !== undefined) requirePageSize(query.limit, 'limit');
    return this.#http.request(
      {
        operation: 'listShipments',
        method: 'GET',
        path: paths.shipments,
        query: { status: query.status, cursor: query.cursor, limit: query.limit },
        read: this.#read.shipmentList,
      },
      options,
    );
  }

  /** Every shipment matching the filter, page after page, following next_cursor until there is none. */
  async *iterateShipments(
    query: { status?: string; pageSize?: number } = {},
    options?: CallOptions,
  ): AsyncGenerator<WireShipment, void, undefined> {
    if (query.pageSize !== undefined) requirePageSize(query.pageSize, 'pageSize');
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await this.listShipments({ status: query.status, cursor, limit: query.pageSize }, options);
      yield* page.shipments;
      cursor = page.nextCursor || undefined;
      // A service that hands back a cursor it already gave would make this loop forever.
      if (cursor !== undefined) {
        if (seen.has(cursor)) {
          throw new DispatchError({
            operation: 'listShipments',
            kind: 'invalid_response',
            retryable: false,
            message: 'dispatch listShipments: next_cursor repeats an earlier cursor',
          });
        }
        seen.add(cursor);
      }
    } while (cursor !== undefined);
  }

  /**
   * The most recent shipment carrying this external order id, or undefined when there is none: the duplicate
   * guard before createShipment, so "none" is answered only when the service has shown it.
   *
   * The spec documents this operation's answer (a Shipment) and nothing else: no 404, no code for one. So:
   *  - a 404 the profile reads as `shipment_not_found` is "none";
   *  - a 404 that carries no code the profile knows of at all (a bare 404, a body without a code) is confirmed
   *    with listShipments: the first LOOKUP_SCAN_PAGES pages of 100 are searched for the external order id. A
   *    shipment found is answered; a listing that ends within them without it is "none"; a listing longer than
   *    that proves nothing and is thrown as a retryable error (maybe it exists: look again, never create blind);
   *  - a 404 the profile reads as `route_not_found` (a wrong base URL, a gateway without this path) is thrown
   *    as it came;
   *  - any other 404 (a code meaning something else, or a code the profile does not know) is thrown as a
   *    retryable error: it does not say there is no shipment.
   */
  async getShipmentByExternalOrder(externalOrderId: string, options?: CallOptions): Promise<WireShipment | undefined> {
    requireText(externalOrderId, 'externalOrderId');
    try {
      return await this.#http.request(
        {
          operation: 'getShipmentByExternalOrder',
          method: 'GET',
          path: paths.shipmentByExternalOrder(externalOrderId),
          read: this.#read.shipment,
        },
        options,
      );
    } catch (error) {
      if (!(error instanceof DispatchError) || error.kind !== 'http' || error.status !== 404) throw error;
      if (error.meaning === 'shipment_not_found') return undefined;
      if (error.meaning === 'route_not_found') throw error;
      if (error.meaning === undefined && error.code === undefined)
        return this.#scanForExternalOrder(externalOrderId, error, options);
      const said = [error.code && `code ${error.code}`, error.meaning && `read as ${error.meaning}`]
        .filter(Boolean)
        .join(', ');
      throw maybeExists(error, `a 404 (${said}) does not say there is no such shipment`);
    }
  }

  /** The "none" of a bare 404, confirmed by listing the organisation's shipments (see getShipmentByExternalOrder). */
  async #scanForExternalOrder(
    externalOrderId: string,
    notFound: DispatchError,
    options?: CallOptions,
  ): Promise<WireShipment | undefined> {
    let cursor: string | undefined;
    let found: WireShipment | undefined;
    for (let page = 0; page < LOOKUP_SCAN_PAGES; page++) {
      const listed = await this.listShipments(
        { limit: LIST_MAX_LIMIT, ...(cursor === undefined ? {} : { cursor }) },
        options,
      );
      // The most recent match: the latest created, else the last listed.
      for (const shipment of listed.shipments) {
        if (shipment.externalOrderId !== externalOrderId) continue;
        if (!found || (shipment.createdAt ?? '') >= (found.createdAt ?? '')) found = shipment;
      }
      cursor = listed.nextCursor || undefined;
      if (found || cursor === undefined) return found;
    }
    throw maybeExists(
      notFound,
      `a 404 without a code, and the first ${LOOKUP_SCAN_PAGES * LIST_MAX_LIMIT} shipments listed do not settle whether one exists`,
    );
  }

  /** Puts the run into the assignment queue. Until this is called no courier is ever offered the shipment. */
  markReady(shipmentId: string, by: string, options?: CallOptions): Promise<WireShipment> {
    requireText(shipmentId, 'shipmentId');
    requireText(by, 'by');
    return this.#http.request(
      {
        operation: 'markReady',
        method: 'POST',
        path: paths.markReady(shipmentId),
        body: { by },
        read: this.#read.shipment,
      },
      options,
    );
  }

  /** Accepted only while the parcel has not been picked up. */
  cancelShipment(shipmentId: string, request: WireCancelRequest, options?: CallOptions): Promise<WireShipment> {
    requireText(shipmentId, 'shipmentId');
    requireObject(request, 'cancel request');
    requireText(request.reason, 'reason');
    requireText(request.by, 'by');
    return this.#http.request(
      {
        operation: 'cancelShipment',
        method: 'POST',
        path: paths.cancel(shipmentId),
        body: { reason: request.reason, by: request.by },
        read: this.#read.shipment,
      },
      options,
    );
  }

  /** Opens a claim; the shipment's settlement is held until the claim is decided. */
  openDispute(shipmentId: string, request: WireOpenDisputeRequest, options?: CallOptions): Promise<WireClaim> {
    requireText(shipmentId, 'shipmentId');
    requireObject(request, 'dispute request');
    requireText(request.reason, 'reason');
    requireText(request.description, 'description');
    requireText(request.claimant_id, 'claimant_id');
    if (request.claimant_type !== undefined) requireText(request.claimant_type, 'claimant_type');
    const body: WireOpenDisputeRequest = {
      reason: request.reason,
      description: request.description,
      claimant_id: request.claimant_id,
      ...(request.claimant_type === undefined ? {} : { claimant_type: request.claimant_type }),
    };
    return this.#http.request(
      { operation: 'openDispute', method: 'POST', path: paths.openDispute(shipmentId), body, read: this.#read.claim },
      options,
    );
  }

  /** The shipment's claims, decided ones included; an empty list means no dispute. */
  listShipmentDisputes(shipmentId: string, options?: CallOptions): Promise<WireClaim[]> {
    requireText(shipmentId, 'shipmentId');
    return this.#http.request(
      {
        operation: 'listShipmentDisputes',
        method: 'GET',
        path: paths.disputes(shipmentId),
        read: this.#read.claimList,
      },
      options,
    );
  }

  /** Public: the anonymous tracking view behind a 10-character code. Sent to the tracking host, with no key. */
  trackByCode(trackingCode: string, options?: CallOptions): Promise<WireTrackingView> {
    requireText(trackingCode, 'trackingCode');
    return this.#http.request(
      {
        operation: 'trackByCode',
        method: 'GET',
        path: paths.tracking(trackingCode),
        public: true,
        read: this.#read.trackingView,
      },
      options,
    );
  }

  /** Public: an indicative price by neighbourhood; nothing is reserved. Sent to the tracking host, with no key. */
  simulatePrice(request: WireSimulatePriceRequest, options?: CallOptions): Promise<WirePriceSimulation> {
    requireObject(request, 'price simulation request');
    requireText(request.pickup_city, 'pickup_city');
    requireText(request.dropoff_city, 'dropoff_city');
    if (request.weight_kg !== undefined) requirePositiveNumber(request.weight_kg, 'weight_kg');
    return this.#http.request(
      {
        operation: 'simulatePrice',
        method: 'POST',
        path: paths.simulatePrice,
        body: request,
        public: true,
        read: this.#read.priceSimulation,
      },
      options,
    );
  }

  /** Closes the keep-alive connections. The client cannot be used afterwards. */
  async close(): Promise<void> {
    this.#http.close();
  }

  /** What JSON.stringify and logs see: where the client points, never its key. */
  toJSON(): { baseUrl: string; trackingUrl: string } {
    return { baseUrl: this.baseUrl, trackingUrl: this.trackingUrl };
  }

  [inspect.custom](): string {
    return `DispatchClient { baseUrl: '${this.baseUrl}', trackingUrl: '${this.trackingUrl}' }`;
  }
}

/** How many pages of listShipments confirm a bare 404 of getShipmentByExternalOrder. */
export const LOOKUP_SCAN_PAGES = 3;

/** An answer that does not settle whether the order's shipment exists: retryable, so the caller looks again. */
function maybeExists(cause: DispatchError, why: string): DispatchError {
  return new DispatchError({
    operation: 'getShipmentByExternalOrder',
    kind: 'http',
    ...(cause.status === undefined ? {} : { status: cause.status }),
    ...(cause.code === undefined ? {} : { code: cause.code }),
    retryable: true,
    message: `dispatch getShipmentByExternalOrder: the shipment may exist (${why}); looking again before creating one`,
    cause,
  });
}
