/**
 * What `relais profile learn` drafts from what the service showed (issue 28): a fresh probe (field spellings,
 * error bodies), completed with the delivery webhooks the shop's profile refused (signature, shape) and every state
 * name the service used (their steps). The use case (src/dashboard/use-cases/learn-shop-profile.ts) takes it as its
 * `draft` port, which src/main/commands/profile.ts wires.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ShopConfig } from '../shops/shops.js';
import type { WireProfile, WireProfileDocument } from '../adapters/dispatch-api/profile.js';
import type { FirstContactStore, SeenState } from '../ledger/first-contact.js';
import type { OrderLedger } from '../ledger/order-ledger.js';
import type { Drafted, LearnReport } from '../dashboard/use-cases/learn-shop-profile.js';
import { ProbeFailure, probeTargetForShop, runProbe, type ProbeReport } from './probe.js';
import {
  learnShapes,
  learnSignature,
  placeStates,
  type LearnedShapes,
  type LearnedSignature,
} from './profile-learn.js';

export interface ProfileDraftDeps {
  firstContact: FirstContactStore;
  ledger: Pick<OrderLedger, 'get'>;
  now(): Date;
}

/** Probes the service with the shop's key (its files under outDir/probe), then completes the probe's draft. */
export async function draftFromService(
  deps: ProfileDraftDeps,
  shop: ShopConfig,
  inForce: WireProfile,
  outDir: string,
): Promise<Drafted> {
  let probe: ProbeReport;
  try {
    probe = await runProbe({
      target: { ...probeTargetForShop(shop), profile: inForce },
      outDir: join(outDir, 'probe'),
      now: deps.now,
    });
  } catch (error) {
    if (!(error instanceof ProbeFailure)) throw error;
    return { kind: 'probe_failed', message: error.message };
  }
  return { kind: 'drafted', report: await learn(deps, shop, inForce, probe) };
}

/** The probe's draft, completed with the webhook and the states. */
async function learn(
  deps: ProfileDraftDeps,
  shop: ShopConfig,
  inForce: WireProfile,
  probe: ProbeReport,
): Promise<LearnReport> {
  const base = JSON.parse(readFileSync(probe.files.draft, 'utf8')) as WireProfileDocument;
  // The probe guesses states from their words alone; the states are placed below from what was seen, in order.
  const document: WireProfileDocument = { ...base, states: structuredClone(inForce.document.states) };
  const out: LearnReport = {
    learned: [...probe.draft.changes.filter((c) => !c.startsWith('states.'))],
    notLearned: [],
    toCheck: [],
    document,
    states: [],
  };
  const samples = await deps.firstContact.webhookSamples(shop.id, deps.now());
  const seen = await deps.firstContact.seenStates(shop.id);
  const probed: SeenState[] = probe.states
    .filter((s) => !seen.some((x) => x.state === s.state))
    .map((s) => ({ state: s.state, source: 'listShipments', firstSeenAt: deps.now() }));
  placeAll(out, [...seen, ...probed], inForce);

  const secret = shop.dispatch.webhookSigningSecret?.reveal();
  if (secret === undefined)
    out.notLearned.push('the signature: the shop has no dispatch.webhookSigningSecret, so Relais checks none');
  else signatureInto(out, learnSignature(samples, secret), samples.length);

  const shipmentOf = async (value: string) => {
    const record = value.length <= 200 ? await deps.ledger.get(value) : undefined;
    return record?.meta.shopId === shop.id ? record.shipment?.shipmentId : undefined;
  };
  const names = new Set([...seen.map((s) => s.state), ...inForce.knownStates().map((s) => s.state)]);
  shapesInto(out, await learnShapes(samples, shipmentOf, names));
  document.name = `${shop.id}-learned`;
  document.description = `Learned by relais profile learn on ${deps.now().toISOString()} from profile "${inForce.name}", the probe, ${samples.length} kept webhooks and ${seen.length} state names.`;
  return out;
}

function placeAll(out: LearnReport, seen: SeenState[], inForce: WireProfile): void {
  const { document } = out;
  for (const placed of placeStates(seen, (state) => inForce.stepOf(state))) {
    document.states[placed.step].push(placed.state);
    out.learned.push(`states.${placed.step}: "${placed.state}"`);
    out.toCheck.push(`"${placed.state}" placed under ${placed.step}: ${placed.why}`);
    const sighting = seen.find((s) => s.state === placed.state);
    out.states.push({
      state: placed.state,
      after: sighting?.after,
      afterStep: sighting?.afterStep,
      step: placed.step,
      guess: true,
    });
  }
  const unplaced = seen.filter(
    (s) => inForce.stepOf(s.state) === undefined && !Object.values(document.states).some((l) => l.includes(s.state)),
  );
  for (const s of unplaced) {
    out.states.push({ state: s.state, after: s.after, afterStep: s.afterStep, guess: true });
    out.notLearned.push(
      `a step for "${s.state}" (first seen in ${s.source}${s.after ? ` after "${s.after}"` : ''}): add it under the right step by hand`,
    );
  }
}

function signatureInto(out: LearnReport, signature: LearnedSignature | undefined, kept: number): void {
  if (!signature) {
    out.notLearned.push(
      kept === 0
        ? 'the signature: no refused webhook was kept yet (the profile in force may already verify them)'
        : `the signature: no header of the ${kept} kept webhooks verifies with the shop's signing secret (HMAC-SHA256/SHA1/SHA512, hex or base64, with or without a prefix); check the secret with the service`,
    );
    return;
  }
  const { verified, signed, ...scheme } = signature;
  out.document.webhook.signature = scheme;
  out.signatureHeader = scheme.header;
  out.learned.push(
    `webhook.signature: header ${scheme.header}, ${scheme.algorithm} ${scheme.encoding}, prefix "${scheme.prefix}" (verifies ${verified} of ${signed} signed webhooks with your secret)`,
  );
  if (verified < signed)
    out.toCheck.push(`${signed - verified} signed webhooks do not verify with it: another secret, or not the service?`);
}

function shapesInto(out: LearnReport, shapes: LearnedShapes): void {
  const hook = out.document.webhook;
  const first = (
    list: string[],
    path: string | undefined,
    what: string,
    key: 'shipmentIdPaths' | 'externalOrderIdPaths' | 'statePaths',
  ) => {
    if (path === undefined) return void out.notLearned.push(`where the webhook carries ${what}`);
    hook[key] = [path, ...list.filter((p) => p !== path)];
    out.learned.push(`webhook.${key}: "${path}" (${what}, found in ${shapes.read} of ${shapes.samples} kept webhooks)`);
  };
  if (shapes.samples === 0) return void out.notLearned.push('the webhook shape: no webhook was kept');
  first(hook.shipmentIdPaths, shapes.shipmentIdPath, 'the shipment id', 'shipmentIdPaths');
  first(hook.externalOrderIdPaths, shapes.externalOrderIdPath, 'the external order id', 'externalOrderIdPaths');
  first(hook.statePaths, shapes.statePath, 'the state', 'statePaths');
  if (shapes.event) {
    hook.event = shapes.event;
    out.toCheck.push(
      `webhook.event: "${shapes.event.path}" is "${shapes.event.statusChanged}" in every kept webhook; taken as the status-change event`,
    );
  }
}
