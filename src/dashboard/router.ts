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
import { DEFAULT_SESSION_TTL_MS, SessionSigner } from './auth.js';
import { heldRoutes } from './held-routes.js';
import { disabledPage, PAGE_CSP, QUEUES_CSP, securityHeaders } from './layout.js';
import { dashboardAuth } from './middleware/auth.js';
import { answerOr503 } from './middleware/availability.js';
import { csrfCheck } from './middleware/csrf.js';
import { dashboardErrors } from './middleware/errors.js';
import { form } from './middleware/forms.js';
import { moneyBody } from './money-page.js';
import { orderRoutes } from './order-routes.js';
import { overviewRoutes } from './overview-routes.js';
import { notFoundBody } from './pages.js';
import type { DashboardDeps } from './ports.js';
import { queuesBoard, refuseWrites } from './queues.js';
import { responses, type Responses } from './responses.js';
import { serviceMapRoutes } from './service-map-page.js';
import { shopProfileRoutes } from './shop-profile-page.js';
import { shopRoutes } from './shop-routes.js';
import { shopScope, type ShopScope } from './shop-scope.js';
import { cashReport } from './use-cases/cash-report.js';

const daysParam = (allowed: number[], fallback: number) =>
  z.coerce
    .number()
    .int()
    .refine((d) => allowed.includes(d))
    .catch(fallback);

export function dashboardRoutes(deps: DashboardDeps | undefined): Router {
  if (deps) return enabledDashboard(deps);
  // Never open: with no token configured there is nothing to log in with, so say how to enable it.
  return Router().use((_req, res) => {
    securityHeaders(res, PAGE_CSP);
    res.status(404).type('html').send(disabledPage());
  });
}

/** The Cash & reconciliation page, mounted at /dashboard/money: the cash of the last 7, 30 or 90 days. */
function moneyRoutes(deps: DashboardDeps, scope: ShopScope, send: Responses['send']): Router {
  return Router().get('/', async (req, res) => {
    const shopId = scope.param(req.query.shop);
    const days = daysParam([7, 30, 90], 30).parse(req.query.days ?? 30);
    const report = await cashReport(deps, {
      shops: scope.zonesOf(shopId),
      since: new Date(deps.now().getTime() - days * 86_400_000),
    });
    send(
      req,
      res,
      { section: 'money', title: 'Cash & reconciliation' },
      moneyBody({ shops: scope.choices(), shopId, days, ...report }),
    );
  });
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
  const tools = { ...responses(signer, auth.viewerOf, nowMs), csrf };
  router.use(auth.login);
  router.use(auth.authenticate);
  router.post('/logout', form, csrf, auth.logout);

  // ------------------------------------------------------------------------------ pages and their actions
  router.get('/', (_req, res) => {
    res.redirect(303, '/dashboard/overview');
  });
  router.use('/overview', overviewRoutes(deps, scope, tools.send));
  router.use('/service-map', serviceMapRoutes(deps, scope, tools.send));
  router.use('/orders', orderRoutes(deps, scope, tools));
  router.use('/held', heldRoutes(deps, scope, tools));
  router.use('/money', moneyRoutes(deps, scope, tools.send));
  router.use('/shops', shopProfileRoutes(deps, tools));
  router.use('/shops', shopRoutes(deps, { ...tools, viewerOf: auth.viewerOf }));

  // ------------------------------------------------------------------------------------ queues
  // Read-only, whoever asks: see ./queues.ts.
  router.use('/queues', refuseWrites, queuesBoard(deps.queues.all()));

  // ------------------------------------------------------------------------------ not found, errors
  router.use((req, res) => {
    tools.send(
      req,
      res,
      { section: 'none', title: 'Not found' },
      notFoundBody('There is no such dashboard page.'),
      404,
    );
  });

  router.use(dashboardErrors(deps.logger));

  return router;
}
