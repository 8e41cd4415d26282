/**
 * The overview page over a large ledger (issue 29): N orders (default 100 000) spread over the last 90 days in
 * two shops, written with SQL straight into the real schema (the ledger's columns and jsonb shapes: the shipment,
 * the door amount, the neighbourhood, a store order of about a kilobyte), one in twenty held on the way. Then the
 * real web process answers the dashboard's pages over HTTP (bearer token), each asked several times after a
 * warm-up: the overview of every shop over 30 and 90 days, of one shop, and an orders page one of its links opens.
 *
 * Run: npx tsx bench/overview.bench.ts [--orders N] [--rounds N] [--quick (10 000 orders)]
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { randomHex, SHOPIFY_SHOP_ID, startTestRelais, WOO_SHOP_ID } from '../test/support/relais.js';
import { stopOwnServer } from '../test/support/postgres.js';
import { benchFlags } from './lib/stack.js';
import { fmt, median, percentile, table } from './lib/stats.js';

export const NEIGHBOURHOODS = [
  'Plateau',
  'Sacré Coeur',
  'Ouakam',
  'Yoff',
  'Mermoz',
  'Point E',
  'Grand Yoff',
  'Ngor',
  'Fann',
  'HLM',
  'Almadies',
  'Parcelles Assainies',
  'Colobane',
  'Cocody',
  'Yopougon',
  'Marcory',
  'Treichville',
  'Plateau Dokui',
  'Riviera',
  'Koumassi',
];

/** N orders in one statement: states, times, amounts and neighbourhoods drawn per row. */
export const SEED = `
INSERT INTO orders (external_order_id, shop_id, platform, order_id, order_name, first_seen_at, state, state_changed_at,
  finished_at, hold, held_at, neighbourhood, shipment, door, store_order)
SELECT shop || ':' || g, shop, CASE WHEN shop = $2 THEN 'shopify' ELSE 'woocommerce' END, g::text, '#' || g,
  first_seen, state, changed, CASE WHEN state IN ('delivered', 'returned', 'cancelled') THEN changed END,
  CASE WHEN state = 'held' THEN jsonb_build_object('code', 'no_neighbourhood', 'message', 'no neighbourhood found', 'at', first_seen) END,
  CASE WHEN state = 'held' THEN first_seen END,
  jsonb_build_object('name', ($4::text[])[1 + (g * 7919) % array_length($4::text[], 1)], 'confidence', 1),
  CASE WHEN state NOT IN ('held', 'cancelled') THEN jsonb_build_object('shipmentId', 'shp_' || g, 'status', 'READY',
    'orderAmountXof', goods, 'createdAt', first_seen, 'markedReadyAt', first_seen) END,
  jsonb_build_object('paidBy', 'customer', 'goods', goods, 'delivery', price, 'collectionFee', 0, 'atDoor', goods + price,
    'quoted', jsonb_build_object('delivery', price, 'collectionFee', 0)),
  jsonb_build_object('paymentFamily', 'cash_on_delivery', 'outstanding', goods, 'total', goods,
    'note', (SELECT string_agg(md5(g::text || i::text), '') FROM generate_series(1, 24) i))
FROM (
  SELECT g, shop, first_seen, goods, price, state,
    LEAST(now(), first_seen + (6 + random() * 60) * interval '1 hour') AS changed
  FROM (
    SELECT g, CASE WHEN g % 3 = 0 THEN $3 ELSE $2 END AS shop,
      now() - random() * interval '90 days' AS first_seen,
      5000 + floor(random() * 110)::int * 500 AS goods, 1000 + floor(random() * 4)::int * 500 AS price,
      (ARRAY['delivered', 'returned', 'delivery_failed', 'cancelled', 'held', 'in_delivery'])[
        width_bucket(random(), ARRAY[0, 0.55, 0.67, 0.70, 0.80, 0.85]::float8[])] AS state
    FROM generate_series(1, $1) g
  ) drawn
) o`;

export const HOLDS = `INSERT INTO order_holds (external_order_id, shop_id, code, held_at)
  SELECT external_order_id, shop_id, CASE WHEN state = 'held' THEN 'no_neighbourhood' ELSE 'service_unavailable' END, first_seen_at
  FROM orders WHERE state = 'held' OR (state = 'delivered' AND order_id::int % 20 = 0)`;

async function main(): Promise<void> {
  const flags = benchFlags();
  const orders = flags.orders ?? (flags.quick ? 10_000 : 100_000);
  const rounds = flags.rounds ?? 5;
  const token = `dash_${randomHex(16)}`;
  const relais = await startTestRelais({ inProcessWorker: false, dashboardToken: token });
  try {
    const pool = relais.db.pool();
    const seeding = performance.now();
    await pool.query(SEED, [orders, SHOPIFY_SHOP_ID, WOO_SHOP_ID, NEIGHBOURHOODS]);
    await pool.query(HOLDS);
    await pool.query('ANALYZE orders; ANALYZE order_holds');
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    process.stdout.write(`seeded ${rows[0]!.n} orders in ${fmt((performance.now() - seeding) / 1000, 1)} s\n`);

    const today = new Date().toISOString().slice(0, 10);
    const monthAgo = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
    const pages = [
      ['overview, every shop, 30 days', '/dashboard/overview?days=30'],
      ['overview, every shop, 90 days', '/dashboard/overview?days=90'],
      ['overview, one shop, 30 days', `/dashboard/overview?shop=${SHOPIFY_SHOP_ID}&days=30`],
      ['overview CSV (cash), 90 days', '/dashboard/overview/cash.csv?days=90'],
      ['orders behind a figure (delivered, 30 days)', `/dashboard/orders?group=delivered&from=${monthAgo}&to=${today}`],
    ] as const;
    const results: string[][] = [['page', 'median ms', 'p90 ms', 'max ms', 'bytes']];
    for (const [name, path] of pages) {
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i <= rounds; i++) {
        const started = performance.now();
        const response = await fetch(`${relais.web.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
        const body = await response.text();
        if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
        if (i > 0) times.push(performance.now() - started); // the first is a warm-up
        bytes = body.length;
      }
      results.push([
        name,
        fmt(median(times), 1),
        fmt(percentile(times, 90), 1),
        fmt(Math.max(...times), 1),
        String(bytes),
      ]);
    }
    process.stdout.write(
      `\nOverview over ${orders} orders (${rounds} rounds each, after a warm-up):\n${table(results)}\n`,
    );
  } finally {
    await relais.stop();
    await stopOwnServer();
  }
}

// Run as a script (imported, it only lends its seeding statements).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
