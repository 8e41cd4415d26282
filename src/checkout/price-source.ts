/**
 * Where checkout prices come from: the dispatch service's public simulatePrice, one client per shop; and
 * createQuote, used only to learn the service's cash-collection fee (cod-fee.ts), which simulatePrice does not show.
 *
 * The checkout routes are mounted by createApp, which is handed no dispatch client; so they own their clients
 * (simulatePrice is public: the client sends no key, but it still refuses to be built without a live one, which
 * the registry guarantees) and close them when the web process closes its Redis connection (see routes.ts).
 */
import { PerShop } from '../shops/served-shops.js';
import type { ShopConfig } from '../shops/shops.js';
import { deliveryServiceForShop, type DispatchDeliveryService } from '../adapters/dispatch-api/index.js';
import type { CallOptions, PriceRequest, PriceSimulation, Quote, QuoteRequest } from '../domain/delivery.js';
import type { Logger } from '../log.js';

export interface PriceSource {
  /** The service's public, indicative price by neighbourhood. */
  price(shop: ShopConfig, request: PriceRequest, options: CallOptions): Promise<PriceSimulation>;
  /** A firm quote (authenticated with the shop's key); it creates nothing a courier or a customer sees. */
  quote(shop: ShopConfig, request: QuoteRequest, options: CallOptions): Promise<Quote>;
  /** The host that answers, for cache keys: the same host gives the same public prices. */
  sourceOf(shop: ShopConfig): string;
}

/** Prices from each shop's delivery service (the port, src/domain/delivery.ts), one per shop, owned and closed here. */
export class DispatchPriceSource implements PriceSource {
  /** One per shop, rebuilt when the shop's settings change (a reload of the served shops: its key, its service). */
  readonly #services = new PerShop<DispatchDeliveryService>(
    (shop) =>
      deliveryServiceForShop(
        shop,
        this.logger.child({ shop: shop.id, component: 'checkout-rates' }),
        'relais-checkout-rates/0.1',
      ),
    (service) => void service.close().catch(() => undefined),
  );
  #closed = false;

  constructor(private readonly logger: Logger) {}

  price(shop: ShopConfig, request: PriceRequest, options: CallOptions): Promise<PriceSimulation> {
    return this.#serviceFor(shop).price(request, options);
  }

  quote(shop: ShopConfig, request: QuoteRequest, options: CallOptions): Promise<Quote> {
    return this.#serviceFor(shop).quote(request, options);
  }

  sourceOf(shop: ShopConfig): string {
    return shop.dispatch.trackingUrl ?? shop.dispatch.baseUrl;
  }

  #serviceFor(shop: ShopConfig): DispatchDeliveryService {
    if (this.#closed) throw new Error('checkout prices: the price source is closed');
    return this.#services.for(shop);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#services.values().map((s) => s.close()));
  }
}
