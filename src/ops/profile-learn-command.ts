/**
 * `relais profile learn --shop <id> [--apply]` (issue 28): drafts a complete wire profile for the shop from what
 * the service showed (learnShopProfile, src/dashboard/use-cases/learn-shop-profile.ts, the use case the dashboard
 * runs too). Prints what it learned, what it could not and what to check; the draft is written; with --apply it
 * is stored as the shop's profile, which every process then uses without a restart.
 *
 * Exit status: 0 when the draft was written (and stored, with --apply); 1 for a usage error or a draft that does
 * not validate; 2 when the probe could not run.
 */
import {
  learnShopProfile,
  type LearnReport,
  type ProfileLearnDeps,
  type ProfileLearnOptions,
} from '../dashboard/use-cases/learn-shop-profile.js';

interface Output {
  write(text: string): unknown;
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
