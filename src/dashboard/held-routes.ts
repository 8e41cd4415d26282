/**
 * The Held orders page, mounted at /dashboard/held by the router: the list, and its two actions on an order, an
 * alias for its address then a replay, or a replay alone.
 */
import { Router, type RequestHandler } from 'express';
import type { Flash } from './auth.js';
import { field, form } from './middleware/forms.js';
import { heldBody, orderHref } from './pages.js';
import type { DashboardDeps } from './ports.js';
import type { Responses } from './responses.js';
import type { ShopScope } from './shop-scope.js';
import { addAliasAndReplay, type AddAliasResult } from './use-cases/add-alias-and-replay.js';
import type { HeldOrderLookup, ReplayOutcome } from './use-cases/held-order.js';
import { heldOrders } from './use-cases/held-orders.js';
import { replayHeldOrder } from './use-cases/replay-held-order.js';

const HELD_PAGE_SIZE = 200;
const BACK = '/dashboard/held';

/** Where an action on a held order goes back to, and with which message, when the order is not there to act on. */
function notActionable(lookup: Exclude<HeldOrderLookup, { kind: 'found' }>): { to: string; flash: Flash } {
  if (lookup.kind === 'not_found')
    return {
      to: BACK,
      flash: { kind: 'error', message: `No order ${lookup.externalOrderId} in the ledger.` },
    };
  const { meta, state } = lookup.record;
  return {
    to: orderHref(meta.externalOrderId),
    flash: { kind: 'error', message: `${meta.orderName} is ${state.replace(/_/g, ' ')}, not held: nothing to replay.` },
  };
}

/** After a replay: the order page (reloading itself until the worker takes the order), saying what happened. */
function afterReplay(outcome: ReplayOutcome, done: string): { to: string; flash: Flash } {
  const { externalOrderId, orderName } = outcome.record.meta;
  return outcome.kind === 'replayed'
    ? {
        to: `${orderHref(externalOrderId)}?replayed=${String(outcome.replayedAt.getTime())}`,
        flash: { kind: 'ok', message: `${done}${orderName} replayed: it is being dispatched now.` },
      }
    : {
        to: orderHref(externalOrderId),
        flash: { kind: 'error', message: `${done}${orderName} was not replayed: ${outcome.why}.` },
      };
}

function logReplay(deps: DashboardDeps, outcome: ReplayOutcome): void {
  deps.logger.info({ order: outcome.record.meta.externalOrderId, ok: outcome.kind === 'replayed' }, 'dashboard replay');
}

/** Where the alias form goes next and with which message: the order replayed, or why not. */
function afterAlias(deps: DashboardDeps, result: AddAliasResult): { to: string; flash: Flash } {
  switch (result.kind) {
    case 'not_found':
    case 'not_held':
      return notActionable(result);
    case 'shop_missing':
      return {
        to: BACK,
        flash: { kind: 'error', message: `The shop ${result.record.meta.shopId} is no longer in the registry.` },
      };
    case 'invalid':
      return { to: BACK, flash: { kind: 'error', message: `Alias not added: ${result.problems.join('; ')}.` } };
    case 'unknown_neighbourhood':
      return {
        to: BACK,
        flash: {
          kind: 'error',
          message: `Alias not added: "${result.neighbourhood}" is not a known neighbourhood in ${result.country}${result.reason === undefined ? '' : ` (${result.reason})`}.`,
        },
      };
  }
  const { alias } = result;
  const added = `Alias "${alias.text}" → ${alias.neighbourhood} added for ${alias.shopName}. `;
  if (result.kind === 'still_unresolved') {
    // Replaying an order whose address still does not resolve would only hold it again: said instead.
    const closest = result.suggestions.length ? `; closest: ${result.suggestions.join(', ')}` : '';
    return {
      to: BACK,
      flash: {
        kind: 'error',
        message: `${added}But the address of ${result.record.meta.orderName} still does not resolve (${result.reason}${closest}), so it was not replayed.`,
      },
    };
  }
  logReplay(deps, result);
  return afterReplay(result, added);
}

export function heldRoutes(deps: DashboardDeps, scope: ShopScope, tools: Responses & { csrf: RequestHandler }): Router {
  const router = Router();
  const { send, redirectWithFlash, csrfOf, csrf } = tools;

  router.get('/', async (req, res) => {
    const { held, unready } = await heldOrders(deps, HELD_PAGE_SIZE);
    const withShop = <T extends { record: { meta: { shopId: string } } }>(item: T) => ({
      ...item,
      shopName: scope.name(item.record.meta.shopId),
    });
    send(
      req,
      res,
      { section: 'held', title: 'Held orders', heldCount: held.length },
      heldBody({ held: held.map(withShop), unready: unready.map(withShop), csrf: csrfOf(req) }),
    );
  });

  router.post('/:id/alias', form, csrf, async (req, res) => {
    const result = await addAliasAndReplay(deps, String(req.params.id), {
      text: field(req.body, 'text'),
      neighbourhood: field(req.body, 'neighbourhood'),
    });
    const { to, flash } = afterAlias(deps, result);
    redirectWithFlash(req, res, to, flash);
  });

  router.post('/:id/replay', form, csrf, async (req, res) => {
    const result = await replayHeldOrder(deps, String(req.params.id));
    if (result.kind === 'replayed' || result.kind === 'not_replayed') logReplay(deps, result);
    const { to, flash } =
      result.kind === 'replayed' || result.kind === 'not_replayed' ? afterReplay(result, '') : notActionable(result);
    redirectWithFlash(req, res, to, flash);
  });

  return router;
}
