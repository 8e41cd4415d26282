/**
 * The shops a running process serves, kept current without a restart (issue 17): a shop connected, changed,
 * switched off or uninstalled through the Connect page or a webhook is served, or no longer served, by the web
 * process and every worker within moments.
 *
 * `ServedShops` is a ShopRegistry whose contents are replaced by `reload()`. It is one, so everything that was
 * handed the registry at start (routes, jobs, dashboard) reads the current shops through the same object. Whoever
 * changes the directory calls `announceShopsChanged`, a message on Redis every process listens to
 * (`watchShopChanges`); a periodic reload covers a message missed while a process was disconnected.
 *
 * A reload that fails (a document that does not validate, a stored secret missing) keeps the registry served
 * until then and is reported: a mistake in one shop never stops every shop. A shop unchanged by a reload keeps
 * its very ShopConfig object, so what is built per shop (`PerShop`: clients, token sources) is rebuilt only for
 * the shops that changed.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../log.js';
import type { RedisClient } from '../redis.js';
import { Secret } from './secret.js';
import { ShopRegistry, type NotServedShop, type ShopConfig } from './shops.js';

export interface ShopsChange {
  added: ShopConfig[];
  /** The new settings of shops whose settings (or secrets) changed. */
  changed: ShopConfig[];
  removed: string[];
}

export type ReloadOutcome = 'changed' | 'unchanged' | 'failed';

export interface ServedShopsOptions {
  logger: Logger;
  /** Told of every reload (the processes' relais_shop_reloads_total). */
  onReload?(outcome: ReloadOutcome): void;
}

export class ServedShops extends ShopRegistry {
  #current: ShopRegistry;
  readonly #load: () => Promise<ShopRegistry>;
  readonly #options: ServedShopsOptions;
  readonly #listeners: Array<(change: ShopsChange) => void> = [];
  #running: Promise<ReloadOutcome> | undefined;
  #again = false;

  constructor(initial: ShopRegistry, load: () => Promise<ShopRegistry>, options: ServedShopsOptions) {
    super([]);
    this.#current = initial;
    this.#load = load;
    this.#options = options;
  }

  override get(id: string): ShopConfig | undefined {
    return this.#current.get(id);
  }
  override all(): ShopConfig[] {
    return this.#current.all();
  }
  override notServed(id: string): NotServedShop | undefined {
    return this.#current.notServed(id);
  }
  override allNotServed(): NotServedShop[] {
    return this.#current.allNotServed();
  }
  override snapshot(): ShopRegistry {
    return this.#current;
  }

  /** Resolves once no reload is running (a process closing waits for it before closing the database). */
  async idle(): Promise<void> {
    await this.#running;
  }

