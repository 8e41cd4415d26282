/**
 * The dashboard's aggregate reads in PostgreSQL (the port: src/ledger/order-insights.ts). Each figure is one SQL
 * aggregate over the orders of the window, found through the (shop_id, first_seen_at) or (shop_id,
 * state_changed_at) index; holds come from order_holds. The shops are joined in with their time zones, so each
 * order is counted on the merchant's own day.
 */
import type pg from 'pg';
import { collectsCash } from '../../domain/delivery.js';
import type { PaymentFamily } from '../../domain/order.js';
import {
  OUTCOMES,
  STATE_GROUPS,
  type CashDay,
  type FoundOrders,
  type HoldDay,
  type NeighbourhoodFigures,
  type OrderFilter,
  type OrderInsights,
  type Outcome,
  type OutcomeDay,
  type OverviewFigures,
  type OverviewWindow,
  type RateWeek,
  type ShopZone,
} from '../order-insights.js';

const DAY_MS = 86_400_000;
const FAMILIES: readonly PaymentFamily[] = ['cash_on_delivery', 'prepaid', 'deposit_then_balance', 'business_account'];
const CASH_FAMILIES = FAMILIES.filter(collectsCash);

const quoted = (values: readonly string[]) => values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ');

/** What the courier collects for the goods (src/dashboard/data.ts amountToCollect, in SQL). */
const AMOUNT = `COALESCE((o.shipment->>'orderAmountXof')::bigint, (o.door->>'goods')::bigint,
  CASE WHEN o.store_order->>'paymentFamily' IN (${quoted(CASH_FAMILIES)}) THEN (o.store_order->>'amountToCollect')::bigint END, 0)`;

/** The order's outcome (order-insights.ts OUTCOMES) from its state. */
const OUTCOME = `CASE ${OUTCOMES.filter((o) => o !== 'in_flight')
  .map((outcome) => `WHEN o.state IN (${quoted(STATE_GROUPS[outcome])}) THEN '${outcome}'`)
  .join(' ')} ELSE 'in_flight' END`;

const FAILED = `o.state IN (${quoted(STATE_GROUPS.failed)})`;
const ZONES = 'WITH zones AS (SELECT * FROM unnest($1::text[], $2::text[]) AS z(shop_id, tz))';
const localDay = (column: string) => `(${column} AT TIME ZONE z.tz)::date`;
const dayText = (column: string) => `to_char(${localDay(column)}, 'YYYY-MM-DD')`;

/** The orders of the window by first sight: $3..$4 bound the index scan, $5..$6 are the local days. */
const RECEIVED_IN_WINDOW = `o.first_seen_at >= $3 AND o.first_seen_at < $4 AND ${localDay('o.first_seen_at')} BETWEEN $5::date AND $6::date`;

function zoneParams(shops: readonly ShopZone[]): [string[], string[]] {
  return [shops.map((s) => s.shopId), shops.map((s) => s.timeZone)];
}

/** An instant safely before the local day starts anywhere (zones run from UTC-12 to UTC+14). */
const before = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS);
const after = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 2 * DAY_MS);

const DATED_COLUMN = { received: 'o.first_seen_at', changed: 'o.state_changed_at' } as const;

export class PostgresOrderInsights implements OrderInsights {
  constructor(private readonly pool: pg.Pool) {}

