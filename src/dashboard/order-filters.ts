/**
 * The orders page's filters, as query parameters: read from a request, and written into the links of the
 * overview's figures (so every figure opens the orders behind it). One module for both, so a link and the page
 * it opens always agree on what a parameter means.
 */
import { z } from 'zod';
import { ORDER_STATES, type OrderState } from '../domain/order-state.js';
import { STATE_GROUPS, type OrderFilter, type StateGroup } from '../ledger/order-insights.js';

/** What the page was asked for, beyond the shop. */
export interface OrdersQuery {
  /** '' = every shop Relais serves. */
  shop: string;
  state?: OrderState;
  group?: StateGroup;
  /** Received in the last N days, when no `from`/`to` is given. */
  days: number;
  from?: string;
  to?: string;
  dated?: 'received' | 'changed';
  neighbourhood?: string;
  hold?: string;
  /** Only orders with cash to collect. */
  cash?: boolean;
}

export const ORDER_DAYS = [1, 7, 30, 90];
const DAY = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

const querySchema = z.object({
  state: z.enum(ORDER_STATES).optional(),
  group: z.enum(Object.keys(STATE_GROUPS) as [StateGroup, ...StateGroup[]]).optional(),
  days: z.coerce
    .number()
    .int()
    .refine((d) => ORDER_DAYS.includes(d))
    .optional(),
  from: DAY.optional(),
  to: DAY.optional(),
  dated: z.enum(['received', 'changed']).optional(),
  neighbourhood: z.string().min(1).max(200).optional(),
  hold: z.string().min(1).max(100).optional(),
  cash: z.literal('1').optional(),
});

/** The query's filters; a parameter that does not parse is left out (the page then shows more, never an error). */
export function readOrdersQuery(query: Record<string, unknown>, shop: string): OrdersQuery {
  const read: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(querySchema.shape)) {
    const value = query[key] === '' ? undefined : query[key];
    const parsed = (schema as z.ZodType).safeParse(value);
    if (parsed.success && parsed.data !== undefined) read[key] = parsed.data;
  }
  const { days, cash, ...rest } = read as z.output<typeof querySchema>;
  return { ...rest, shop, days: days ?? 30, ...(cash ? { cash: true } : {}) };
}

/** The ledger filter for the query, over these shops. */
export function orderFilter(query: OrdersQuery, shops: OrderFilter['shops'], now: Date, limit: number): OrderFilter {
  const states = query.state ? [query.state] : query.group ? STATE_GROUPS[query.group] : undefined;
  const dated = query.from || query.to;
  return {
    shops,
    limit,
    ...(dated ? {} : { since: new Date(now.getTime() - query.days * 86_400_000) }),
    ...(query.from ? { from: query.from } : {}),
    ...(query.to ? { to: query.to } : {}),
    ...(query.dated ? { dated: query.dated } : {}),
    ...(states ? { states } : {}),
    ...(query.neighbourhood ? { neighbourhood: query.neighbourhood } : {}),
    ...(query.hold ? { holdCode: query.hold } : {}),
    ...(query.cash ? { collectsCash: true } : {}),
  };
}

/** The orders page showing these orders. */
export function ordersHref(query: Partial<OrdersQuery>): string {
  const params = new URLSearchParams();
  for (const key of ['shop', 'state', 'group', 'from', 'to', 'dated', 'neighbourhood', 'hold'] as const) {
    const value = query[key];
    if (value) params.set(key, value);
  }
  if (query.days !== undefined && !query.from && !query.to) params.set('days', String(query.days));
  if (query.cash) params.set('cash', '1');
  const text = params.toString();
  return `/dashboard/orders${text ? `?${text}` : ''}`;
}

const GROUP_WORDS: Record<StateGroup, string> = {
  delivered: 'delivered',
  failed: 'returned or failed',
  cancelled: 'cancelled',
  in_flight: 'in flight',
  held: 'held',
  returned: 'returned',
  with_courier: 'with a courier',
};

/** The filters beyond shop, state and days, in words (shown above the list with a link to clear them). */
export function describeFilters(query: OrdersQuery): string[] {
  const words: string[] = [];
  if (query.group) words.push(GROUP_WORDS[query.group]);
  if (query.cash) words.push('with cash to collect');
  if (query.from || query.to) {
    const what = query.hold ? 'held' : query.dated === 'changed' ? 'settled' : 'received';
    words.push(
      query.from === query.to ? `${what} on ${query.from}` : `${what} ${query.from ?? '…'} to ${query.to ?? '…'}`,
    );
  }
  if (query.neighbourhood) words.push(`in ${query.neighbourhood}`);
  if (query.hold) words.push(`held for ${query.hold}`);
  return words;
}
