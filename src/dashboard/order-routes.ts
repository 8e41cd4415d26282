/**
 * The Orders pages, mounted at /dashboard/orders by the router: the list, one order's page (its timeline, its
 * claims), and the dispute form's action.
 */
import { Router, type RequestHandler } from 'express';
import { findOrderListing } from './use-cases/order-figures.js';
import { formatTime } from './html.js';
import { disputeForm, field } from './middleware/forms.js';
import { orderFilter, readOrdersQuery } from './order-filters.js';
import { notFoundBody, orderDetailBody, orderHref, ordersBody, type OrderDisputesView } from './pages.js';
import type { DashboardDeps } from './ports.js';
import type { Responses } from './responses.js';
import type { ShopScope } from './shop-scope.js';
import type { Flash } from './auth.js';
import { openDispute, type OpenDisputeOutcome } from './use-cases/open-dispute.js';
import type { OrderDisputes } from './use-cases/order-disputes.js';
import { viewOrder } from './use-cases/view-order.js';

const ORDERS_PAGE_SIZE = 100;

/** How the dispute form's fields are named in messages. */
const DISPUTE_FIELD_LABELS: Record<string, string> = {
  reason: 'reason',
  description: 'description',
  claimantId: 'claimant id',
  claimantType: 'claimant type',
};

const sentence = (text: string) => text.trim().replace(/[.\s]+$/, '');

/** The replay's time the order page carries after a replay (`?replayed=`), when it is one. */
const replayedParam = (value: unknown): number | undefined =>
  typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : undefined;

/** The flash message after a dispute form, for every outcome but an unknown order. */
function disputeMessage(outcome: Exclude<OpenDisputeOutcome, { kind: 'not_found' }>): Flash {
  const name = outcome.record.meta.orderName;
  switch (outcome.kind) {
    case 'no_shipment':
      return {
        kind: 'error',
        message: `Dispute not opened: ${name} has no shipment yet. A dispute is opened on a shipment, once the order is dispatched.`,
      };
    case 'invalid': {
      const problems = outcome.problems.map(
        (p) => `${(p.field === undefined ? undefined : DISPUTE_FIELD_LABELS[p.field]) ?? 'form'}: ${p.message}`,
      );
      return { kind: 'error', message: `Dispute not opened for ${name}: ${problems.join('; ')}.` };
    }
    case 'duplicate':
      return {
        kind: 'error',
        message: `Dispute not opened twice: ${name} already has this open claim (${outcome.claim.claimId ?? 'no id'}, opened ${formatTime(outcome.claim.createdAt)}).`,
      };
    case 'opened':
      return {
        kind: 'ok',
        message: `Dispute opened for ${name}: claim ${outcome.claimId ?? '(the service gave no id)'} on shipment ${outcome.shipmentId}. The service holds the shipment's settlement until it decides.`,
      };
    case 'refused':
      return {
        kind: 'error',
        message: outcome.retryable
          ? `Dispute not opened for ${name}: ${sentence(outcome.why)}. Reload this page first: if the service received it without answering, the claim is listed below.`
          : `Dispute not opened for ${name}: ${sentence(outcome.why)}.`,
      };
    case 'unconfirmed':
      return {
        kind: 'error',
        message: `Dispute for ${name} not confirmed: Relais failed while opening it (see the web process log). Reload this page to see whether the claim was opened before trying again.`,
      };
  }
}

/** The claims as the page shows them; a failure of Relais itself is logged and said in general terms. */
function disputesView(deps: DashboardDeps, disputes: OrderDisputes, externalOrderId: string): OrderDisputesView {
  const { source } = disputes;
  if (source.kind === 'unavailable')
    return { claims: disputes.claims, source: { kind: 'unavailable', why: sentence(source.why) } };
  if (source.kind !== 'failed') return { claims: disputes.claims, source };
  deps.logger.error({ err: source.error, order: externalOrderId }, 'dashboard: listing disputes failed');
  return {
    claims: disputes.claims,
    source: { kind: 'unavailable', why: 'Relais failed while asking (see the web process log)' },
  };
}

export function orderRoutes(
  deps: DashboardDeps,
  scope: ShopScope,
  tools: Responses & { csrf: RequestHandler },
): Router {
  const router = Router();
  const { send, redirectWithFlash, csrfOf, csrf } = tools;

  router.get('/', async (req, res) => {
    const query = readOrdersQuery(req.query, scope.param(req.query.shop));
    const filter = orderFilter(query, scope.zonesOf(query.shop), deps.now(), ORDERS_PAGE_SIZE);
    const listing = await findOrderListing(deps, filter);
    send(
      req,
      res,
      { section: 'orders', title: 'Orders' },
      ordersBody({ shops: scope.choices(), query, listing, shopName: scope.name }),
    );
  });

  router.get('/:id', async (req, res) => {
    const result = await viewOrder(deps, req.params.id, {
      replayedAt: replayedParam(req.query.replayed),
      askForClaims: req.query.claims === 'ask',
    });
    if (result.kind === 'not_found') {
      send(
        req,
        res,
        { section: 'orders', title: 'Not found' },
        notFoundBody('No order with this id in the ledger (finished orders are kept 90 days).'),
        404,
      );
      return;
    }
    const { record, reloading, disputes, timeline, suggestions } = result;
    send(
      req,
      res,
      { section: 'orders', title: record.meta.orderName, refreshSeconds: reloading ? 2 : undefined },
      orderDetailBody({
        record,
        shopName: scope.name(record.meta.shopId),
        timeline,
        csrf: csrfOf(req),
        suggestions,
        ...(disputes ? { disputes: disputesView(deps, disputes, record.meta.externalOrderId) } : {}),
      }),
    );
  });

  router.post('/:id/disputes', disputeForm, csrf, async (req, res) => {
    const id = String(req.params.id);
    const result = await openDispute(deps, id, {
      reason: field(req.body, 'reason'),
      description: field(req.body, 'description'),
      claimantId: field(req.body, 'claimantId'),
      claimantType: field(req.body, 'claimantType'),
    });
    if (result.kind === 'not_found') {
      redirectWithFlash(req, res, '/dashboard/orders', {
        kind: 'error',
        message: `No order ${id} in the ledger: no dispute opened.`,
      });
      return;
    }
    if (result.kind === 'opened' || result.kind === 'refused') {
      deps.logger.info(
        { order: id, ok: result.kind === 'opened', claim: result.kind === 'opened' ? result.claimId : undefined },
        'dashboard dispute',
      );
    }
    if (result.kind === 'unconfirmed')
      deps.logger.error({ err: result.error, order: id }, 'dashboard: opening a dispute failed');
    redirectWithFlash(req, res, orderHref(id), disputeMessage(result));
  });

  return router;
}
