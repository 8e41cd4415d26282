/**
 * The dashboard's "Learn the service's names" (issue 28, item 3): what `relais profile learn` finds for a shop,
 * and storing it with the steps the operator picked. Both go through learnShopProfile, the function the CLI runs,
 * so the page stores exactly what `relais profile learn --apply` would (and announces it to every process).
 * The probe's files and the draft go to a temporary directory, removed once read: the page shows names only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DELIVERY_STEPS, type DeliveryStep } from '../../domain/shipment-status.js';
import {
  learnShopProfile,
  type LearnOutcome,
  type ProfileLearnDeps,
  type UnmappedState,
} from './learn-shop-profile.js';

export interface LearnedProfileView {
  shopId: string;
  /** The header whose value verifies the refused webhooks with the shop's secret (its name, never a value). */
  signatureHeader?: string;
  /** States the profile in force does not map, each with the draft's step (a guess) or none. */
  states: UnmappedState[];
  notLearned: string[];
  toCheck: string[];
}

export type LearnedProfile =
  { kind: 'learned'; view: LearnedProfileView; version?: number } | { kind: 'not_learned'; why: string };

/** The prefix of a state's step field: `step:<state name>`. */
export const STEP_FIELD = 'step:';

async function inTemporaryDir(run: (out: string) => Promise<LearnOutcome>): Promise<LearnOutcome> {
  const out = mkdtempSync(join(tmpdir(), 'relais-learn-'));
  try {
    return await run(out);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function viewOf(shopId: string, outcome: LearnOutcome): LearnedProfile {
  switch (outcome.kind) {
    case 'no_shop':
      return { kind: 'not_learned', why: `No shop ${shopId} is served.` };
    case 'probe_failed':
      return { kind: 'not_learned', why: `The delivery service could not be probed: ${outcome.message}` };
    case 'invalid':
      return { kind: 'not_learned', why: `The draft does not validate, nothing stored: ${outcome.message}` };
    case 'learned': {
      const { report } = outcome;
      return {
        kind: 'learned',
        view: {
          shopId,
          signatureHeader: report.signatureHeader,
          states: report.states,
          notLearned: report.notLearned,
          toCheck: report.toCheck,
        },
        version: report.version,
      };
    }
  }
}

/** What `relais profile learn --shop <id>` would draft now, without storing it. */
export async function learnedProfile(deps: ProfileLearnDeps, shopId: string): Promise<LearnedProfile> {
  return viewOf(shopId, await inTemporaryDir((out) => learnShopProfile(deps, { shop: shopId, out })));
}

/** Learns again and stores the draft, each state under the step picked, as `relais profile learn --apply` does. */
export async function applyLearnedProfile(
  deps: ProfileLearnDeps,
  shopId: string,
  steps: Record<string, DeliveryStep>,
): Promise<LearnedProfile> {
  return viewOf(
    shopId,
    await inTemporaryDir((out) =>
      learnShopProfile(deps, { shop: shopId, out, apply: true, steps, by: 'dashboard: learn the service names' }),
    ),
  );
}

/** The steps picked in the form: `step:<state>` fields whose value is a step; anything else is ignored. */
export function readStepsForm(body: unknown): Record<string, DeliveryStep> {
  const steps = Object.create(null) as Record<string, DeliveryStep>;
  for (const [name, value] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    if (!name.startsWith(STEP_FIELD) || typeof value !== 'string') continue;
    if ((DELIVERY_STEPS as readonly string[]).includes(value))
      steps[name.slice(STEP_FIELD.length)] = value as DeliveryStep;
  }
  return steps;
}
