/**
 * The two REST Admin reads a reconciliation job may use, with Shopify's REST conventions:
 *   GET /admin/api/{version}/orders/{id}.json   → {"order": {...}}        (404 {"errors":"Not Found"})
 *   GET /admin/api/{version}/orders.json        → {"orders": [...]}       newest first, cursor pagination
 * `orders.json` takes limit (default 50, at most 250), status (open by default, any, closed, cancelled),
 * financial_status, fulfillment_status (shipped, partial, unshipped, any), ids, since_id,
 * created_at_min/max, updated_at_min/max and fields; the next page is announced in a `Link` header with a
 * `page_info` cursor, which may only be combined with `limit` and `fields`.
 * REST has its own rate limit: a bucket of 40 calls leaking 2 per second, reported in
 * X-Shopify-Shop-Api-Call-Limit, and 429 with Retry-After when full.
 */
import { displayFulfillmentStatus, type StoredOrder } from './model.js';
import type { ShopStore } from './store.js';
import { CostBucket } from './throttle.js';

export const REST_BUCKET = { maximumAvailable: 40, restoreRate: 2 };

export interface RestAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

const PAGE_INFO_ONLY = new Set(['page_info', 'limit', 'fields']);

export function restBucket(clock: () => number): CostBucket {
  return new CostBucket(REST_BUCKET, clock);
}

export function answerRest(
  method: string,
  path: string,
  query: URLSearchParams,
  store: ShopStore,
  bucket: CostBucket,
  apiVersion: string,
): RestAnswer {
  if (!bucket.tryTake(1)) {
    return {
      status: 429,
      body: {
        errors: 'Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.',
      },
      headers: { 'Retry-After': '2.0', 'X-Shopify-Shop-Api-Call-Limit': callLimit(bucket) },
    };
  }
  const headers = { 'X-Shopify-Shop-Api-Call-Limit': callLimit(bucket) };
  if (method !== 'GET') return { status: 405, body: { errors: 'Method Not Allowed' }, headers };
  const single = /^\/orders\/(\d+)\.json$/.exec(path);
  if (single) {
    const order = store.order(Number(single[1]));
    if (!order) return { status: 404, body: { errors: 'Not Found' }, headers };
    return { status: 200, body: { order: pick(store.restForApp(order), query.get('fields')) }, headers };
  }
  if (path === '/orders.json') return listOrders(query, store, apiVersion, headers);
  return { status: 404, body: { errors: 'Not Found' }, headers };
}

function callLimit(bucket: CostBucket): string {
  const status = bucket.status();
  return `${status.maximumAvailable - status.currentlyAvailable}/${status.maximumAvailable}`;
}

interface ListFilters {
  status: string;
  financial_status?: string;
  fulfillment_status?: string;
  ids?: number[];
  since_id?: number;
  created_at_min?: number;
  created_at_max?: number;
  updated_at_min?: number;
  updated_at_max?: number;
}

interface PageInfo {
  filters: ListFilters;
  /** The last order of the previous page: continue strictly after it (created_at desc, id desc). */
  after: { createdAt: number; id: number };
}

function listOrders(
  query: URLSearchParams,
  store: ShopStore,
  apiVersion: string,
  headers: Record<string, string>,
): RestAnswer {
  const limit = query.has('limit') ? Number(query.get('limit')) : 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 250) {
    return { status: 400, body: { errors: { limit: 'Limit must be between 1 and 250' } }, headers };
  }
  let filters: ListFilters;
  let after: PageInfo['after'] | undefined;
  const pageInfo = query.get('page_info');
  if (pageInfo) {
    const extra = [...query.keys()].filter((key) => !PAGE_INFO_ONLY.has(key));
    if (extra.length > 0) {
      return {
        status: 400,
        body: { errors: { page_info: `page_info cannot be combined with ${extra.join(', ')}` } },
        headers,
      };
    }
    const decoded = decodePageInfo(pageInfo);
    if (!decoded) return { status: 400, body: { errors: { page_info: 'Invalid value.' } }, headers };
    ({ filters, after } = decoded);
  } else {
    const parsed = filtersOf(query);
    if (typeof parsed === 'string') return { status: 400, body: { errors: { [parsed]: 'Invalid value.' } }, headers };
    filters = parsed;
  }
  const matching = [...store.orders.values()]
    .filter((order) => matches(order, filters))
    .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id)
    .filter(
      (order) =>
        !after || order.createdAt < after.createdAt || (order.createdAt === after.createdAt && order.id < after.id),
    );
  const page = matching.slice(0, limit);
  const last = page.at(-1);
  if (matching.length > limit && last) {
    const cursor = encodePageInfo({ filters, after: { createdAt: last.createdAt, id: last.id } });
    const fields = query.get('fields');
    const next = new URLSearchParams({ limit: String(limit), page_info: cursor, ...(fields ? { fields } : {}) });
    headers['Link'] =
      `<https://${store.shop.domain}/admin/api/${apiVersion}/orders.json?${next.toString()}>; rel="next"`;
  }
  return {
    status: 200,
    body: { orders: page.map((order) => pick(store.restForApp(order), query.get('fields'))) },
    headers,
  };
}