  async findOrders(filter: OrderFilter): Promise<FoundOrders> {
    const params: unknown[] = zoneParams(filter.shops);
    const param = (value: unknown) => `$${params.push(value)}`;
    const where: string[] = [];
    if (filter.since) where.push(`o.first_seen_at >= ${param(filter.since)}`);
    if (filter.states) where.push(`o.state = ANY(${param([...filter.states])}::text[])`);
    if (filter.neighbourhood !== undefined) where.push(`o.neighbourhood->>'name' = ${param(filter.neighbourhood)}`);
    if (filter.collectsCash) where.push(`${AMOUNT} > 0`);
    const days = (column: string) => {
      const bounds: string[] = [];
      if (filter.from)
        bounds.push(`${column} >= ${param(before(filter.from))}`, `${localDay(column)} >= ${param(filter.from)}::date`);
      if (filter.to)
        bounds.push(`${column} < ${param(after(filter.to))}`, `${localDay(column)} <= ${param(filter.to)}::date`);
      return bounds;
    };
    if (filter.holdCode !== undefined) {
      const code = param(filter.holdCode);
      where.push(
        `EXISTS (SELECT 1 FROM order_holds h WHERE h.external_order_id = o.external_order_id AND h.code = ${code}${days(
          'h.held_at',
        )
          .map((b) => ` AND ${b}`)
          .join('')})`,
      );
    } else {
      where.push(...days(DATED_COLUMN[filter.dated === 'changed' ? 'changed' : 'received']));
    }
    const limit = param(filter.limit);
    const { rows } = await this.pool.query<{ external_order_id: string; total: number }>(
      `${ZONES} SELECT o.external_order_id, count(*) OVER ()::int AS total
       FROM orders o JOIN zones z ON z.shop_id = o.shop_id
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY o.first_seen_at DESC, o.external_order_id DESC LIMIT ${limit}`,
      params,
    );
    return { ids: rows.map((r) => r.external_order_id), total: rows[0]?.total ?? 0 };
  }

  async overview(window: OverviewWindow, options: { neighbourhoods?: number } = {}): Promise<OverviewFigures> {
    const params = [...zoneParams(window.shops), before(window.from), after(window.to), window.from, window.to];
    const [outcomes, cash, weeks, neighbourhoods, holds] = await Promise.all([
      this.#outcomes(params),
      this.#cash(params),
      this.#weeks(params),
      this.#neighbourhoods([...params, options.neighbourhoods ?? 10]),
      this.#holds(params),
    ]);
    return { outcomes, cash, weeks, neighbourhoods, holds };
  }

