/**
 * The Shopify emulator: start one with startShopifyEmulator (see emulator.ts for routes and behaviour).
 */
export {
  startShopifyEmulator,
  type DeliverWebhookInput,
  type EmulatedShopifyShop,
  type FetchFunction,
  type GraphqlCallRecord,
  type OrderRef,
  type ShippingRatesAnswer,
  type ShopifyEmulator,
  type ShopifyEmulatorOptions,
} from './emulator.js';
export type { FaultSpec, ActiveFault } from './faults.js';
export type { CreateOrderInput } from './orders-input.js';
export { DEFAULT_COD_GATEWAY, DEFAULT_SHIPPING_ADDRESS } from './orders-input.js';
export type { RestOrder } from './rest.js';
export type { OrderSnapshot } from './snapshot.js';
export { DEFAULT_ADMIN_API_VERSION, loadAdminSchema, type AdminSchema } from './schema.js';
export { DEFAULT_THROTTLE, type ThrottleConfig, type ThrottleStatus } from './throttle.js';
export {
  signWebhookBody,
  type WebhookDeliveryRecord,
  type WebhookDeliveryResult,
  type WebhookSettings,
} from './webhooks.js';
export { IMPLEMENTED_ROOT_FIELDS } from './graphql/resolvers.js';
export { restTopic, graphqlTopic } from './topics.js';
export {
  CLIENT_CREDENTIALS_TTL_SECONDS,
  EXPIRING_OFFLINE_TTL_SECONDS,
  REFRESH_TOKEN_TTL_SECONDS,
  signOAuthQuery,
  type TokenLifetimes,
  type TokenRequestRecord,
} from './oauth.js';
