/**
 * The draft profile `relais probe` writes (draft-profile.json): the current profile with the guesses appended at
 * the END of the right lists, so that every name the profile already knew keeps its priority, validated with
 * parseWireProfile before it is written. It never replaces the shop's profile: an operator reviews it.
 */
import { parseWireProfile, type WireProfile, type WireProfileDocument } from '../adapters/dispatch-api/profile.js';
import type { Analysis } from './probe-findings.js';

export interface Draft {
  document: WireProfileDocument;
  /** What was added, one line each (the report prints them; learned.json keeps them). */
  changes: string[];
  /** Why a learning was NOT put in the draft (a conflict with a name the profile already gives to something else). */
  skipped: string[];
  /** Set when the draft failed validation: then `document` is the unchanged profile. */
  invalid?: string;
}

type Notes = Pick<Draft, 'changes' | 'skipped'>;

const appendOnce = (list: string[], value: string): boolean => {
  if (list.includes(value)) return false;
  list.push(value);
  return true;
};

/**
 * The current profile with what was learned appended: guessed spellings at the end of their field's list,
 * unmapped state names under their guessed step, the error body's code and message paths, and the codes of
 * the provoked errors under the meaning they should have. Validated; an invalid draft is not written.
 */
export function draftProfile(profile: WireProfile, analysis: Analysis, probedAt: string): Draft {
  const document = structuredClone(profile.document);
  const notes: Notes = { changes: [], skipped: [] };
  addFieldSpellings(document, analysis, notes);
  addStates(document, analysis, notes);
  addErrorReadings(document, analysis, notes);
  const suffix = '-probed';
  if (!document.name.endsWith(suffix)) document.name = `${document.name}${suffix}`.slice(0, 100);
  document.description =
    `Draft written by relais probe on ${probedAt} from profile "${profile.name}". Review learned.json and every line marked CHECK before using it as a shop's profile. ${profile.document.description ?? ''}`.trim();

  try {
    parseWireProfile(document, 'draft profile');
  } catch (error) {
    return {
      document: structuredClone(profile.document),
      changes: [],
      skipped: [...notes.skipped, ...notes.changes],
      invalid: (error as Error).message,
    };
  }
  return { document, ...notes };
}

function addFieldSpellings(document: WireProfileDocument, analysis: Analysis, { changes }: Notes): void {
  for (const unknown of analysis.unknownKeys) {
    if (!unknown.guess) continue;
    if (appendOnce(document.fields[unknown.guess.field], unknown.key)) {
      changes.push(`fields.${unknown.guess.field}: added "${unknown.key}" (${unknown.resource}; ${unknown.guess.why})`);
    }
  }
}

function addStates(document: WireProfileDocument, analysis: Analysis, { changes, skipped }: Notes): void {
  for (const state of analysis.states) {
    if (state.step !== undefined) continue;
    if (!state.guess) {
      skipped.push(
        `state "${state.state}": no step could be guessed from its name; add it under the right step of "states" by hand`,
      );
      continue;
    }
    document.states[state.guess.step].push(state.state);
    changes.push(`states.${state.guess.step}: added "${state.state}" (${state.guess.why}: CHECK)`);
  }
}

/** The error body's paths found by guessing, and each provoked error's code under the meaning Relais expected. */
function addErrorReadings(document: WireProfileDocument, analysis: Analysis, { changes, skipped }: Notes): void {
  const codeOwner = (code: string) =>
    Object.entries(document.errors.meanings).find(([, m]) => m?.codes.includes(code))?.[0];
  for (const error of analysis.errors) {
    if (error.guessedCodePath && appendOnce(document.errors.codePaths, error.guessedCodePath)) {
      changes.push(
        `errors.codePaths: added "${error.guessedCodePath}" (a string under a code-like name in the ${error.status} body)`,
      );
    }
    if (error.guessedMessagePath && appendOnce(document.errors.messagePaths, error.guessedMessagePath)) {
      changes.push(
        `errors.messagePaths: added "${error.guessedMessagePath}" (a string under a message-like name in the ${error.status} body)`,
      );
    }
    if (error.code === undefined || error.expectedMeaning === undefined) continue;
    const owner = codeOwner(error.code);
    if (owner === error.expectedMeaning) continue;
    if (owner !== undefined) {
      skipped.push(
        `error code "${error.code}" (${error.step}) already means ${owner} in the profile; Relais expected ${error.expectedMeaning}: check which is right`,
      );
      continue;
    }
    const entry = (document.errors.meanings[error.expectedMeaning] ??= { codes: [], statuses: [] });
    entry.codes.push(error.code);
    changes.push(
      `errors.meanings.${error.expectedMeaning}.codes: added "${error.code}" (answered with ${error.status} to ${error.step})`,
    );
  }
}