  async #outcomes(params: unknown[]): Promise<OutcomeDay[]> {
    const { rows } = await this.pool.query<{ day: string; outcome: Outcome; n: number }>(
      `${ZONES} SELECT ${dayText('o.first_seen_at')} AS day, ${OUTCOME} AS outcome, count(*)::int AS n
       FROM orders o JOIN zones z ON z.shop_id = o.shop_id WHERE ${RECEIVED_IN_WINDOW} GROUP BY 1, 2`,
      params,
    );
    const byDay = new Map<string, OutcomeDay>();
    for (const row of rows) {
      let entry = byDay.get(row.day);
      if (!entry) {
        entry = { day: row.day, counts: { delivered: 0, failed: 0, cancelled: 0, in_flight: 0, held: 0 } };
        byDay.set(row.day, entry);
      }
      entry.counts[row.outcome] = row.n;
    }
    return [...byDay.values()];
  }

  /** Collected and returned on the day the order ended; still with couriers on the day it was ordered. */
  async #cash(params: unknown[]): Promise<CashDay[]> {
    const { rows } = await this.pool.query<{ day: string; collected: string; with_couriers: string; returned: string }>(
      `${ZONES} SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(collected) AS collected, sum(with_couriers) AS with_couriers,
         sum(returned) AS returned
       FROM (
         SELECT ${localDay('o.state_changed_at')} AS day, CASE WHEN o.state = 'delivered' THEN ${AMOUNT} ELSE 0 END AS collected,
           0 AS with_couriers, CASE WHEN o.state = 'returned' THEN ${AMOUNT} ELSE 0 END AS returned
         FROM orders o JOIN zones z ON z.shop_id = o.shop_id
         WHERE o.state IN ('delivered', 'returned') AND o.state_changed_at >= $3 AND o.state_changed_at < $4
         UNION ALL
         SELECT ${localDay('o.first_seen_at')}, 0, ${AMOUNT}, 0
         FROM orders o JOIN zones z ON z.shop_id = o.shop_id
         WHERE o.state IN (${quoted(STATE_GROUPS.with_courier)}) AND o.first_seen_at >= $3 AND o.first_seen_at < $4
       ) cash WHERE day BETWEEN $5::date AND $6::date GROUP BY day`,
      params,
    );
    return rows.map((r) => ({
      day: r.day,
      collected: Number(r.collected),
      withCouriers: Number(r.with_couriers),
      returned: Number(r.returned),
    }));
  }

  async #weeks(params: unknown[]): Promise<RateWeek[]> {
    const hours = (fraction: number) =>
      `percentile_cont(${fraction}) WITHIN GROUP (ORDER BY extract(epoch FROM o.state_changed_at - o.first_seen_at) / 3600) FILTER (WHERE o.state = 'delivered')`;
    const { rows } = await this.pool.query<{
      week: string;
      shipped: number;
      delivered: number;
      failed: number;
      median_hours: number | null;
      p90_hours: number | null;
    }>(
      `${ZONES} SELECT to_char(date_trunc('week', o.first_seen_at AT TIME ZONE z.tz), 'YYYY-MM-DD') AS week,
         count(*) FILTER (WHERE o.shipment IS NOT NULL)::int AS shipped,
         count(*) FILTER (WHERE o.state = 'delivered')::int AS delivered,
         count(*) FILTER (WHERE ${FAILED})::int AS failed,
         ${hours(0.5)} AS median_hours, ${hours(0.9)} AS p90_hours
       FROM orders o JOIN zones z ON z.shop_id = o.shop_id WHERE ${RECEIVED_IN_WINDOW} GROUP BY 1 ORDER BY 1`,
      params,
    );
    return rows.map((r) => ({
      week: r.week,
      shipped: r.shipped,
      delivered: r.delivered,
      failed: r.failed,
      ...(r.median_hours === null ? {} : { medianHours: r.median_hours }),
      ...(r.p90_hours === null ? {} : { p90Hours: r.p90_hours }),
    }));
  }

  async #neighbourhoods(params: unknown[]): Promise<NeighbourhoodFigures[]> {
    const { rows } = await this.pool.query<{
      name: string;
      orders: number;
      shipped: number;
      delivered: number;
      failed: number;
      average_price: number | null;
    }>(
      `${ZONES} SELECT o.neighbourhood->>'name' AS name, count(*)::int AS orders,
         count(*) FILTER (WHERE o.shipment IS NOT NULL)::int AS shipped,
         count(*) FILTER (WHERE o.state = 'delivered')::int AS delivered,
         count(*) FILTER (WHERE ${FAILED})::int AS failed,
         round(avg(COALESCE((o.door->'quoted'->>'delivery')::numeric, (o.quote->>'total')::numeric)))::int AS average_price
       FROM orders o JOIN zones z ON z.shop_id = o.shop_id
       WHERE ${RECEIVED_IN_WINDOW} AND o.neighbourhood IS NOT NULL
       GROUP BY 1 ORDER BY orders DESC, name LIMIT $7`,
      params,
    );
    return rows.map(({ average_price, ...figures }) => ({
      ...figures,
      ...(average_price === null ? {} : { averageDeliveryPrice: average_price }),
    }));
  }

  async #holds(params: unknown[]): Promise<HoldDay[]> {
    const { rows } = await this.pool.query<HoldDay>(
      `${ZONES} SELECT ${dayText('h.held_at')} AS day, h.code, count(DISTINCT h.external_order_id)::int AS orders
       FROM order_holds h JOIN zones z ON z.shop_id = h.shop_id
       WHERE h.held_at >= $3 AND h.held_at < $4 AND ${localDay('h.held_at')} BETWEEN $5::date AND $6::date
       GROUP BY 1, 2 ORDER BY 1, 2`,
      params,
    );
    return rows;
  }
}
