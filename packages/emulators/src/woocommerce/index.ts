/**
 * WooCommerce emulator: the wc/v3 REST subset Relais uses, OAuth 1.0a and Basic auth as core checks them,
 * and webhooks delivered, signed and disabled as core does. See server.ts for the API.
 */
export {
  startWooEmulator,
  type ApiCall,
  type AuthorizationRecord,
  type IssuedKey,
  type DeliveryRecord,
  type EmulatedProduct,
  type EmulatedWooShop,
  type FaultControls,
  type FaultSpec,
  type OrderSnapshot,
  type OrderWriteInput,
  type PingResult,
  type ProductInput,
  type RefundInput,
  type WebhookInfo,
  type WebhookInput,
  type WooEmulator,
  type WooEmulatorOptions,
} from './server.js';
export { oauthBaseString } from './auth.js';
export { parseStr, phpJsonEncode } from './php.js';
