/**
 * The report `relais probe` prints: the calls made, then each finding with ✔ or ✘ and what to add to the profile,
 * the fallback tariff, the webhook note, the draft's changes and where the files were saved.
 */
import { stepsNotSeen } from './probe-analysis.js';
import type { ProbeReport } from './probe.js';

const OK = '✔';
const NO = '✘';

export function renderProbeReport(report: ProbeReport): string {
  const sections: string[][] = [
    [
      `relais probe: ${report.baseUrl} (tracking ${report.trackingUrl}), wire profile "${report.profile}", ${report.probedAt}`,
    ],
    [
      'Calls (read-only and quotes; nothing a courier or customer sees):',
      ...report.calls.map((c) => `  ${c.method.padEnd(4)} ${c.path}  ${c.status ?? c.error ?? '?'}  (${c.step})`),
    ],
    ['Fields:', ...fieldLines(report)],
    ['States:', ...stateLines(report)],
    ['Errors:', ...errorLines(report)],
    ['Fallback tariff (same weight, cash on delivery):', ...fallbackLines(report)],
    [`Webhook: ${report.webhook}`],
    verdictLines(report),
    [`Saved: ${report.files.exchanges} (API key redacted), ${report.files.learned}, ${report.files.draft}`],
  ];
  // One blank line between sections.
  return `${sections.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}

function fieldLines(report: ProbeReport): string[] {
  const fields = report.fields.map((f) => {
    if (f.matched !== undefined) return `  ${OK} ${f.resource}: ${f.field} as "${f.matched}"`;
    if (f.guessed !== undefined)
      return `  ${NO} ${f.resource}: ${f.field} not under ${f.tried.join(', ')}; probably "${f.guessed}" (below)`;
    if (f.required)
      return `  ${NO} ${f.resource}: ${f.field} missing (tried ${f.tried.join(', ')}): Relais cannot read this answer; add the service's spelling to fields.${f.field}`;
    return `  - ${f.resource}: ${f.field} not seen (optional; tried ${f.tried.join(', ')})`;
  });
  const unknown = report.unknownKeys.map((u) => {
    const what = u.guess
      ? `probably ${u.guess.field} (${u.guess.why}): add "${u.key}" to fields.${u.guess.field}`
      : 'not read by Relais; no guess';
    return `  ${NO} ${u.resource}: ${u.key} unknown (${u.example}); ${what}`;
  });
  return [...fields, ...unknown];
}

function stateLines(report: ProbeReport): string[] {
  const lines =
    report.states.length === 0
      ? ['  - none seen (no shipment in the first page; name one with --shipment to see more)']
      : [];
  for (const s of report.states) {
    if (s.step) lines.push(`  ${OK} ${s.state} → ${s.step}  (${s.seenIn.join(', ')})`);
    else
      lines.push(
        `  ${NO} ${s.state} unknown to the profile (${s.seenIn.join(', ')}): ${s.guess ? `probably ${s.guess.step} (${s.guess.why}); add it to states.${s.guess.step}` : 'add it under the right step of "states"'}. Until then Relais never treats it as progress`,
      );
  }
  const unseen = stepsNotSeen(report);
  if (unseen.length > 0) lines.push(`  - steps not seen in any answer (still guesses): ${unseen.join(', ')}`);
  return lines;
}

function errorLines(report: ProbeReport): string[] {
  return report.errors.map((e) => {
    const where = e.readByProfile
      ? 'read by the profile'
      : `NOT read by the profile's codePaths${e.guessedCodePath ? `; found at "${e.guessedCodePath}"` : ''}${e.guessedMessagePath ? `, message at "${e.guessedMessagePath}"` : ''}`;
    const mark = e.readByProfile && (e.expectedMeaning === undefined || e.meaning === e.expectedMeaning) ? OK : NO;
    const meaning =
      e.expectedMeaning && e.meaning !== e.expectedMeaning
        ? `; means ${e.meaning ?? 'nothing'} to the profile, expected ${e.expectedMeaning}: add "${e.code ?? '?'}" to errors.meanings.${e.expectedMeaning}.codes`
        : e.meaning
          ? `; means ${e.meaning}`
          : '';
    return `  ${mark} ${e.status} ${e.code ?? '(no code)'}${e.message ? ` "${e.message}"` : ''} (${e.step}): ${where}${meaning}; body keys: ${e.shape.join(', ') || '(none)'}`;
  });
}

function fallbackLines({ fallback: fb }: ProbeReport): string[] {
  if (fb.neighbourhoodTotal === undefined || fb.cityTotal === undefined) {
    return [
      `  not learned: ${fb.neighbourhoodTotal === undefined ? 'the neighbourhood quote' : 'the city-name quote'} gave no total the profile can read`,
    ];
  }
  return [
    `  "${fb.neighbourhood}" (neighbourhood): ${fb.neighbourhoodTotal} XOF${fb.neighbourhoodBasis ? ` [${fb.neighbourhoodBasis}]` : ''}; "${fb.city}" (city name): ${fb.cityTotal} XOF${fb.cityBasis ? ` [${fb.cityBasis}]` : ''}`,
    `  a city name instead of the neighbourhood costs ${fb.difference ?? 0} XOF more per delivery`,
  ];
}

/** Whether everything matched, then the draft's changes and what it left out. */
function verdictLines(report: ProbeReport): string[] {
  const lines = [
    report.allMatched
      ? `${OK} Every field, state and error body seen matched the profile "${report.profile}".`
      : `${NO} The profile "${report.profile}" does not know everything the service answered (see ${NO} above).`,
  ];
  if (report.draft.changes.length > 0) {
    lines.push('Draft profile changes (guesses, review each):', ...report.draft.changes.map((c) => `  + ${c}`));
  }
  lines.push(...report.draft.skipped.map((s) => `  ! ${s}`));
  if (report.draft.invalid)
    lines.push(
      `  ! the draft did not validate, so draft-profile.json is the unchanged profile: ${report.draft.invalid}`,
    );
  return lines;
}
