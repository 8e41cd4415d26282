/**
 * A Shopify shop as the app install leaves it on the Connect page: its token and webhook secret sealed in the
 * database, its platform part saved, switched off; and the Connect page's settings form that completes it.
 */
import { SecretBox } from '../../src/shops/secret-box.js';
import { PostgresShopSecretStore } from '../../src/adapters/postgres/pg-shop-secrets.js';
import { PostgresShopDirectory } from '../../src/adapters/postgres/pg-shops.js';
import type { TestRelais } from './relais.js';

export interface InstalledShopifyShop {
  id: string;
  domain: string;
  accessToken: string;
  webhookSecret: string;
  /** The shop's Admin API (an emulator's adminUrl). */
  adminUrl: string;
}

/** Saves the shop as the install leaves it; returns the directory and secret store over the test's database. */
export async function saveInstalledShopifyShop(
  relais: TestRelais,
  secretKeys: string,
  shop: InstalledShopifyShop,
): Promise<{ directory: PostgresShopDirectory; secrets: PostgresShopSecretStore }> {
  const directory = new PostgresShopDirectory(relais.db.pool());
  const secrets = new PostgresShopSecretStore(relais.db.pool(), SecretBox.fromSetting(secretKeys));
  await secrets.put(shop.id, 'shopify.accessToken', shop.accessToken);
  await secrets.put(shop.id, 'shopify.webhookSecret', shop.webhookSecret);
  await directory.save({
    id: shop.id,
    platform: 'shopify',
    enabled: false,
    document: {
      id: shop.id,
      platform: 'shopify',
      shopify: {
        domain: shop.domain,
        accessToken: { stored: 'shopify.accessToken' },
        webhookSecret: { stored: 'shopify.webhookSecret' },
        adminUrl: shop.adminUrl,
      },
    },
  });
  return { directory, secrets };
}

/** The Connect page's settings form for a shop in Thiès, delivered through the test's dispatch emulator. */
export function connectSettingsForm(
  relais: TestRelais,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    name: 'Thiès Boutique',
    country: 'SN',
    pickupNeighbourhood: 'Plateau',
    pickupAddress: '12 avenue Léopold Sédar Senghor',
    pickupContactName: 'Awa Ndiaye',
    pickupContactPhone: '+221770000000',
    codGateways: 'Cash on Delivery (COD)\nPaiement à la livraison',
    dispatchCashOnDeliveryAt: 'created',
    dispatchBaseUrl: relais.emulator.baseUrl,
    dispatchTrackingUrl: '',
    dispatchProfile: 'default',
    dispatchApiKey: relais.secrets.dispatchApiKey,
    ...overrides,
  };
}
