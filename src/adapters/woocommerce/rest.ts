/**
 * The WooCommerce REST client Relais uses (wc/v3): orders, order notes, products, variations and the
 * weight-unit setting, on top of @woocommerce/woocommerce-rest-api.
 *
 * Why a wrapper:
 *  - One private request path maps every failure to a WooApiError that answers the job's one question,
 *    "can a retry help?": 429, 408 and 5xx and network failures are retryable (with Retry-After when the
 *    shop sent one); any other 4xx is not, and carries WooCommerce's own `{code, message}`.
 *  - Credentials never leak. Over http the library signs with OAuth 1.0a in the query string, over https
 *    it sends Basic auth, and the axios errors it throws carry the whole request config (URL with
 *    `oauth_consumer_key`/`oauth_signature`, or `auth.password`). So axios is told never to throw on a
 *    status (`validateStatus`), network errors are rebuilt from their code alone, and every text kept
 *    from the shop or the network is scrubbed of the key, the secret and any OAuth/credential parameter.
 *    No error keeps the axios error as its cause.
 *  - Every answer is read with zod: a 200 whose body is not the resource asked for is an error, not a
 *    silent `undefined`.
 *
 * The library is CommonJS only: it is loaded with a dynamic import, once, on the first call.
 */
import { z } from 'zod';
import { parseRetryAfter } from '../dispatch-api/errors.js';
import { silentLogger, type Logger } from '../../log.js';
import {
  WooApiError,
  type WooOrderView,
  type WooNoteView,
  type WooProductView,
  type WooRefundView,
  type WooOrderPatch,
  type WooRest,
  type WooWebhookView,
  type WooSettingView,
  type WooOperatorRest,
  type WooOrderListQuery,
  type WooOrderListPage,
  type WooRestOptions,
  orderSchema,
  noteSchema,
  productSchema,
  refundSchema,
  settingSchema,
  wooErrorBodySchema,
  webhookSchema,
} from './rest-types.js';

// ---------------------------------------------------------------------------------------------------
// The library, typed as far as we use it

interface LibResponse {
  status: number;
  headers: Record<string, unknown>;
  data: unknown;
}
interface LibClient {
  get(endpoint: string, params?: Record<string, string>): Promise<LibResponse>;
  put(endpoint: string, data: unknown): Promise<LibResponse>;
  post(endpoint: string, data: unknown): Promise<LibResponse>;
}
type LibConstructor = new (options: {
  url: string;
  consumerKey: string;
  consumerSecret: string;
  version: 'wc/v3';
  timeout: number;
  axiosConfig: Record<string, unknown>;
}) => LibClient;

let libClass: Promise<LibConstructor> | undefined;

/** The package is CommonJS with `exports.default`: depending on the loader the class sits one level deeper. */
function loadLibrary(): Promise<LibConstructor> {
  libClass ??= import('@woocommerce/woocommerce-rest-api').then((mod: { default: unknown }) => {
    const outer = mod.default;
    const candidate = typeof outer === 'function' ? outer : (outer as { default?: unknown } | undefined)?.default;
    if (typeof candidate !== 'function') throw new Error('@woocommerce/woocommerce-rest-api exports no client class');
    return candidate as LibConstructor;
  });
  return libClass;
}

const NUMERIC_ID = /^\d+$/;

function idOf(value: string, what: string): string {
  if (!NUMERIC_ID.test(value)) throw new TypeError(`${what} must be a numeric WooCommerce id, got "${value}"`);
  return value;
}

/** Statuses a retry can help: the shop (or its proxy) saying "not now". */
export function isRetryableWooStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}

export function createWooRest(options: WooRestOptions): WooRest {
  return new WooRestClient(options);
}

/** The settings and webhook calls `relais doctor` makes, on the same request path (errors mapped and scrubbed). */
export function createWooOperatorRest(options: WooRestOptions): WooOperatorRest {
  return new WooRestClient(options);
}

/** A settings group or option id: letters, digits, _ and - only, so nothing else reaches the path. */
const SETTING_PART = /^[A-Za-z0-9_-]+$/;
/** WooCommerce's largest page; more webhooks than pages × this is far beyond what any shop registers. */
const WEBHOOK_PAGE_SIZE = 100;
const MAX_WEBHOOK_PAGES = 10;

class WooRestClient implements WooRest, WooOperatorRest {
  readonly #options: WooRestOptions;
  readonly #logger: Logger;
  #client: Promise<LibClient> | undefined;

  constructor(options: WooRestOptions) {
    this.#options = options;
    this.#logger = (options.logger ?? silentLogger).child({ component: 'woocommerce-rest' });
  }

  async getOrder(orderId: string): Promise<WooOrderView> {
    return this.#request('GET', `orders/${idOf(orderId, 'orderId')}`, orderSchema);
  }

  async updateOrder(orderId: string, patch: WooOrderPatch): Promise<WooOrderView> {
    return this.#request('PUT', `orders/${idOf(orderId, 'orderId')}`, orderSchema, patch);
  }

