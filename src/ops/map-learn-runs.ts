/**
 * "Check and switch on" learns the shop's service map in the background (issue 24): one learnMap run per shop at
 * a time in this process, its progress in Redis (a day's TTL) for the shop's settings page. A run cut short (the
 * process stops) leaves what it recorded; the next switch-on or `relais map learn` resumes from there.
 */
import type { ShopConfig } from '../shops/shops.js';
import type { Logger } from '../log.js';
import type { RedisClient } from '../redis.js';
import { learnMap, type MapLearnDeps, type MapLearnProgress } from './map-learn.js';

const PROGRESS_TTL_SECONDS = 24 * 3600;

export interface MapLearnStatus extends MapLearnProgress {
  state: 'learning' | 'learned' | 'failed';
  /** When the status was last written (ISO 8601). */
  at: string;
  /** How the prices were asked, once the run chose (createQuote or simulatePrice), or why it failed. */
  detail?: string;
}

export class MapLearnRuns {
  readonly #running = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly depsFor: (shop: ShopConfig) => MapLearnDeps,
    private readonly logger: Logger,
  ) {}

  private key(shopId: string): string {
    return `${this.prefix}:map-learn:${shopId}`;
  }

  /** Starts learning the shop's map unless a run for it is under way here; returns without waiting for it. */
  start(shop: ShopConfig): Promise<void> {
    const running = this.#running.get(shop.id);
    if (running) return running;
    const run = this.run(shop).finally(() => this.#running.delete(shop.id));
    this.#running.set(shop.id, run);
    return run;
  }

  async status(shopId: string): Promise<MapLearnStatus | undefined> {
    const raw = await this.redis.get(this.key(shopId));
    return raw === null ? undefined : (JSON.parse(raw) as MapLearnStatus);
  }

  private async run(shop: ShopConfig): Promise<void> {
    const empty = { asked: 0, toAsk: 0, priced: 0, atFallback: 0, failed: 0 };
    let last: MapLearnProgress = empty;
    let writing: Promise<unknown> = this.write(shop.id, { ...empty, state: 'learning' });
    try {
      const report = await learnMap({
        ...this.depsFor(shop),
        onProgress: (p) => {
          last = p;
          // One write at a time; a progress line that would queue behind another is skipped.
          if (p.asked % 10 === 0) writing = writing.then(() => this.write(shop.id, { ...p, state: 'learning' }));
        },
      });
      await writing;
      await this.write(shop.id, { ...report, state: 'learned', detail: `${report.call}: ${report.why}` });
    } catch (error) {
      this.logger.warn({ shop: shop.id, err: (error as Error).message }, 'learning the service map failed');
      await writing.catch(() => undefined);
      await this.write(shop.id, { ...last, state: 'failed', detail: (error as Error).message }).catch(() => undefined);
    }
  }

  private async write(shopId: string, status: Omit<MapLearnStatus, 'at'>): Promise<void> {
    const value: MapLearnStatus = { ...status, at: new Date().toISOString() };
    await this.redis.set(this.key(shopId), JSON.stringify(value), 'EX', PROGRESS_TTL_SECONDS);
  }
}
