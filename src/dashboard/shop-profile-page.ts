/**
 * The shop's "Service names" page (issue 28, item 3), at /dashboard/shops/<id>/profile, linked from the shop's
 * settings: what `relais profile learn` finds (the signature header the refused webhooks verify with, the state
 * names no step maps, each with the learner's guess to confirm), and one form that stores the shop's profile as
 * `relais profile learn --apply` does. Names only: never a secret, a header's value or a webhook's body.
 */
import express, { Router, type Request, type RequestHandler } from 'express';
import { DELIVERY_STEPS } from '../domain/shipment-status.js';
import type { UnmappedState } from './use-cases/learn-shop-profile.js';
import { html, type SafeHtml } from './html.js';
import { shopProfileHref } from './links.js';
import type { DashboardDeps } from './ports.js';
import type { Responses } from './responses.js';
import {
  applyLearnedProfile,
  learnedProfile,
  readStepsForm,
  STEP_FIELD,
  type LearnedProfileView,
} from './use-cases/learn-profile.js';

/** One field per state name plus the CSRF token: a service may use a few dozen names. */
const stepsForm = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 100 });

function signatureCard(view: LearnedProfileView): SafeHtml {
  return html`<div class="card" id="signature"><h2>Webhooks refused</h2>${
    view.signatureHeader
      ? html`<p>Signed with header <code id="signature-header">${view.signatureHeader}</code>, which verifies with your secret: use it.</p>`
      : html`<p class="muted">No header of the refused webhooks verifies with the shop's signing secret (or none was refused).</p>`
  }</div>`;
}

/** "seen after picked_up (PICKED)": the step Relais knew the state before it as, and that state's name. */
const seenAfter = (s: UnmappedState) =>
  s.after === undefined
    ? ''
    : html`seen after ${s.afterStep ?? 'an unmapped state'} <span class="muted mono">(${s.after})</span>`;

function stateRow(s: UnmappedState): SafeHtml {
  return html`<tr><td class="mono">${s.state}</td><td>${seenAfter(s)}</td>
    <td><select name="${STEP_FIELD}${s.state}" aria-label="Step for ${s.state}">
      <option value="">(leave unmapped)</option>
      ${DELIVERY_STEPS.map((step) => html`<option value="${step}" ${step === s.step ? 'selected' : ''}>${step}</option>`)}
    </select></td>
    <td>${s.guess && s.step ? html`<span class="badge warn">guess: check it</span>` : ''}</td></tr>`;
}

const list = (id: string, title: string, lines: string[]) =>
  lines.length === 0
    ? ''
    : html`<div class="card" id="${id}"><h2>${title}</h2><ul>${lines.map((l) => html`<li>${l}</li>`)}</ul></div>`;

export function shopProfileBody(view: LearnedProfileView, csrf: string | undefined): SafeHtml {
  return html`<h1>Service names · <span class="mono">${view.shopId}</span></h1>
  <p class="muted">What the delivery service showed this shop: the webhooks Relais refused and the state names it used.
  Saving stores the shop's wire profile (what <code>relais profile learn --apply</code> stores); every process uses it at once.</p>
  ${signatureCard(view)}
  <form class="card" method="post" action="${shopProfileHref(view.shopId)}">${csrf ? html`<input type="hidden" name="_csrf" value="${csrf}">` : ''}
    <h2>Service states not mapped</h2>
    ${
      view.states.length === 0
        ? html`<p class="muted">Every state name the service used is mapped to a step.</p>`
        : html`<table id="states"><thead><tr><th>State</th><th>Seen</th><th>Step</th><th></th></tr></thead>
          <tbody>${view.states.map(stateRow)}</tbody></table>`
    }
    <button type="submit">Save the shop's profile</button>
  </form>
  ${list('not-learned', 'Could not learn', view.notLearned)}
  ${list('to-check', 'Check', view.toCheck)}`;
}

export function shopProfileRoutes(deps: DashboardDeps, tools: Responses & { csrf: RequestHandler }): Router {
  const router = Router();
  const { send, redirectWithFlash, csrfOf, csrf } = tools;
  const idOf = (req: Request) => String(req.params.id);
  const unavailable = (req: Request, res: express.Response, why: string) =>
    send(
      req,
      res,
      { section: 'shops', title: 'Service names' },
      html`<h1>Service names</h1><div class="card">${why}</div>`,
      404,
    );

  router.get('/:id/profile', async (req, res) => {
    const learned = deps.profileLearn
      ? await learnedProfile(deps.profileLearn, idOf(req))
      : { kind: 'not_learned' as const, why: 'Learning profiles is not available in this process.' };
    if (learned.kind === 'not_learned') return void unavailable(req, res, learned.why);
    send(
      req,
      res,
      { section: 'shops', title: `Service names · ${idOf(req)}` },
      shopProfileBody(learned.view, csrfOf(req)),
    );
  });

  router.post('/:id/profile', stepsForm, csrf, async (req, res) => {
    const id = idOf(req);
    if (!deps.profileLearn) return void unavailable(req, res, 'Learning profiles is not available in this process.');
    const stored = await applyLearnedProfile(deps.profileLearn, id, readStepsForm(req.body));
    if (stored.kind === 'not_learned') {
      redirectWithFlash(req, res, shopProfileHref(id), { kind: 'error', message: `Not stored: ${stored.why}` });
      return;
    }
    deps.logger.info({ shop: id, version: stored.version }, 'dashboard: shop profile stored');
    redirectWithFlash(req, res, shopProfileHref(id), {
      kind: 'ok',
      message: `Stored as version ${stored.version} of the shop's profile; every process uses it now.`,
    });
  });
  return router;
}
