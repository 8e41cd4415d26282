/**
 * A merchant removed Relais's app from the shop (Shopify's app/uninstalled, verified like every shop webhook):
 * Relais stops work for that shop, and only that shop.
 *
 * A connected shop (in the database) is switched off in the directory, its secrets deleted but the webhook secret
 * (Shopify sends shop/redact 48 hours later, and it must still be verified to be acted on: src/orders/intake/compliance.ts),
 * and every web process and worker told to reload the shops they serve. From then its webhooks are refused as an
 * unknown shop, and a dispatch job of it that was waiting ends held with the reason (src/orders/dispatch/dispatch-order.ts).
 *
 * A shop of the registry file cannot be switched off by Relais (the file is the operator's): the uninstall is
 * logged and remembered in Redis (`uninstalledKey`), for the operator to remove the shop from the file or install
 * the app again.
 */
import type { ShopConfig } from './shops.js';
import type { ShopDirectory } from './shop-directory.js';
import type { ShopSecretStore } from './shop-secrets.js';
import type { Logger } from '../log.js';
import type { RedisClient } from '../redis.js';

export interface UninstallDeps {
  directory: ShopDirectory;
  /** The sealed secrets; absent without RELAIS_SECRET_KEYS (no connected shop can exist then). */
  secrets?: ShopSecretStore;
  /** Tells every process to reload the shops it serves (src/shops/served-shops.ts). */
  announce(): Promise<void>;
  redis: RedisClient;
  prefix: string;
  now(): Date;
  logger: Logger;
}

export type UninstallOutcome =
  { kind: 'switched_off'; secretsDeleted: number } | { kind: 'registry_file_shop'; marked: string };

/** Where an uninstall of a registry-file shop is remembered (its ISO time), for `relais doctor`. */
export function uninstalledKey(prefix: string, shopId: string): string {
  return `${prefix}:uninstalled:${shopId}`;
}

export async function handleUninstall(shop: ShopConfig, deps: UninstallDeps): Promise<UninstallOutcome> {
  const connected = (await deps.directory.list()).find((entry) => entry.id === shop.id);
  if (!connected) {
    const at = deps.now().toISOString();
    await deps.redis.set(uninstalledKey(deps.prefix, shop.id), at);
    deps.logger.warn(
      { at },
      `the app was uninstalled from shop ${shop.id}, which the registry file defines: Relais cannot switch it off; remove it from the file (or install the app again), then restart`,
    );
    return { kind: 'registry_file_shop', marked: at };
  }
  // Switched off first: should deleting the secrets fail, the shop is already no longer served, and the retry of
  // this job (each step can be repeated) deletes them: the worker finds a switched-off shop for this topic too.
  await deps.directory.setEnabled(shop.id, false);
  const keep = webhookSecretName(connected.document, shop.platform);
  const secretsDeleted = (await deps.secrets?.deleteAllBut(shop.id, keep === undefined ? [] : [keep])) ?? 0;
  await deps.announce();
  deps.logger.warn(
    { secretsDeleted },
    `the app was uninstalled from shop ${shop.id}: switched off, its tokens deleted; connect it again to serve it`,
  );
  return { kind: 'switched_off', secretsDeleted };
}

/** The stored secret the shop's webhooks are verified with: `<platform>.webhookSecret`, as every platform names it. */
function webhookSecretName(document: Record<string, unknown>, platform: string): string | undefined {
  const settings = document[platform] as { webhookSecret?: { stored?: unknown } } | undefined;
  const name = settings?.webhookSecret?.stored;
  return typeof name === 'string' ? name : undefined;
}
