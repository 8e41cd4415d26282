/**
 * A shop of the test registry saved as a connected shop (in the database, as the Connect page saves it): its
 * entry in the shop directory and its secrets sealed in the shop-secret store.
 */
import { prepareImport, type ShopDirectory } from '../../src/shops/shop-directory.js';
import type { ShopSecretStore } from '../../src/shops/shop-secrets.js';
import { defaultSecretSourceFor } from '../../src/shops/shops.js';
import type { TestRelais } from './relais.js';

export async function saveConnectedShop(
  relais: Pick<TestRelais, 'registryDocument' | 'env'>,
  stores: { directory: ShopDirectory; secrets: ShopSecretStore },
  shopId: string,
): Promise<void> {
  const [shop] = prepareImport(
    relais.registryDocument as { shops: unknown[] },
    defaultSecretSourceFor(relais.env),
  ).filter((s) => s.id === shopId);
  if (!shop) throw new Error(`no shop ${shopId} in the test registry`);
  for (const [name, value] of shop.secrets) await stores.secrets.put(shop.id, name, value);
  await stores.directory.save(shop);
}
