/**
 * The dashboard, mounted at /dashboard by createApp. Without a token it only says how to enable it.
 *
 * Request flow: security headers → Redis reachable (./middleware/availability.ts) → login (public) →
 * authentication, session cookie or bearer token (./middleware/auth.ts) → CSRF check on every
 * state-changing request (./middleware/csrf.ts) → pages, actions, bull-board.
 *
 * A route reads its input, calls one use-case (./use-cases/) and turns the result into a page, a redirect
 * with a flash message, or a status. What the dashboard decides (whether an alias is acceptable and the
 * order worth replaying, whether a claim would be a duplicate, when to ask the service) is in the use-cases.
 */
import { Router } from 'express';
import { z } from 'zod';
import { DEFAULT_SESSION_TTL_MS, SessionSigner, type Flash } from './auth.js';
import { findOrderListing } from './data.js';
import { formatTime } from './html.js';
import { disabledPage, PAGE_CSP, QUEUES_CSP, securityHeaders } from './layout.js';
import { dashboardAuth } from './middleware/auth.js';
import { answerOr503 } from './middleware/availability.js';
import { csrfCheck } from './middleware/csrf.js';
import { dashboardErrors } from './middleware/errors.js';
import { orderFilter, readOrdersQuery } from './order-filters.js';
import { overviewRoutes } from './overview-routes.js';
import { serviceMapRoutes } from './service-map-page.js';
import { disputeForm, form } from './middleware/forms.js';
import { heldBody, notFoundBody, orderDetailBody, orderHref, ordersBody, type OrderDisputesView } from './pages.js';
import { moneyBody } from './money-page.js';
import type { DashboardDeps } from './ports.js';
import { queuesBoard, refuseWrites } from './queues.js';
import { responses } from './responses.js';
import { shopRoutes } from './shop-routes.js';
import { shopProfileRoutes } from './shop-profile-page.js';
import { shopScope } from './shop-scope.js';
import { addAliasAndReplay } from './use-cases/add-alias-and-replay.js';
import { cashReport } from './use-cases/cash-report.js';
import type { HeldOrderLookup, ReplayOutcome } from './use-cases/held-order.js';
import { heldOrders } from './use-cases/held-orders.js';
import { openDispute, type OpenDisputeOutcome } from './use-cases/open-dispute.js';
import type { OrderDisputes } from './use-cases/order-disputes.js';
import { replayHeldOrder } from './use-cases/replay-held-order.js';
import { viewOrder } from './use-cases/view-order.js';

const ORDERS_PAGE_SIZE = 100;
const HELD_PAGE_SIZE = 200;

/** How the dispute form's fields are named in messages. */
const DISPUTE_FIELD_LABELS: Record<string, string> = {
  reason: 'reason',
  description: 'description',
  claimantId: 'claimant id',
  claimantType: 'claimant type',
};

const sentence = (text: string) => text.trim().replace(/[.\s]+$/, '');

const daysParam = (allowed: number[], fallback: number) =>
  z.coerce
    .number()
    .int()
    .refine((d) => allowed.includes(d))
    .catch(fallback);

/** The replay's time the order page carries after a replay (`?replayed=`), when it is one. */
const replayedParam = (value: unknown): number | undefined =>
  typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : undefined;

const field = (body: unknown, name: string): unknown => (body as Record<string, unknown> | undefined)?.[name];

export function dashboardRoutes(deps: DashboardDeps | undefined): Router {
  if (deps) return enabledDashboard(deps);
  // Never open: with no token configured there is nothing to log in with, so say how to enable it.
  return Router().use((_req, res) => {
    securityHeaders(res, PAGE_CSP);
    res.status(404).type('html').send(disabledPage());
  });
}

