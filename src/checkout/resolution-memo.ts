/**
 * Remembers recent neighbourhood resolutions. At checkout the same address is priced again and again (every change
 * of basket, every customer of a building), and resolving costs a fraction of a millisecond of CPU, the largest
 * part of a cache hit (see bench/checkout-rates.bench.ts). A resolution depends only on its input and the static
 * gazetteer, so the input, aliases included, is the key: an alias added at run time changes the key and takes
 * effect at once. Bounded, least recently used first out.
 */
import { RecentlyUsed } from '../geo/recently-used.js';
import type { NeighbourhoodResolver, Resolution, ResolveInput } from '../geo/resolver.js';

export const DEFAULT_MEMO_ENTRIES = 2_000;

export class ResolutionMemo implements Pick<NeighbourhoodResolver, 'resolve'> {
  readonly #entries: RecentlyUsed<string, Resolution>;

  constructor(
    private readonly resolver: Pick<NeighbourhoodResolver, 'resolve'>,
    maxEntries: number = DEFAULT_MEMO_ENTRIES,
  ) {
    this.#entries = new RecentlyUsed(maxEntries);
  }

  resolve(input: ResolveInput): Resolution {
    const f = input.fields;
    const aliases = input.aliases ? Object.entries(input.aliases).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : [];
    const key = JSON.stringify([
      input.country,
      f.address1,
      f.address2,
      f.city,
      f.province,
      f.zip,
      f.company,
      input.coords?.lat,
      input.coords?.lng,
      aliases,
    ]);
    const known = this.#entries.get(key);
    if (known) return known;
    const resolution = this.resolver.resolve(input);
    this.#entries.set(key, resolution);
    return resolution;
  }

  get size(): number {
    return this.#entries.size;
  }
}
