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
} from '../../ledger/order-insights.js';

const DAY_MS = 86_400_000;
const FAMILIES: readonly PaymentFamily[] = ['cash_on_delivery', 'prepaid', 'deposit_then_balance', 'business_account'];
const CASH_FAMILIES = FAMILIES.filter(collectsCash);

const quoted = (values: readonly string[]) => values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ');

/** The order's cash figure (src/dashboard/use-cases/order-figures.ts cashFigure, in SQL): the goods carried, else the outstanding of a cash order. */
const AMOUNT = `COALESCE((o.shipment->>'orderAmountXof')::bigint, (o.door->>'goods')::bigint,
  CASE WHEN o.store_order->>'paymentFamily' IN (${quoted(CASH_FAMILIES)}) THEN (o.store_order->>'outstanding')::bigint END, 0)`;

/** The order's outcome (order-insights.ts OUTCOMES) from its state. */
const OUTCOME = `CASE ${OUTCOMES.filter((o) => o !== 'in_flight')
  .map((outcome) => `WHEN o.state IN (${quoted(STATE_GROUPS[outcome])}) THEN '${outcome}'`)
  .join(' ')} ELSE 'in_flight' END`;

const FAILED = `o.state IN (${quoted(STATE_GROUPS.failed)})`;
const ZONES = 'WITH zones AS (SELECT * FROM unnest($1::text[], $2::text[]) AS z(shop_id, tz))';
const localDay = (column: string) => `(${column} AT TIME ZONE z.tz)::date`;
const dayText = (column: string) => `to_char(${column} AT TIME ZONE z.tz, 'YYYY-MM-DD')`;
/** A date as YYYY-MM-DD, written once per group (formatting is costly per row; dates group cheaply). */
const ISO = (date: string) => `to_char(${date}, 'YYYY-MM-DD')`;

/**
 * The shops with the instants their window of local days ($3 to $4) begins and ends at: an order is in the
 * window when an instant of it falls in [lo, hi), an index range per shop.
 */
const WINDOW_ZONES = `WITH zones AS (SELECT shop_id, tz, ($3::date::timestamp AT TIME ZONE tz) AS lo,
  (($4::date + 1)::timestamp AT TIME ZONE tz) AS hi FROM unnest($1::text[], $2::text[]) AS z(shop_id, tz))`;
