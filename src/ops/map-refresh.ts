/**
 * The service maps kept fresh (issue 24): what a service prices changes, rarely. Weekly, every served shop's
 * map is asked again for the names it learned over a week ago (and any it never learned); after an order is
 * held for want of a priced name, that shop's service is asked about the hold's candidates it does not know
 * freshly. Both through `learnMap`, paced by the shop's call budget (policy.dispatchCallsPerSecond) like every
 * dispatch call, run as a maintenance job (the worker's scheduler; see src/main/worker-maintenance.ts).
 */
import type { ShopConfig } from '../shops/shops.js';
import type { MaintenanceJob } from '../orders/queues.js';
import type { Logger } from '../log.js';
import { learnMap, namesDue, namesToLearn, type MapLearnDeps, type MapLearnReport } from './map-learn.js';

/** The weekly refresh, Mondays at 03:00 UTC: every served shop's map, a name asked again once learned a week ago. */
export const MAP_REFRESH_PATTERN = '0 3 * * 1';

export interface MapRefreshDeps {
  shops(): ShopConfig[];
  depsFor(shop: ShopConfig): MapLearnDeps;
  logger: Logger;
}

export interface MapRefreshResult {
  shops: number;
  asked: number;
  failed: string[];
}

/** One refresh job: the named shop with the hold's names, else every shop. A shop that fails does not stop the others. */
export async function refreshServiceMaps(job: MaintenanceJob, deps: MapRefreshDeps): Promise<MapRefreshResult> {
  const shops = deps.shops().filter((s) => job.shopId === undefined || s.id === job.shopId);
  const result: MapRefreshResult = { shops: 0, asked: 0, failed: [] };
  for (const shop of shops) {
    try {
      const learn = deps.depsFor(shop);
      // Nothing due (a hold whose candidates were all just quoted): no call at all, not even the fallback's.
      const due = await namesDue(learn, job.names ?? namesToLearn(learn, shop.country));
      if (due.length === 0) continue;
      const report: MapLearnReport = await learnMap(learn, { names: due });
      result.shops++;
      result.asked += report.asked;
    } catch (error) {
      deps.logger.warn({ shop: shop.id, err: (error as Error).message }, 'refreshing the service map failed');
      result.failed.push(shop.id);
    }
  }
  return result;
}
