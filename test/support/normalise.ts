/**
 * What the platforms' normalise tests ask of a normaliser: the order it makes of a payload, or the hold it
 * puts the payload on. The same three questions for Shopify and WooCommerce, each with its own payloads.
 */
import type { StoreOrder } from '../../src/domain/order.js';
import type { NormaliseContext, NormaliseResult } from '../../src/shops/platforms/common.js';
import type { JsonOverrides } from './factories.js';

export function normaliseProbes(
  normalise: (body: unknown, ctx: NormaliseContext) => NormaliseResult,
  payload: (overrides?: JsonOverrides) => unknown,
  ctx: NormaliseContext,
) {
  /** The result, when it is a hold; the test fails if it is an order. */
  function held(result: NormaliseResult) {
    if (result.ok) throw new Error('expected a hold, got an order');
    return result;
  }
  /** The order, when the result is one; the test fails if it is a hold. */
  function ordered(result: NormaliseResult): StoreOrder {
    if (!result.ok) throw new Error(`expected an order, got hold ${result.hold.code}: ${result.hold.message}`);
    return result.order;
  }
  return {
    held,
    ordered,
    /** The order made of a payload with these overrides. */
    normalised(overrides: JsonOverrides = {}, context: NormaliseContext = ctx): StoreOrder {
      return ordered(normalise(payload(overrides), context));
    },
    /** The code of the hold a payload with these overrides is put on. */
    holdCode(overrides: JsonOverrides, context: NormaliseContext = ctx): string {
      return held(normalise(payload(overrides), context)).hold.code;
    },
  };
}
