/**
 * `relais profile learn --shop <id> [--apply]` (issue 28): drafts a complete wire profile for the shop from what
 * the service showed. The probe's exchanges (a fresh probe: field spellings, error bodies), the delivery webhooks
 * the shop's profile refused (signature, shape) and every state name the service used (their steps). Prints what
 * it learned, what it could not and what to check; writes the draft; with --apply stores it as the shop's profile,
 * which every process then uses without a restart.
 *
 * Exit status: 0 when the draft was written (and stored, with --apply); 1 for a usage error or a draft that does
 * not validate; 2 when the probe could not run.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ShopConfig, ShopRegistry } from '../shops/shops.js';
import { parseWireProfile, type WireProfile, type WireProfileDocument } from '../adapters/dispatch-api/profile.js';
import type { FirstContactStore, SeenState, ShopProfileStore } from '../ledger/first-contact.js';
import type { OrderLedger } from '../ledger/order-ledger.js';
import { DELIVERY_STEPS, type DeliveryStep } from '../domain/shipment-status.js';
import { ProbeFailure, probeTargetForShop, runProbe, type ProbeReport } from './probe.js';
import {
  learnShapes,
  learnSignature,
  placeStates,
  type LearnedShapes,
  type LearnedSignature,
} from './profile-learn.js';

export interface ProfileLearnDeps {
  shops: ShopRegistry;
  firstContact: FirstContactStore;
  shopProfiles: ShopProfileStore;
  /** The profile in force for a shop (its stored one, else its settings'). */
  profileFor(shop: ShopConfig): WireProfile;
  ledger: Pick<OrderLedger, 'get'>;
  /** Tells every process to read the stored profiles again. */
  announce(): Promise<void>;
  now(): Date;
}

export interface ProfileLearnOptions {
  shop: string;
  /** Where to write the probe's files, learned.json and draft-profile.json; default relais-learn/<shop>-<time>. */
  out?: string;
  apply?: boolean;
  /** Who stores it, in the profile's history; default "relais profile learn". */
  by?: string;
}

interface Output {
  write(text: string): unknown;
}

/** What one run learned, for the printed report and learned.json. */
export interface LearnReport {
  learned: string[];
  notLearned: string[];
  toCheck: string[];
  document: WireProfileDocument;
  version?: number;
  /** The signature header that verifies with the shop's secret (its name only), when one was found. */
  signatureHeader?: string;
  /** Each state the service used that the profile in force does not map: its step, guessed or unknown. */
  states: UnmappedState[];
}

export interface UnmappedState {
  state: string;
  /** The state seen just before it on the same shipment, when known. */
  after?: string;
  /** The step Relais knew that state as, when it knew it. */
  afterStep?: DeliveryStep;
  /** Where the draft puts it; undefined when no step could be guessed. */
  step?: DeliveryStep;
  /** True while the step is the learner's guess, to be checked. */
  guess: boolean;
}

/** What a learning run came to: the draft (stored when asked), or why there is none. */
export type LearnOutcome =
  | { kind: 'no_shop'; known: string[] }
  | { kind: 'probe_failed'; message: string }
  | { kind: 'invalid'; message: string }
  | { kind: 'learned'; report: LearnReport; draftFile: string };

/**
 * The one way a shop's profile is learned, for the CLI and the dashboard alike: probes, completes the draft from
 * the kept webhooks and states, puts each state named in `steps` under the step given (the operator's choice over
 * the guess), validates, writes the draft to `out` and, with `apply`, stores it and announces it to every process.
 */
export async function learnShopProfile(
  deps: ProfileLearnDeps,
  options: ProfileLearnOptions & { steps?: Record<string, DeliveryStep> },
): Promise<LearnOutcome> {
  const shop = deps.shops.get(options.shop);
  if (!shop) return { kind: 'no_shop', known: deps.shops.all().map((s) => s.id) };
  const stamp = deps
    .now()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const outDir = options.out ?? join('relais-learn', `${shop.id}-${stamp}`);
  mkdirSync(outDir, { recursive: true });
  const inForce = deps.profileFor(shop);
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
  const report = await learn(deps, shop, inForce, probe);
  chooseSteps(report, options.steps ?? {});
  try {
    parseWireProfile(report.document, 'learned profile');
  } catch (error) {
    return { kind: 'invalid', message: (error as Error).message };
  }
  const draftFile = join(outDir, 'draft-profile.json');
  writeFileSync(draftFile, `${JSON.stringify(report.document, null, 2)}\n`, { mode: 0o600 });
  if (options.apply) {
    report.version = await deps.shopProfiles.save(shop.id, report.document, options.by ?? 'relais profile learn');
    await deps.announce();
  }
  writeFileSync(join(outDir, 'learned.json'), `${JSON.stringify({ ...report, document: undefined }, null, 2)}\n`, {
    mode: 0o600,
  });
  return { kind: 'learned', report, draftFile };
}

/** Moves each chosen state under its chosen step: the operator's word replaces the learner's guess. */
function chooseSteps(report: LearnReport, steps: Record<string, DeliveryStep>): void {
  const lists = report.document.states;
  for (const [state, step] of Object.entries(steps)) {
    if (!(DELIVERY_STEPS as readonly string[]).includes(step)) continue;
    for (const list of Object.values(lists)) {
      const at = list.indexOf(state);
      if (at >= 0) list.splice(at, 1);
    }
    lists[step].push(state);
    const entry = report.states.find((s) => s.state === state);
    if (entry) Object.assign(entry, { step, guess: false });
  }
}

export async function runProfileLearn(
  deps: ProfileLearnDeps,
  options: ProfileLearnOptions,
  io: { stdout: Output; stderr: Output },
): Promise<number> {
  const outcome = await learnShopProfile(deps, options);
  switch (outcome.kind) {
    case 'no_shop':
      io.stderr.write(
        `relais profile learn: no shop "${options.shop}" (known: ${outcome.known.join(', ') || 'none'})\n`,
      );
      return 1;
    case 'probe_failed':
      io.stderr.write(`relais profile learn: the probe could not run: ${outcome.message}\n`);
      return 2;
    case 'invalid':
      io.stderr.write(`relais profile learn: the draft does not validate, nothing stored:\n${outcome.message}\n`);
      return 1;
    case 'learned':
      io.stdout.write(renderLearnReport(options.shop, outcome.report, outcome.draftFile));
      return 0;
  }
}

/** The probe's draft, completed with the webhook and the states. */
async function learn(
  deps: ProfileLearnDeps,
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

export function renderLearnReport(shopId: string, report: LearnReport, draftFile: string): string {
  const section = (title: string, lines: string[]) =>
    lines.length === 0 ? '' : `${title}\n${lines.map((l) => `  - ${l}`).join('\n')}\n`;
  return [
    `relais profile learn: shop ${shopId}\n`,
    section('Learned:', report.learned),
    section('Could not learn:', report.notLearned),
    section('Check:', report.toCheck),
    `Draft written to ${draftFile}\n`,
    report.version === undefined
      ? "Not stored: run again with --apply to make it the shop's profile.\n"
      : `Stored as version ${report.version} of the shop's profile; every process uses it now.\n`,
  ].join('');
}
