/**
 * The wire profile in force for each shop: the newest profile stored for it (`relais profile learn --apply`, issue
 * 28), else the one its settings name (a built-in, the starting point, or a file). Stored profiles are read from
 * the database at start and again whenever the shops-changed announcement is made (src/shops/served-shops.ts), so
 * every process uses a newly stored profile within moments, without a restart. A stored profile that does not
 * validate is reported and the shop keeps the one it had.
 */
import type { StoredProfile } from '../ledger/first-contact.js';
import type { Logger } from '../log.js';
import { loadWireProfile, parseWireProfile, type WireProfile } from '../adapters/dispatch-api/profile.js';
import type { RedisClient } from '../redis.js';
import { shopsChangedChannel } from './served-shops.js';
import type { ShopConfig } from './shops.js';

export class ShopProfiles {
  readonly #byShop = new Map<string, { version: number; profile: WireProfile }>();

  constructor(
    private readonly latest: () => Promise<StoredProfile[]>,
    private readonly logger: Logger,
  ) {}

  /** The profile in force for the shop. */
  profileFor(shop: ShopConfig): WireProfile {
    return this.#byShop.get(shop.id)?.profile ?? loadWireProfile(shop.dispatch.profile);
  }

  /** The version of the shop's stored profile in force, or undefined when it uses its settings' profile. */
  versionOf(shopId: string): number | undefined {
    return this.#byShop.get(shopId)?.version;
  }

  /** Reads the stored profiles again; answers the shops whose profile in force changed. Never throws. */
  async reload(): Promise<string[]> {
    let stored: StoredProfile[];
    try {
      stored = await this.latest();
    } catch (error) {
      this.logger.warn(
        { err: (error as Error).message },
        'could not read the stored wire profiles; keeping those in force',
      );
      return [];
    }
    const changed: string[] = [];
    for (const entry of stored) {
      if (this.#byShop.get(entry.shopId)?.version === entry.version) continue;
      try {
        const profile = parseWireProfile(entry.document, `stored profile ${entry.version} of shop ${entry.shopId}`);
        this.#byShop.set(entry.shopId, { version: entry.version, profile });
        changed.push(entry.shopId);
        this.logger.info(
          { shop: entry.shopId, version: entry.version, profile: profile.name },
          'stored wire profile in force',
        );
      } catch (error) {
        this.logger.error(
          { shop: entry.shopId, version: entry.version, err: (error as Error).message },
          'stored wire profile is invalid; ignored',
        );
      }
    }
    return changed;
  }
}

/**
 * Reads the stored profiles again on each announcement of a change of the shops, heard on `subscriber` (subscribed
 * to the channel by its owner: src/main/runtime.ts), closed by the answer.
 */
export function followProfileAnnouncements(
  subscriber: RedisClient,
  prefix: string,
  reload: () => Promise<void>,
): { close(): Promise<void> } {
  const channel = shopsChangedChannel(prefix);
  subscriber.on('message', (from: string) => void (from === channel ? reload() : undefined));
  return {
    async close() {
      await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
}
