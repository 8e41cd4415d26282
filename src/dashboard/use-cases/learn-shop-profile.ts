/**
 * Learning a shop's wire profile (issue 28): the one use case behind `relais profile learn` (src/ops/
 * profile-learn-command.ts prints its outcome) and the dashboard's "Service names" page (./learn-profile.ts). The
 * draft of what the service showed comes through a port (`draft`, src/ops/profile-learn-draft.ts: a probe, the
 * webhooks the shop's profile refused, the state names seen); this use case puts each state the operator placed
 * under the step chosen, validates the draft, writes it and, when asked, stores it and announces it to every process.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ShopConfig, ShopRegistry } from '../../shops/shops.js';
import { parseWireProfile, type WireProfile, type WireProfileDocument } from '../../adapters/dispatch-api/profile.js';
import type { ShopProfileStore } from '../../ledger/first-contact.js';
import { DELIVERY_STEPS, type DeliveryStep } from '../../domain/shipment-status.js';

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

/** The draft of what the service showed, or why the probe could not run. */
export type Drafted = { kind: 'drafted'; report: LearnReport } | { kind: 'probe_failed'; message: string };

export interface ProfileLearnDeps {
  shops: ShopRegistry;
  shopProfiles: ShopProfileStore;
  /** The profile in force for a shop (its stored one, else its settings'). */
  profileFor(shop: ShopConfig): WireProfile;
  /** What the service showed, drafted over the profile in force; the probe's files go under `outDir`. */
  draft(shop: ShopConfig, inForce: WireProfile, outDir: string): Promise<Drafted>;
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
  const drafted = await deps.draft(shop, deps.profileFor(shop), outDir);
  if (drafted.kind === 'probe_failed') return drafted;
  const { report } = drafted;
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