const inWindow = (column: string) => `${column} >= z.lo AND ${column} < z.hi`;
const RECEIVED_IN_WINDOW = inWindow('o.first_seen_at');

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
    const params = [...zoneParams(window.shops), window.from, window.to];
    const [received, settled, holds] = await Promise.all([
      this.#received([...params, options.neighbourhoods ?? 10]),
      this.#settled(params),
      this.#holds(params),
    ]);
    const cash = new Map<string, CashDay>();
    const dayOf = (day: string) => {
      let entry = cash.get(day);
      if (!entry) cash.set(day, (entry = { day, collected: 0, withCouriers: 0, returned: 0 }));
      return entry;
    };
    for (const row of settled) Object.assign(dayOf(row.day), { collected: row.collected, returned: row.returned });
    for (const row of received.couriers) dayOf(row.day).withCouriers = row.amount;
    return {
      outcomes: outcomeDays(received.outcomes),
      cash: [...cash.values()],
      weeks: received.weeks.map(rateWeek),
      neighbourhoods: received.neighbourhoods.map(({ average_price, ...figures }) => ({
        ...figures,
        ...(average_price === null ? {} : { averageDeliveryPrice: average_price }),
      })),
      holds,
    };
  }

  /**
   * The figures of the orders received in the window, from one read of them: their narrow rows are gathered
   * once (MATERIALIZED), then counted by day and outcome, by week, by neighbourhood, and the cash still with
   * couriers by day. Each part comes back as a jsonb array.
   */
  async #received(params: unknown[]): Promise<ReceivedRows> {
    const hours = (fraction: number) =>
      `percentile_cont(${fraction}) WITHIN GROUP (ORDER BY hours) FILTER (WHERE delivered)`;
    const part = (select: string) => `(SELECT coalesce(jsonb_agg(to_jsonb(part)), '[]') FROM (${select}) part)`;
    const { rows } = await this.pool.query<ReceivedRows>(
      `${WINDOW_ZONES}, received AS MATERIALIZED (
         SELECT ${localDay('o.first_seen_at')} AS day, date_trunc('week', o.first_seen_at AT TIME ZONE z.tz)::date AS week,
           ${OUTCOME} AS outcome, o.shipment IS NOT NULL AS shipped, o.state = 'delivered' AS delivered, ${FAILED} AS failed,
           extract(epoch FROM o.state_changed_at - o.first_seen_at) / 3600 AS hours, o.neighbourhood->>'name' AS name,
           COALESCE((o.door->'quoted'->>'delivery')::numeric, (o.quote->>'total')::numeric) AS price,
           CASE WHEN o.state IN (${quoted(STATE_GROUPS.with_courier)}) THEN ${AMOUNT} ELSE 0 END AS with_courier
         FROM zones z JOIN orders o ON o.shop_id = z.shop_id WHERE ${RECEIVED_IN_WINDOW})
       SELECT
         ${part(`SELECT ${ISO('r.day')} AS day, outcome, count(*)::int AS n FROM received r GROUP BY r.day, outcome`)} AS outcomes,
         ${part(`SELECT ${ISO('r.week')} AS week, count(*) FILTER (WHERE shipped)::int AS shipped, count(*) FILTER (WHERE delivered)::int AS delivered,
             count(*) FILTER (WHERE failed)::int AS failed, ${hours(0.5)} AS median_hours, ${hours(0.9)} AS p90_hours
           FROM received r GROUP BY r.week ORDER BY r.week`)} AS weeks,
         ${part(`SELECT name, count(*)::int AS orders, count(*) FILTER (WHERE shipped)::int AS shipped,
             count(*) FILTER (WHERE delivered)::int AS delivered, count(*) FILTER (WHERE failed)::int AS failed,
             round(avg(price))::int AS average_price
           FROM received WHERE name IS NOT NULL GROUP BY name ORDER BY orders DESC, name LIMIT $5`)} AS neighbourhoods,
         ${part(`SELECT ${ISO('r.day')} AS day, sum(with_courier)::bigint AS amount FROM received r GROUP BY r.day HAVING sum(with_courier) > 0`)} AS couriers`,
      params,
    );
    return rows[0]!;
  }

  /** Cash collected and returned, on the day the order was delivered or returned. */
  async #settled(params: unknown[]): Promise<Array<{ day: string; collected: number; returned: number }>> {
    const { rows } = await this.pool.query<{ day: string; collected: string | null; returned: string | null }>(
      // The narrow rows first (MATERIALIZED): grouped, rather than sorting whole order rows by day.
      `${WINDOW_ZONES}, settled AS MATERIALIZED (
         SELECT ${localDay('o.state_changed_at')} AS day, o.state, ${AMOUNT} AS amount
         FROM zones z JOIN orders o ON o.shop_id = z.shop_id
         WHERE o.state IN ('delivered', 'returned') AND ${inWindow('o.state_changed_at')})
       SELECT ${ISO('s.day')} AS day, sum(amount) FILTER (WHERE state = 'delivered') AS collected,
         sum(amount) FILTER (WHERE state = 'returned') AS returned
       FROM settled s GROUP BY s.day`,
      params,
    );
    return rows.map((r) => ({ day: r.day, collected: Number(r.collected ?? 0), returned: Number(r.returned ?? 0) }));
  }

  async #holds(params: unknown[]): Promise<HoldDay[]> {
    const { rows } = await this.pool.query<HoldDay>(
      `${WINDOW_ZONES} SELECT ${dayText('h.held_at')} AS day, h.code, count(DISTINCT h.external_order_id)::int AS orders
       FROM zones z JOIN order_holds h ON h.shop_id = z.shop_id WHERE ${inWindow('h.held_at')}
       GROUP BY 1, 2 ORDER BY 1, 2`,
      params,
    );
    return rows;
  }
}

interface ReceivedRows {
  outcomes: Array<{ day: string; outcome: Outcome; n: number }>;
  weeks: Array<{
    week: string;
    shipped: number;
    delivered: number;
    failed: number;
    median_hours: number | null;
    p90_hours: number | null;
  }>;
  neighbourhoods: Array<Omit<NeighbourhoodFigures, 'averageDeliveryPrice'> & { average_price: number | null }>;
  couriers: Array<{ day: string; amount: number }>;
}

function outcomeDays(rows: ReceivedRows['outcomes']): OutcomeDay[] {
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

/** A week's row as the report reads it: the counts as they are, each duration only when the week has one. */
function rateWeek({ median_hours, p90_hours, ...counts }: ReceivedRows['weeks'][number]): RateWeek {
  return {
    ...counts,
    ...(median_hours === null ? {} : { medianHours: median_hours }),
    ...(p90_hours === null ? {} : { p90Hours: p90_hours }),
  };
}
