/**
 * The overview page's figures (issue 29): the ledger's aggregates over a window of whole local days, every day
 * of the window present (a quiet day is a zero, not a gap), the running total of the cash collected, and the
 * neighbourhoods placed where the gazetteer has them.
 */
import type { Point } from '../../geo/gazetteer.js';
import type { CashDay, NeighbourhoodFigures, OutcomeDay, RateWeek, ShopZone } from '../../ledger/order-insights.js';
import type { DashboardDeps } from '../ports.js';

export const OVERVIEW_DAYS = [7, 30, 90];
const DAY_MS = 86_400_000;

export interface Overview {
  /** First and last local day of the window. */
  from: string;
  to: string;
  days: string[];
  outcomes: OutcomeDay[];
  /** Each day's cash, with `collectedToDate`: the cash collected since the window began. */
  cash: Array<CashDay & { collectedToDate: number }>;
  weeks: RateWeek[];
  neighbourhoods: Array<NeighbourhoodFigures & { point?: Point }>;
  holds: { codes: string[]; days: Array<{ day: string; counts: Record<string, number> }> };
}

/** The local date (YYYY-MM-DD) of an instant in a time zone. */
export function localDate(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}

/** The `count` local days ending with the day `at` is in. */
export function windowDays(at: Date, timeZone: string, count: number): string[] {
  const last = Date.parse(`${localDate(at, timeZone)}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) => new Date(last - (count - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}

function fillDays<T extends { day: string }>(days: string[], rows: T[], empty: (day: string) => T): T[] {
  const byDay = new Map(rows.map((row) => [row.day, row]));
  return days.map((day) => byDay.get(day) ?? empty(day));
}

export async function overview(
  ports: Pick<DashboardDeps, 'insights' | 'resolver'>,
  input: { shops: readonly ShopZone[]; countries: readonly string[]; days: number; now: Date },
): Promise<Overview> {
  // Shops of one Relais are in one region: the window's days are those of the first shop's clock.
  const days = windowDays(input.now, input.shops[0]?.timeZone ?? 'UTC', input.days);
  const from = days[0]!;
  const to = days[days.length - 1]!;
  const figures = await ports.insights.overview({ shops: input.shops, from, to });
  const outcomes = fillDays(days, figures.outcomes, (day) => ({
    day,
    counts: { delivered: 0, failed: 0, cancelled: 0, in_flight: 0, held: 0 },
  }));
  let collectedToDate = 0;
  const cash = fillDays(days, figures.cash, (day) => ({ day, collected: 0, withCouriers: 0, returned: 0 })).map(
    (day) => {
      collectedToDate += day.collected;
      return { ...day, collectedToDate };
    },
  );
  const whereIs = (name: string) =>
    input.countries.map((country) => ports.resolver.whereIs(country, name)).find((point) => point !== undefined);
  const neighbourhoods = figures.neighbourhoods.map((n) => {
    const point = whereIs(n.name);
    return point ? { ...n, point } : n;
  });
  const codes = [...new Set(figures.holds.map((h) => h.code))].sort();
  const holdDays = days.map((day) => ({
    day,
    counts: Object.fromEntries(
      figures.holds.filter((h) => h.day === day).map((h) => [h.code, h.orders] as const),
    ) as Record<string, number>,
  }));
  return { from, to, days, outcomes, cash, weeks: figures.weeks, neighbourhoods, holds: { codes, days: holdDays } };
}
