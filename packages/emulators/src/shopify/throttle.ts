/**
 * Shopify's calculated-cost rate limit: a leaky bucket per shop (per app, at Shopify) that refills at
 * `restoreRate` points per second up to `maximumAvailable`. A query needs its requested cost available
 * before it runs; afterwards the difference between requested and actual cost is given back.
 */
export interface ThrottleConfig {
  maximumAvailable: number;
  restoreRate: number;
}

export interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

/** Shopify's standard plan limits for the Admin GraphQL API. */
export const DEFAULT_THROTTLE: ThrottleConfig = { maximumAvailable: 2000, restoreRate: 100 };

export class CostBucket {
  private available: number;
  private updatedAt: number;

  constructor(
    private readonly config: ThrottleConfig,
    private readonly clock: () => number,
  ) {
    this.available = config.maximumAvailable;
    this.updatedAt = clock();
  }

  private refill(): void {
    const now = this.clock();
    const elapsedSeconds = Math.max(0, now - this.updatedAt) / 1000;
    this.available = Math.min(this.config.maximumAvailable, this.available + elapsedSeconds * this.config.restoreRate);
    this.updatedAt = now;
  }

  /** Takes `cost` points if they are all there; takes nothing otherwise. */
  tryTake(cost: number): boolean {
    this.refill();
    if (cost > this.available) return false;
    this.available -= cost;
    return true;
  }

  refund(points: number): void {
    this.refill();
    this.available = Math.min(this.config.maximumAvailable, this.available + Math.max(0, points));
  }

  /** Empties the bucket: what a burst of other clients on the same shop looks like. */
  drain(): void {
    this.refill();
    this.available = 0;
  }

  status(): ThrottleStatus {
    this.refill();
    return {
      maximumAvailable: this.config.maximumAvailable,
      // Shopify reports whole points.
      currentlyAvailable: Math.floor(this.available),
      restoreRate: this.config.restoreRate,
    };
  }
}
