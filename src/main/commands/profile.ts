/**
 * `relais profile`: the shop's wire profile. `relais profile learn --shop <id> [--apply]` drafts it from what the
 * service showed (src/ops/profile-learn-command.ts) and, with --apply, stores it for the shop.
 */
import { Command } from 'commander';
import type { ProfileLearnDeps } from '../../dashboard/use-cases/learn-shop-profile.js';
import { runProfileLearn } from '../../ops/profile-learn-command.js';
import { draftFromService } from '../../ops/profile-learn-draft.js';
import type { Runtime, RuntimeOptions } from '../runtime.js';
import { waitForLedger } from '../wait-for-services.js';
import { processOutput, withQuietRuntime } from './shared.js';

/** What `profile learn` needs, from a runtime (the stored profiles already read); the dashboard's page too. */
export function learnDepsOf(runtime: Runtime): ProfileLearnDeps {
  const draftDeps = { firstContact: runtime.firstContact, ledger: runtime.ledger, now: runtime.now };
  return {
    shops: runtime.options.shops,
    shopProfiles: runtime.shopProfiles,
    profileFor: (shop) => runtime.profiles.profileFor(shop),
    draft: (shop, inForce, outDir) => draftFromService(draftDeps, shop, inForce, outDir),
    announce: () => runtime.announceShops(),
    now: runtime.now,
  };
}

export function profileCommand(baseOptions: () => Promise<Omit<RuntimeOptions, 'logger'>>): Command {
  const profile = new Command('profile').description("The shop's wire profile: the delivery service's names");
  profile
    .command('learn')
    .description(
      'Drafts a complete wire profile for a shop from a probe, the delivery webhooks its profile refused and the state names the service used; --apply stores it for the shop',
    )
    .requiredOption('--shop <id>', 'the shop whose profile to learn')
    .option(
      '--out <dir>',
      'where to write the probe, learned.json and draft-profile.json (default relais-learn/<shop>-<time>)',
    )
    .option('--apply', "store the draft as the shop's profile: every process uses it without a restart")
    .action(async (options: { shop: string; out?: string; apply?: boolean }) => {
      process.exitCode = await withQuietRuntime(await baseOptions(), async (runtime) => {
        await waitForLedger(runtime);
        await runtime.profiles.reload();
        return runProfileLearn(learnDepsOf(runtime), options, processOutput());
      });
    });
  return profile;
}
