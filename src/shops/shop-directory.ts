/**
 * Connected shops: the shops Relais serves from its database, beside (or instead of) the registry file. Each is
 * kept as its registry entry, exactly as in shops.json, with every secret a `{ "stored": name }` reference into the
 * sealed secret store (src/shops/shop-secrets.ts). `relais shops import <file>` moves a registry file's shops
 * there (resolving their env/file secrets once, then sealing them); the Connect flows (issue 17) save shops the
 * same way.
 *
 * The registry a process serves is the file's shops and the database's enabled ones together; a shop id in both is
 * refused, so nobody wonders which of two definitions is in force.
 */
import { secretRef, type SecretRef } from './secret.js';
import {
  buildShopRegistry,
  ShopRegistry,
  ShopRegistryError,
  type NotServedShop,
  type SecretSource,
  type ShopConfig,
} from './shops.js';
import type { ShopSecretStore } from './shop-secrets.js';

export interface ConnectedShop {
  id: string;
  platform: string;
  /** The shop's registry entry, secrets as { stored } references. */
  document: Record<string, unknown>;
  enabled: boolean;
}

/** The port: the adapter is src/adapters/postgres/pg-shops.ts. */
export interface ShopDirectory {
  list(): Promise<ConnectedShop[]>;
  save(shop: { id: string; platform: string; document: Record<string, unknown>; enabled?: boolean }): Promise<void>;
  setEnabled(id: string, enabled: boolean): Promise<boolean>;
  remove(id: string): Promise<boolean>;
}

/**
 * The registry of the file's shops and the directory's enabled ones. Every problem (a shop in both, a stored
 * secret missing, a schema error) is reported at once, as for the file alone.
 */
export async function loadServedShops(input: {
  fileDocument?: { shops: unknown[] };
  fileSecrets?: SecretSource;
  directory: ShopDirectory;
  secrets: ShopSecretStore;
}): Promise<ShopRegistry> {
  const listed = await input.directory.list();
  const connected = listed.filter((shop) => shop.enabled);
  const fromFile = new Set((input.fileDocument?.shops ?? []).map((shop) => (shop as { id?: unknown }).id));
  const both = connected
    .filter((shop) => fromFile.has(shop.id))
    .map((shop) => `shop ${shop.id} is both in the registry file and connected in the database: remove it from one`);
  if (both.length > 0) throw new ShopRegistryError(both);
  // Stored secrets, read shop by shop (one query each), then resolved synchronously like env and file ones.
  const stored = new Map<string, Map<string, string>>();
  for (const shop of connected) stored.set(shop.id, await revealedSecretsOf(input.secrets, shop.id));
  // Each connected shop is validated on its own, its { stored } references resolved from its own secrets.
  const resolvedConnected = connected.map((shop) =>
    buildConnectedShop(shop.document, stored.get(shop.id)!, input.fileSecrets),
  );
  const fileShops = input.fileDocument ? buildShopRegistry(input.fileDocument, input.fileSecrets).all() : [];
  const switchedOff = await Promise.all(
    listed.filter((shop) => !shop.enabled).map((shop) => notServedShop(shop, input.secrets)),
  );
  return new ShopRegistry([...fileShops, ...resolvedConnected], switchedOff);
}

/** Why a switched-off connected shop is not served: the two ways a shop is switched off. */
export const SWITCHED_OFF_REASON =
  'it is switched off (its app was uninstalled from the shop, or an operator switched it off on the Connect page); switch it on there once the app is installed again';

/**
 * A switched-off shop, its settings built with whatever secrets it still has (an uninstall deletes all but the
 * webhook secret, src/shops/uninstall.ts), the missing ones empty: only its data-protection webhooks are answered,
 * and a missing webhook secret is refused there. A document that does not build leaves the settings out.
 */
async function notServedShop(shop: ConnectedShop, secrets: ShopSecretStore): Promise<NotServedShop> {
  const kept = await secrets.allOf(shop.id);
  try {
    const built = buildShopRegistry({ shops: [shop.document] }, (ref) =>
      'stored' in ref ? (kept.get(ref.stored)?.value.reveal() ?? '') : undefined,
    ).all()[0]!;
    return { id: shop.id, reason: SWITCHED_OFF_REASON, shop: built };
  } catch {
    return { id: shop.id, reason: SWITCHED_OFF_REASON };
  }
}

/** Every stored secret of a shop, opened (one read): what its `{ stored }` references resolve to. */
export async function revealedSecretsOf(store: ShopSecretStore, shopId: string): Promise<Map<string, string>> {
  const secrets = await store.allOf(shopId);
  return new Map([...secrets].map(([name, secret]) => [name, secret.value.reveal()]));
}

/**
 * One connected shop as the registry serves it: its document validated on its own, its `{ stored }` references
 * resolved from `stored` and any other reference from `otherSecrets`. Throws ShopRegistryError listing every problem.
 */
export function buildConnectedShop(
  document: Record<string, unknown>,
  stored: ReadonlyMap<string, string>,
  otherSecrets?: SecretSource,
): ShopConfig {
  const source: SecretSource = (ref) => ('stored' in ref ? stored.get(ref.stored) : otherSecrets?.(ref));
  return buildShopRegistry({ shops: [document] }, source).all()[0]!;
}

/**
 * A registry file's shops made ready for the database: each secret reference resolved now (from the environment
 * or the file it names) and replaced by a `{ stored }` reference named after where it sits ("shopify.accessToken").
 * Answers the documents and the secrets to seal; refuses (listing every problem) a reference that does not resolve.
 */
export function prepareImport(
  fileDocument: { shops: unknown[] },
  secrets: SecretSource,
): Array<{ id: string; platform: string; document: Record<string, unknown>; secrets: Map<string, string> }> {
  // Validates the whole file first, with its secrets, exactly as `relais web` would load it.
  buildShopRegistry(fileDocument, secrets);
  return fileDocument.shops.map((raw) => {
    const shop = raw as Record<string, unknown> & { id: string; platform: string };
    const sealed = new Map<string, string>();
    const rewrite = (value: unknown, path: string): unknown => {
      if (value && typeof value === 'object' && !Array.isArray(value)) {
        const keys = Object.keys(value);
        if (keys.length === 1 && (keys[0] === 'env' || keys[0] === 'file') && secretRef.safeParse(value).success) {
          sealed.set(path, secrets(value as SecretRef)!);
          return { stored: path };
        }
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v, path ? `${path}.${k}` : k)]));
      }
      return Array.isArray(value) ? value.map((v, i) => rewrite(v, `${path}.${i}`)) : value;
    };
    return {
      id: shop.id,
      platform: shop.platform,
      document: rewrite(shop, '') as Record<string, unknown>,
      secrets: sealed,
    };
  });
}