/** Where an action on a held order goes back to, and with which message, when the order is not there to act on. */
function notActionable(lookup: Exclude<HeldOrderLookup, { kind: 'found' }>): { to: string; flash: Flash } {
  if (lookup.kind === 'not_found')
    return {
      to: '/dashboard/held',
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

function enabledDashboard(deps: DashboardDeps): Router {
  const router = Router();
  const signer = new SessionSigner(deps.token);
  const nowMs = () => deps.now().getTime();
  // The shops are read on every request: shops connected, switched on or off while Relais runs are listed at once.
  const scope = shopScope(deps.shops);

  router.use((req, res, next) => {
    securityHeaders(res, req.path === '/queues' || req.path.startsWith('/queues/') ? QUEUES_CSP : PAGE_CSP);
    next();
  });

  router.use(answerOr503({ redisConnected: deps.redisConnected, answerWithinMs: deps.answerWithinMs ?? 10_000 }));

  const auth = dashboardAuth({
    token: deps.token,
    signer,
    throttle: deps.loginThrottle,
    revocations: deps.revocations,
    sessionTtlMs: deps.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS,
    nowMs,
    logger: deps.logger,
  });
  const csrf = csrfCheck(signer, auth.viewerOf);
  const { send, redirectWithFlash, csrfOf } = responses(signer, auth.viewerOf, nowMs);
  router.use(auth.login);
  router.use(auth.authenticate);
  router.post('/logout', form, csrf, auth.logout);

  // ------------------------------------------------------------------------------------- pages
  router.get('/', (_req, res) => {
    res.redirect(303, '/dashboard/overview');
  });

  router.use('/overview', overviewRoutes(deps, scope, send));
  router.use('/service-map', serviceMapRoutes(deps, scope, send));

  router.get('/orders', async (req, res) => {
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

  /** The claims as the page shows them; a failure of Relais itself is logged and said in general terms. */
  const disputesView = (disputes: OrderDisputes, externalOrderId: string): OrderDisputesView => {
    const { source } = disputes;
    if (source.kind === 'unavailable')
      return { claims: disputes.claims, source: { kind: 'unavailable', why: sentence(source.why) } };
    if (source.kind !== 'failed') return { claims: disputes.claims, source };
    deps.logger.error({ err: source.error, order: externalOrderId }, 'dashboard: listing disputes failed');
    return {
      claims: disputes.claims,
      source: { kind: 'unavailable', why: 'Relais failed while asking (see the web process log)' },
    };
  };

  router.get('/orders/:id', async (req, res) => {
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
        ...(disputes ? { disputes: disputesView(disputes, record.meta.externalOrderId) } : {}),
      }),
    );
  });

  router.get('/held', async (req, res) => {
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

  router.get('/money', async (req, res) => {
    const shopId = scope.param(req.query.shop);
    const days = daysParam([7, 30, 90], 30).parse(req.query.days ?? 30);
    const report = await cashReport(deps, {
      shops: scope.zonesOf(shopId),
      since: new Date(nowMs() - days * 86_400_000),
    });
    send(
      req,
      res,
      { section: 'money', title: 'Cash & reconciliation' },
      moneyBody({ shops: scope.choices(), shopId, days, ...report }),
    );
  });

  // ----------------------------------------------------------------------------------- actions
  const logReplay = (outcome: ReplayOutcome) =>
    deps.logger.info(
      { order: outcome.record.meta.externalOrderId, ok: outcome.kind === 'replayed' },
      'dashboard replay',
    );

  router.post('/held/:id/alias', form, csrf, async (req, res) => {
    const result = await addAliasAndReplay(deps, String(req.params.id), {
      text: field(req.body, 'text'),
      neighbourhood: field(req.body, 'neighbourhood'),
    });
    const back = '/dashboard/held';
    switch (result.kind) {
      case 'not_found':
      case 'not_held': {
        const { to, flash } = notActionable(result);
        redirectWithFlash(req, res, to, flash);
        return;
      }
      case 'shop_missing':
        redirectWithFlash(req, res, back, {
          kind: 'error',
          message: `The shop ${result.record.meta.shopId} is no longer in the registry.`,
        });
        return;
      case 'invalid':
        redirectWithFlash(req, res, back, {
          kind: 'error',
          message: `Alias not added: ${result.problems.join('; ')}.`,
        });
        return;
      case 'unknown_neighbourhood':
        redirectWithFlash(req, res, back, {
          kind: 'error',
          message: `Alias not added: "${result.neighbourhood}" is not a known neighbourhood in ${result.country}${result.reason === undefined ? '' : ` (${result.reason})`}.`,
        });
        return;
    }
    const { alias } = result;
    const added = `Alias "${alias.text}" → ${alias.neighbourhood} added for ${alias.shopName}. `;
    if (result.kind === 'still_unresolved') {
      // Replaying an order whose address still does not resolve would only hold it again: said instead.
      const closest = result.suggestions.length ? `; closest: ${result.suggestions.join(', ')}` : '';
      redirectWithFlash(req, res, back, {
        kind: 'error',
        message: `${added}But the address of ${result.record.meta.orderName} still does not resolve (${result.reason}${closest}), so it was not replayed.`,
      });
      return;
    }
    logReplay(result);
    const { to, flash } = afterReplay(result, added);
    redirectWithFlash(req, res, to, flash);
  });

  router.post('/held/:id/replay', form, csrf, async (req, res) => {
    const result = await replayHeldOrder(deps, String(req.params.id));
    if (result.kind === 'replayed' || result.kind === 'not_replayed') logReplay(result);
    const { to, flash } =
      result.kind === 'replayed' || result.kind === 'not_replayed' ? afterReplay(result, '') : notActionable(result);
    redirectWithFlash(req, res, to, flash);
  });

  router.post('/orders/:id/disputes', disputeForm, csrf, async (req, res) => {
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

  // ------------------------------------------------------------------------------------ queues
  // Read-only, whoever asks: see ./queues.ts.
  router.use('/shops', shopProfileRoutes(deps, { send, redirectWithFlash, csrfOf, csrf }));
  router.use('/shops', shopRoutes(deps, { send, redirectWithFlash, csrfOf, csrf, viewerOf: auth.viewerOf }));
  router.use('/queues', refuseWrites, queuesBoard(deps.queues.all()));

  // ------------------------------------------------------------------------------ not found, errors
  router.use((req, res) => {
    send(req, res, { section: 'none', title: 'Not found' }, notFoundBody('There is no such dashboard page.'), 404);
  });

  router.use(dashboardErrors(deps.logger));

  return router;
}