  /** Told after each reload that changed the served shops, before the reload resolves. */
  onChange(listener: (change: ShopsChange) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Loads the shops again and serves them. Reloads asked for while one runs are run once more after it (the
   * change they announce may have been written after that one read), never side by side.
   */
  reload(): Promise<ReloadOutcome> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    const run = async (): Promise<ReloadOutcome> => {
      let outcome: ReloadOutcome;
      do {
        this.#again = false;
        outcome = await this.#reloadOnce();
      } while (this.#again);
      return outcome;
    };
    this.#running = run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #reloadOnce(): Promise<ReloadOutcome> {
    let loaded: ShopRegistry;
    try {
      loaded = await this.#load();
    } catch (error) {
      // The message lists what is wrong (a shop id, a field, a secret's name), never a secret's value.
      this.#options.logger.error(
        { err: error instanceof Error ? error.message : String(error), serving: this.#current.all().length },
        'could not reload the shops: still serving the shops loaded before',
      );
      this.#options.onReload?.('failed');
      return 'failed';
    }
    const before = this.#current;
    const change: ShopsChange = { added: [], changed: [], removed: [] };
    const kept = loaded.all().map((shop) => {
      const previous = before.get(shop.id);
      if (!previous) change.added.push(shop);
      else if (fingerprint(previous) === fingerprint(shop)) return previous;
      else change.changed.push(shop);
      return shop;
    });
    change.removed = before
      .all()
      .filter((shop) => !loaded.get(shop.id))
      .map((shop) => shop.id);
    this.#current = new ShopRegistry(kept, loaded.allNotServed());
    const changed = change.added.length + change.changed.length + change.removed.length > 0;
    if (changed) {
      this.#options.logger.info(
        {
          added: change.added.map((s) => s.id),
          changed: change.changed.map((s) => s.id),
          removed: change.removed,
        },
        'served shops reloaded',
      );
      for (const listener of this.#listeners) listener(change);
    }
    this.#options.onReload?.(changed ? 'changed' : 'unchanged');
    return changed ? 'changed' : 'unchanged';
  }
}

const fingerprints = new WeakMap<ShopConfig, string>();

/** A digest of the shop's settings, secrets included (each hashed): equal digests, the same shop. */
function fingerprint(shop: ShopConfig): string {
  let digest = fingerprints.get(shop);
  if (digest === undefined) {
    const text = JSON.stringify(shop, (_key, value: unknown) =>
      value instanceof Secret ? `secret:${createHash('sha256').update(value.reveal()).digest('hex')}` : value,
    );
    digest = createHash('sha256').update(text).digest('hex');
    fingerprints.set(shop, digest);
  }
  return digest;
}

/**
 * A value built per shop (an API client, a token source), kept while the shop's settings stay the same object:
 * a reload that changes the shop gives it a new one, and the old value is disposed of and rebuilt.
 */
export class PerShop<T> {
  readonly #entries = new Map<string, { shop: ShopConfig; value: T }>();

  constructor(
    private readonly build: (shop: ShopConfig) => T,
    private readonly dispose?: (value: T) => void,
  ) {}

  for(shop: ShopConfig): T {
    const entry = this.#entries.get(shop.id);
    if (entry?.shop === shop) return entry.value;
    if (entry) this.#drop(shop.id);
    const value = this.build(shop);
    this.#entries.set(shop.id, { shop, value });
    return value;
  }

  /** Forgets what was built for these shops (removed or changed): nothing keeps serving them. */
  forget(ids: Iterable<string>): void {
    for (const id of ids) this.#drop(id);
  }

  values(): T[] {
    return [...this.#entries.values()].map((entry) => entry.value);
  }

  #drop(id: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    this.dispose?.(entry.value);
  }
}

/** The Redis channel on which a change of the connected shops is announced. */
export function shopsChangedChannel(prefix: string): string {
  return `${prefix}:shops-changed`;
}

/** Tells every web process and worker to reload the shops it serves (after the directory changed). */
export async function announceShopsChanged(redis: RedisClient, prefix: string): Promise<void> {
  await redis.publish(shopsChangedChannel(prefix), String(Date.now()));
}

/** Every minute: the announcements missed while a process was cut off from Redis are caught up within that. */
export const DEFAULT_SHOPS_RELOAD_MS = 60_000;

/**
 * Reloads `served` on each announcement and every `everyMs`. `subscriber` is a connection of its own (a
 * subscribed connection runs no other command), subscribed to the channel by its owner (src/main/runtime.ts) and
 * closed by the returned `close`.
 */
export function watchShopChanges(input: {
  served: ServedShops;
  subscriber: RedisClient;
  prefix: string;
  everyMs?: number;
  logger: Logger;
}): { close(): Promise<void> } {
  const channel = shopsChangedChannel(input.prefix);
  const reload = () => void input.served.reload();
  input.subscriber.on('message', (from: string) => {
    if (from === channel) reload();
  });
  // Also on each (re)connection: an announcement made while this process was cut off is caught up at once.
  input.subscriber.on('ready', reload);
  const timer = setInterval(reload, input.everyMs ?? DEFAULT_SHOPS_RELOAD_MS);
  timer.unref();
  input.logger.debug({ channel }, 'watching for changes of the connected shops');
  return {
    async close() {
      clearInterval(timer);
      await input.subscriber.quit().catch(() => input.subscriber.disconnect());
      await input.served.idle();
    },
  };
}
