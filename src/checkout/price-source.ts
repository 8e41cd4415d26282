/**
 * Where checkout prices come from: the dispatch service's public simulatePrice, one client per shop; and
 * createQuote, used only to learn the service's cash-collection fee (cod-fee.ts), which simulatePrice does not show.
 *
 * The checkout routes are mounted by createApp, which is handed no dispatch client; so they own their clients
 * (simulatePrice is public: the client sends no key, but it still refuses to be built without a live one, which
 * the registry guarantees) and close them when the web process closes its Redis connection (see routes.ts).
 */
import type { ShopConfig } from '../config/shops.js';
import type { CallOptions, DispatchClient } from '../dispatch/client.js';
import { dispatchClientForShop } from '../dispatch/for-shop.js';
import type { WirePriceSimulation, WireQuote, WireQuoteRequest, WireSimulatePriceRequest } from '../dispatch/wire.js';
import type { Logger } from '../log.js';

export interface PriceSource {
  simulatePrice(shop: ShopConfig, request: WireSimulatePriceRequest, options: CallOptions): Promise<WirePriceSimulation>;
  /** A firm quote (authenticated with the shop's key); it creates nothing a courier or a customer sees. */
  createQuote(shop: ShopConfig, request: WireQuoteRequest, options: CallOptions): Promise<WireQuote>;
  /** The host that answers, for cache keys: the same host gives the same public prices. */
  sourceOf(shop: ShopConfig): string;
}

export class DispatchPriceSource implements PriceSource {
  readonly #clients = new Map<string, DispatchClient>();
  #closed = false;

  constructor(private readonly logger: Logger) {}

  simulatePrice(shop: ShopConfig, request: WireSimulatePriceRequest, options: CallOptions): Promise<WirePriceSimulation> {
    return this.#clientFor(shop).simulatePrice(request, options);
  }

  createQuote(shop: ShopConfig, request: WireQuoteRequest, options: CallOptions): Promise<WireQuote> {
    return this.#clientFor(shop).createQuote(request, options);
  }

  sourceOf(shop: ShopConfig): string {
    return shop.dispatch.trackingUrl ?? shop.dispatch.baseUrl;
  }

  #clientFor(shop: ShopConfig): DispatchClient {
    if (this.#closed) throw new Error('checkout prices: the price source is closed');
    let client = this.#clients.get(shop.id);
    if (!client) {
      client = dispatchClientForShop(shop, this.logger.child({ shop: shop.id, component: 'checkout-rates' }), 'relais-checkout-rates/0.1');
      this.#clients.set(shop.id, client);
    }
    return client;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#clients.values()].map((c) => c.close()));
    this.#clients.clear();
  }
}
