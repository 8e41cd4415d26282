/**
 * What probe makes of an error answer: the code and message where the profile says they sit, or, when its paths
 * find nothing, where a code-like and a message-like name hold a string (a guess the draft profile appends), what
 * the profile reads the answer as, and the body's shape for the report.
 */
import type { WireProfile } from '../adapters/dispatch-api/profile.js';
import type { ErrorFinding, Exchange } from './probe-findings.js';
import { isRecord } from './probe-guesses.js';

/** Every key of a body down to depth 2, with its dotted path, parents before their children. */
function keysToDepth2(body: unknown, prefix = '', depth = 1): Array<[string, unknown]> {
  if (!isRecord(body) || depth > 2) return [];
  return Object.entries(body).flatMap(([key, value]): Array<[string, unknown]> => {
    const path = prefix ? `${prefix}.${key}` : key;
    return [[path, value], ...keysToDepth2(value, path, depth + 1)];
  });
}

/** String leaves at depth ≤ 2, with their dotted path: where an error's code and message may sit. */
function stringLeaves(body: unknown): Array<[string, string]> {
  return keysToDepth2(body).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
}

const CODE_KEY = /(^|\.)(code|type|error|kind|error_code)$/i;
const MESSAGE_KEY = /(^|\.)(message|detail|details|description|msg|error_description)$/i;

export function readError(profile: WireProfile, exchange: Exchange & { status: number }): ErrorFinding {
  const body = exchange.responseBody;
  const read = profile.readErrorBody(body);
  const leaves = stringLeaves(body);
  const codeLeaf = read.code === undefined ? leaves.find(([path]) => CODE_KEY.test(path)) : undefined;
  const messageLeaf =
    read.message === undefined ? leaves.find(([path]) => MESSAGE_KEY.test(path) && path !== codeLeaf?.[0]) : undefined;
  const code = read.code ?? codeLeaf?.[1];
  const message = read.message ?? messageLeaf?.[1];
  const meaning = profile.meaningOf(exchange.status, code);
  return {
    step: exchange.step,
    status: exchange.status,
    ...(code === undefined ? {} : { code }),
    ...(message === undefined ? {} : { message }),
    readByProfile: read.code !== undefined,
    ...(codeLeaf ? { guessedCodePath: codeLeaf[0] } : {}),
    ...(messageLeaf ? { guessedMessagePath: messageLeaf[0] } : {}),
    ...(meaning ? { meaning } : {}),
    ...(exchange.expectedMeaning ? { expectedMeaning: exchange.expectedMeaning } : {}),
    shape: keysToDepth2(body).map(([path]) => path),
  };
}
