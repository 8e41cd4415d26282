/**
 * The choose-the-name step: which of the place's candidate names to send, from what the service map knows
 * (plan, before the first quote) and from what the quotes answer (choose, once the order's own quote and the
 * fallback price are in): src/orders/dispatch/priced-dropoff.ts and src/orders/dispatch/name-choice.ts.
 */
import type { StoreOrder } from '../../domain/order.js';
import type { HoldReason } from '../../domain/order.js';
import type { QuoteProgress } from '../../ledger/order-ledger.js';
import { quoteRequestFor } from '../delivery/delivery-requests.js';
import type { PlannedName } from './name-choice.js';
import { PricedDropoff, type Dropoff, type PricedChoice } from './priced-dropoff.js';
import type { Attempt, DispatchOutcome } from './deps.js';
import { newQuote } from './quote.js';

/** The names planned for one attempt, and how to price them. */
export interface NamePlan {
  pricing: PricedDropoff<QuoteProgress>;
  /** The names to try, most precise first; empty when every candidate is known to be priced at the fallback. */
  names: PlannedName[];
  /** The order as quoted: with its weights filled in (read once, only when a quote is due). */
  quoted(): Promise<StoreOrder>;
  /** A hold for want of a priced name carries the candidates: the worker has the service asked about them again. */
  withCandidates(outcome: DispatchOutcome): DispatchOutcome;
}

export async function planNames(attempt: Attempt, dropoff: Dropoff): Promise<NamePlan> {
  const { deps, shop, order, calls, log } = attempt;
  // Weight hook: WooCommerce orders get their parcel weight from the shop's products, only when a quote is due.
  const fillWeights = deps.weightsFor?.(shop);
  let weighed: StoreOrder | undefined;
  const quoted = async () => (weighed ??= fillWeights ? await fillWeights(order) : order);
  const pricing = new PricedDropoff<QuoteProgress>(
    {
      shop,
      resolver: deps.resolver,
      ...(deps.tariffs ? { tariffs: deps.tariffs } : {}),
      ...(deps.serviceMap ? { serviceMap: deps.serviceMap } : {}),
      now: deps.now,
      log,
      quoteName: (weighedOrder, name) => newQuote(attempt, weighedOrder, name),
      quoteCity: async (atBand, city) => (await calls.quote(quoteRequestFor(shop, atBand, city))).total,
    },
    dropoff,
  );
  const names = await pricing.plan(order);
  const candidates = dropoff.candidates.map((c) => c.name);
  const withCandidates = (outcome: DispatchOutcome): DispatchOutcome =>
    outcome.kind === 'held' ? { ...outcome, names: candidates } : outcome;
  return { pricing, names, quoted, withCandidates };
}

/** Why no candidate may be sent, when the plan has none to try. */
export function nothingToTry(plan: NamePlan, order: StoreOrder): Promise<HoldReason> {
  return plan.pricing.notPriced(order, [], [], undefined);
}

/** What the choice is made from: the first planned name's quote, and the fallback price when known. */
export interface ChooseInput {
  firstQuote: QuoteProgress;
  fallback: number | undefined;
}

/** The name to send and its quote, or why the order is held (every name tried priced at the fallback). */
export async function chooseName(plan: NamePlan, input: ChooseInput): Promise<PricedChoice<QuoteProgress>> {
  return plan.pricing.choose(await plan.quoted(), plan.names, input.firstQuote, input.fallback);
}
