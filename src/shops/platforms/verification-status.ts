/**
 * The one table from why a request that claims to come from a shop was not taken (an order webhook, a checkout
 * rate request: StorePlatform's VerificationFailure) to the HTTP status it answers. The routes look the status
 * up here, never decide it themselves, so a platform's intake only names the reason.
 *
 *   400  the request is not one the platform sends (a header missing, a body that is not JSON): a retry would not help
 *   401  it is not signed by the shop's secret, or its signed body belongs to another shop or names none where it
 *        must (Shopify requires exactly 401)
 *   404  no such shop in the registry (or not one of this platform)
 *
 * The signature verifiers' own reasons come from src/shops/platforms/common.ts (VERIFICATION_FAILURE_STATUS, next to them);
 * the rest are the intake's.
 */
import { VERIFICATION_FAILURE_STATUS } from './common.js';
import type { VerificationFailure } from './index.js';

export const VERIFICATION_STATUS: Readonly<Record<VerificationFailure, 400 | 401 | 404>> = {
  ...VERIFICATION_FAILURE_STATUS,
  malformed_body: 400,
  missing_signature: 401,
  shop_mismatch: 401,
  shop_unconfirmed: 401,
  shop_domain_mismatch: 401,
  unknown_shop: 404,
};
