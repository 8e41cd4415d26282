/**
 * The port for the secrets of connected shops (issue 17): access and refresh tokens with their expiry, webhook
 * secrets, consumer keys, dispatch API keys. The adapter (src/adapters/postgres/pg-shop-secrets.ts) keeps them
 * encrypted at rest (src/shops/secret-box.ts); what comes back is a `Secret`, which never prints its value.
 */
import type { Secret } from './secret.js';

export interface StoredSecret {
  value: Secret;
  /** When the secret stops working (an expiring access token); absent for one that does not expire. */
  expiresAt?: Date;
  updatedAt: Date;
}

export interface ShopSecretStore {
  get(shopId: string, name: string): Promise<StoredSecret | undefined>;
  /** Every secret of the shop, by name, in one read (building its registry entry). */
  allOf(shopId: string): Promise<Map<string, StoredSecret>>;
  put(shopId: string, name: string, value: string, options?: { expiresAt?: Date }): Promise<void>;
  /**
   * Replaces the secret only if it still is `expected` (compare-and-set on the plaintext): two processes refreshing
   * one token at once cannot overwrite the newer one with the older. Answers whether it was replaced.
   */
  replaceIf(
    shopId: string,
    name: string,
    expected: string | undefined,
    value: string,
    options?: { expiresAt?: Date },
  ): Promise<boolean>;
  /** Every secret of the shop (an uninstall, a shop erased). Answers how many were deleted. */
  deleteShop(shopId: string): Promise<number>;
  /**
   * Every secret of the shop but those named, in one statement (an uninstall keeps the webhook secret, to verify
   * the shop's data-protection webhooks that still come). Answers how many were deleted.
   */
  deleteAllBut(shopId: string, keep: readonly string[]): Promise<number>;
  /** Re-encrypts every secret sealed with an older key under the current one. Answers how many were re-sealed. */
  reseal(): Promise<number>;
}