  async listOrderNotes(orderId: string): Promise<WooNoteView[]> {
    return this.#request('GET', `orders/${idOf(orderId, 'orderId')}/notes`, z.array(noteSchema));
  }

  async addOrderNote(orderId: string, note: string, customerNote: boolean): Promise<WooNoteView> {
    return this.#request('POST', `orders/${idOf(orderId, 'orderId')}/notes`, noteSchema, {
      note,
      customer_note: customerNote,
    });
  }

  async getProduct(productId: string): Promise<WooProductView> {
    return this.#request('GET', `products/${idOf(productId, 'productId')}`, productSchema);
  }

  async getVariation(productId: string, variationId: string): Promise<WooProductView> {
    return this.#request(
      'GET',
      `products/${idOf(productId, 'productId')}/variations/${idOf(variationId, 'variationId')}`,
      productSchema,
    );
  }

  async listOrders(query: WooOrderListQuery): Promise<WooOrderListPage> {
    if (!Number.isInteger(query.page) || query.page < 1) throw new RangeError('page must be a whole number from 1');
    if (!Number.isInteger(query.perPage) || query.perPage < 1 || query.perPage > 100)
      throw new RangeError('perPage must be a whole number from 1 to 100');
    // Ascending ids: orders created while paging land after the last page instead of shifting earlier ones.
    const params: Record<string, string> = {
      page: String(query.page),
      per_page: String(query.perPage),
      orderby: 'id',
      order: 'asc',
    };
    if (query.modifiedAfter) {
      params.modified_after = query.modifiedAfter.toISOString().replace(/\.\d{3}Z$/, '');
      params.dates_are_gmt = 'true';
    }
    const { data, headers } = await this.#exchange('GET', 'orders', z.array(z.unknown()), undefined, params);
    const totalPages = Number.parseInt(headerText(headers['x-wp-totalpages']) ?? '', 10);
    return {
      orders: data,
      totalPages: Number.isSafeInteger(totalPages) && totalPages >= 0 ? totalPages : data.length > 0 ? query.page : 0,
    };
  }

  async listOrderRefunds(orderId: string): Promise<WooRefundView[]> {
    const endpoint = `orders/${idOf(orderId, 'orderId')}/refunds`;
    const refunds: WooRefundView[] = [];
    for (let page = 1; ; page++) {
      const params = { page: String(page), per_page: '100' };
      const { data, headers } = await this.#exchange('GET', endpoint, z.array(refundSchema), undefined, params);
      refunds.push(...data);
      const totalPages = Number.parseInt(headerText(headers['x-wp-totalpages']) ?? '', 10);
      if (!Number.isSafeInteger(totalPages) || page >= totalPages || data.length === 0) return refunds;
    }
  }

  async getWeightUnit(): Promise<string> {
    const setting = await this.#request('GET', 'settings/products/woocommerce_weight_unit', settingSchema);
    if (typeof setting.value !== 'string') {
      throw new WooApiError({
        method: 'GET',
        endpoint: 'settings/products/woocommerce_weight_unit',
        kind: 'invalid_response',
        retryable: false,
        message: 'WooCommerce GET settings/products/woocommerce_weight_unit: the setting has no text value',
      });
    }
    return setting.value;
  }

  async getSetting(group: string, id: string): Promise<WooSettingView> {
    if (!SETTING_PART.test(group) || !SETTING_PART.test(id))
      return Promise.reject(new TypeError(`not a WooCommerce setting: "${group}/${id}"`));
    return this.#request('GET', `settings/${group}/${id}`, settingSchema);
  }

  async listWebhooks(): Promise<WooWebhookView[]> {
    const all: WooWebhookView[] = [];
    for (let page = 1; page <= MAX_WEBHOOK_PAGES; page++) {
      const params = {
        status: 'all',
        per_page: String(WEBHOOK_PAGE_SIZE),
        page: String(page),
        orderby: 'id',
        order: 'asc',
      };
      const { data } = await this.#exchange('GET', 'webhooks', z.array(webhookSchema), undefined, params);
      all.push(...data);
      if (data.length < WEBHOOK_PAGE_SIZE) break;
    }
    return all;
  }

  async createWebhook(input: {
    name: string;
    topic: string;
    delivery_url: string;
    secret: string;
  }): Promise<WooWebhookView> {
    return this.#request('POST', 'webhooks', webhookSchema, input);
  }

  async updateWebhook(
    id: number,
    patch: { status?: 'active' | 'paused' | 'disabled'; delivery_url?: string; secret?: string },
  ): Promise<WooWebhookView> {
    if (!Number.isSafeInteger(id) || id < 1)
      return Promise.reject(new TypeError(`webhook id must be a positive whole number, got ${id}`));
    return this.#request('PUT', `webhooks/${id}`, webhookSchema, patch);
  }

  /** The keys are revealed here only, to build the library's client. */
  #libClient(): Promise<LibClient> {
    this.#client ??= loadLibrary().then(
      (Lib) =>
        new Lib({
          url: this.#options.url,
          consumerKey: this.#options.consumerKey.reveal(),
          consumerSecret: this.#options.consumerSecret.reveal(),
          version: 'wc/v3',
          timeout: this.#options.timeoutMs ?? 10_000,
          // Spread last over the library's own options: only keys it does not set (never url, params, headers).
          axiosConfig: {
            // Every status resolves: the mapping below decides, and no axios error (with the signed URL) is thrown.
            validateStatus: () => true,
            // A redirect would be followed with a signature made for the first URL; report it instead.
            maxRedirects: 0,
          },
        }),
    );
    return this.#client;
  }

  async #request<T>(
    method: 'GET' | 'PUT' | 'POST',
    endpoint: string,
    schema: z.ZodType<T>,
    body?: unknown,
  ): Promise<T> {
    return (await this.#exchange(method, endpoint, schema, body)).data;
  }

  /** The one request path; also gives the answer's headers (listOrders reads X-WP-TotalPages) and sends query parameters. */
  async #exchange<T>(
    method: 'GET' | 'PUT' | 'POST',
    endpoint: string,
    schema: z.ZodType<T>,
    body?: unknown,
    params?: Record<string, string>,
  ): Promise<{ data: T; headers: Record<string, unknown> }> {
    const started = Date.now();
    const where = `WooCommerce ${method} ${endpoint}`;
    const client = await this.#libClient();
    let response: LibResponse;
    try {
      response =
        method === 'GET'
          ? await client.get(endpoint, params)
          : method === 'PUT'
            ? await client.put(endpoint, body)
            : await client.post(endpoint, body);
    } catch (error) {
      const failure = this.#networkError(method, endpoint, error);
      this.#logger.warn({ method, endpoint, kind: failure.kind, ms: Date.now() - started }, failure.message);
      throw failure;
    }
    const { status } = response;
    this.#logger.debug({ method, endpoint, status, ms: Date.now() - started }, 'woocommerce call');

    if (status >= 200 && status < 300) {
      const parsed = schema.safeParse(response.data);
      if (parsed.success) return { data: parsed.data, headers: response.headers };
      throw new WooApiError({
        method,
        endpoint,
        kind: 'invalid_response',
        retryable: false,
        status,
        message: `${where}: answered ${status} with a body that is not the expected resource (${parsed.error.issues[0]?.message ?? 'unreadable'})`,
      });
    }

    const wooError = wooErrorBodySchema.safeParse(response.data);
    const code = wooError.success ? this.#scrub(wooError.data.code) : undefined;
    const detail = wooError.success
      ? this.#scrub(stripTags(wooError.data.message))
      : status >= 300 && status < 400
        ? 'a redirect (check the store URL: http or https, www or not)'
        : 'no WooCommerce error body';
    const retryable = isRetryableWooStatus(status);
    const retryAfterMs = retryable ? parseRetryAfter(headerText(response.headers['retry-after'])) : undefined;
    const failure = new WooApiError({
      method,
      endpoint,
      kind: 'http',
      status,
      retryable,
      message: `${where}: answered ${status}${code ? ` ${code}` : ''}: ${detail}`,
      ...(code === undefined ? {} : { code }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
    this.#logger.warn({ method, endpoint, status, code, retryable }, failure.message);
    throw failure;
  }

  #networkError(method: string, endpoint: string, error: unknown): WooApiError {
    const code = (error as { code?: unknown } | undefined)?.code;
    const codeText = typeof code === 'string' && /^[A-Z_]+$/.test(code) ? code : 'unknown';
    const timedOut = codeText === 'ECONNABORTED' || codeText === 'ETIMEDOUT';
    // Built from the error code only: axios messages and configs may carry the signed URL.
    return new WooApiError({
      method,
      endpoint,
      kind: timedOut ? 'timeout' : 'network',
      retryable: true,
      message: timedOut
        ? `WooCommerce ${method} ${endpoint}: no answer within ${this.#options.timeoutMs ?? 10_000} ms`
        : `WooCommerce ${method} ${endpoint}: network error (${codeText})`,
    });
  }

  /** Removes the key, the secret and any credential parameter from a text the shop or the network gave us. */
  #scrub(text: string): string {
    return scrubCredentials(text, [this.#options.consumerKey.reveal(), this.#options.consumerSecret.reveal()]);
  }
}

/** Credential query parameters (OAuth 1.0a and WooCommerce's query-string auth) and the given secret values, replaced. */
export function scrubCredentials(text: string, secrets: readonly string[]): string {
  let out = text.replace(/((?:oauth_[a-z_]+|consumer_key|consumer_secret)=)[^&\s"'<>]*/gi, '$1[redacted]');
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out;
}

function stripTags(text: string): string {
  return text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}
