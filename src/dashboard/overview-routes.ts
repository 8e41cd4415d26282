/** The overview page and its CSV exports (issue 29), mounted at /dashboard/overview by the router. */
import { Router, type Request } from 'express';
import { z } from 'zod';
import { OVERVIEW_CHARTS, overviewCsv } from './overview-csv.js';
import { overviewBody } from './overview-page.js';
import type { DashboardDeps } from './ports.js';
import type { Responses } from './responses.js';
import type { ShopScope } from './shop-scope.js';
import { overview, OVERVIEW_DAYS } from './use-cases/overview.js';

const windowParam = z.coerce
  .number()
  .int()
  .refine((d) => OVERVIEW_DAYS.includes(d))
  .catch(30);

export function overviewRoutes(deps: DashboardDeps, scope: ShopScope, send: Responses['send']): Router {
  const router = Router();

  /** The figures for the request's shop (or all) and window. */
  const overviewOf = async (req: Request) => {
    const shopId = scope.param(req.query.shop);
    const days = windowParam.parse(req.query.days ?? 30);
    const shops = scope.zonesOf(shopId);
    const figures = await overview(deps, { shops, countries: scope.countriesOf(shopId), days, now: deps.now() });
    return { shopId, days, timeZone: shops[0]?.timeZone ?? 'UTC', overview: figures };
  };

  router.get('/', async (req, res) => {
    const view = await overviewOf(req);
    send(req, res, { section: 'overview', title: 'Overview' }, overviewBody({ shops: scope.choices(), ...view }));
  });

  router.get('/:chart.csv', async (req, res, next) => {
    const chart = OVERVIEW_CHARTS.find((c) => c === req.params.chart);
    if (!chart) return next();
    const view = await overviewOf(req);
    const name = `relais-${chart}-${view.shopId || 'all-shops'}-${view.overview.from}-${view.overview.to}.csv`;
    res.type('text/csv; charset=utf-8').attachment(name).send(overviewCsv(chart, view.overview));
  });

  return router;
}
