/**
 * The dispatch adapter's door: what the rest of Relais builds a shop's delivery service with. The use-cases
 * see the port (src/domain/delivery.ts), never the client, its wire format or its errors (eslint.config.js).
 */
export { deliveryServiceForShop, deliveryServiceOver, wireProfileOf } from './for-shop.js';
export { DispatchDeliveryService } from './service.js';
