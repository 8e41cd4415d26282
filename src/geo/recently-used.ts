/**
 * A map that keeps at most `capacity` entries, the least recently used leaving first: the resolver's compiled alias
 * sets (address-signals.ts) and the checkout's memo of resolutions (src/checkout/resolution-memo.ts). A Map keeps
 * insertion order, so an entry read or written again is moved to the end, and the first key is the oldest.
 */
export class RecentlyUsed<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