function filtersOf(query: URLSearchParams): ListFilters | string {
  const filters: ListFilters = { status: query.get('status') ?? 'open' };
  if (!['open', 'closed', 'cancelled', 'any'].includes(filters.status)) return 'status';
  const financial = query.get('financial_status');
  if (financial && financial !== 'any') filters.financial_status = financial;
  const fulfillment = query.get('fulfillment_status');
  if (fulfillment && fulfillment !== 'any') filters.fulfillment_status = fulfillment;
  const ids = query.get('ids');
  if (ids) {
    filters.ids = ids.split(',').map((id) => Number(id.trim()));
    if (filters.ids.some((id) => !Number.isSafeInteger(id))) return 'ids';
  }
  const sinceId = query.get('since_id');
  if (sinceId) {
    filters.since_id = Number(sinceId);
    if (!Number.isSafeInteger(filters.since_id)) return 'since_id';
  }
  for (const key of ['created_at_min', 'created_at_max', 'updated_at_min', 'updated_at_max'] as const) {
    const value = query.get(key);
    if (value) {
      const time = Date.parse(value);
      if (Number.isNaN(time)) return key;
      filters[key] = time;
    }
  }
  return filters;
}

function matches(order: StoredOrder, filters: ListFilters): boolean {
  if (filters.status === 'open' && (order.closedAt !== null || order.cancelledAt !== null)) return false;
  if (filters.status === 'closed' && order.closedAt === null) return false;
  if (filters.status === 'cancelled' && order.cancelledAt === null) return false;
  if (filters.financial_status && order.financialStatus !== filters.financial_status) return false;
  if (filters.fulfillment_status) {
    const status = displayFulfillmentStatus(order);
    const wanted = {
      shipped: 'FULFILLED',
      partial: 'PARTIALLY_FULFILLED',
      unshipped: 'UNFULFILLED',
      unfulfilled: 'UNFULFILLED',
    }[filters.fulfillment_status];
    if (wanted !== undefined && status !== wanted) return false;
  }
  if (filters.ids && !filters.ids.includes(order.id)) return false;
  if (filters.since_id !== undefined && order.id <= filters.since_id) return false;
  if (filters.created_at_min !== undefined && order.createdAt < filters.created_at_min) return false;
  if (filters.created_at_max !== undefined && order.createdAt > filters.created_at_max) return false;
  if (filters.updated_at_min !== undefined && order.updatedAt < filters.updated_at_min) return false;
  if (filters.updated_at_max !== undefined && order.updatedAt > filters.updated_at_max) return false;
  return true;
}

function pick(body: Record<string, unknown>, fields: string | null): Record<string, unknown> {
  if (!fields) return body;
  const wanted = fields.split(',').map((field) => field.trim());
  return Object.fromEntries(wanted.filter((field) => field in body).map((field) => [field, body[field]]));
}

function encodePageInfo(info: PageInfo): string {
  return Buffer.from(JSON.stringify(info)).toString('base64url');
}

function decodePageInfo(value: string): PageInfo | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Partial<PageInfo>;
    if (
      parsed.filters &&
      typeof parsed.filters.status === 'string' &&
      parsed.after &&
      typeof parsed.after.id === 'number' &&
      typeof parsed.after.createdAt === 'number'
    ) {
      return { filters: parsed.filters, after: parsed.after };
    }
  } catch {
    // fall through
  }
  return undefined;
}
