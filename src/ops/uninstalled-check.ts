/**
 * Registry-file shops whose app was uninstalled: the worker cannot switch them off (the file is the operator's),
 * so it marks them in Redis (src/shops/uninstall.ts) and `relais doctor` reports each until the operator acts.
 * `--fix` forgets the mark once the shop's own checks pass again (the app installed again, its token working).
 */
import { Redis } from 'ioredis';
import { uninstalledKey } from '../shops/uninstall.js';
import type { CheckResult } from '../domain/checks.js';

export async function checkUninstalled(input: {
  redisUrl: string;
  prefix: string;
  /** Each shop, and whether its other checks all pass (no error). */
  shops: Array<{ id: string; passing: boolean }>;
  fix: boolean;
  timeoutMs: number;
}): Promise<Map<string, CheckResult>> {
  const found = new Map<string, CheckResult>();
  if (input.shops.length === 0) return found;
  const redis = new Redis(input.redisUrl, {
    lazyConnect: true,
    connectTimeout: input.timeoutMs,
    commandTimeout: input.timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  // An unreachable Redis is the Redis section's finding already: nothing more to say here.
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    for (const shop of input.shops) {
      const key = uninstalledKey(input.prefix, shop.id);
      const at = await redis.get(key);
      if (at === null) continue;
      if (input.fix && shop.passing) {
        await redis.del(key);
        found.set(shop.id, {
          name: 'app installed',
          status: 'ok',
          detail: `the app was uninstalled at ${at}, and the shop's checks pass again: the uninstall is forgotten`,
        });
        continue;
      }
      found.set(shop.id, {
        name: 'app installed',
        status: 'error',
        detail: `Shopify said the app was uninstalled from this shop at ${at}; Relais cannot switch off a shop of the registry file`,
        fix: 'remove the shop from the registry file and restart, or install the app again and run relais doctor --fix (it forgets the uninstall once the shop checks pass)',
      });
    }
  } catch {
    return found;
  } finally {
    redis.disconnect();
  }
  return found;
}
