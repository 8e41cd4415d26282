/**
 * Text folding shared by the gazetteer index, the resolver and merchant aliases. Both sides of every
 * comparison go through the same functions, so "Sacré-Cœur 3", "sacre coeur III" and "SACRE COEUR 3"
 * all become the tokens `sacre coeur 3`.
 */

/** A canonical token and the index of the raw word it came from (to quote the customer's own words back). */
export interface Token {
  text: string;
  raw: number;
}

/** One comma-separated part of an address field, tokenised. */
export interface Segment {
  rawWords: string[];
  tokens: Token[];
}

const LIGATURES: Record<string, string> = { œ: 'oe', æ: 'ae', ß: 'ss', ø: 'o', ł: 'l', đ: 'd', ı: 'i' };

// Written after a number, these mark an ordinal: 7e, 7ème, 7eme, 1er, 1ère, 2nd (all become "7 e").
const ORDINAL_SUFFIXES = new Set(['e', 'eme', 'ieme', 'em', 'me', 'er', 'ere', 'nd', 'nde']);
const NUMBER_WORDS: Record<string, string> = {
  deux: '2',
  trois: '3',
  quatre: '4',
  cinq: '5',
  six: '6',
  sept: '7',
  huit: '8',
  neuf: '9',
  dix: '10',
};
const ORDINAL_WORDS: Record<string, string> = {
  premier: '1',
  premiere: '1',
  deuxieme: '2',
  second: '2',
  seconde: '2',
  troisieme: '3',
  quatrieme: '4',
  cinquieme: '5',
  sixieme: '6',
  septieme: '7',
  huitieme: '8',
  neuvieme: '9',
  dixieme: '10',
};
// Multi-letter numerals are unambiguous anywhere ("II Plateaux", "Santé III"); the one-letter ones
// ("Arafat I") only after a word, so a lone "v" or "x" elsewhere keeps its letter.
const ROMAN: Record<string, string> = {
  ii: '2',
  iii: '3',
  iv: '4',
  vi: '6',
  vii: '7',
  viii: '8',
  ix: '9',
  xi: '11',
  xii: '12',
  xiii: '13',
  xiv: '14',
  xv: '15',
  xvi: '16',
  xvii: '17',
  xviii: '18',
  xix: '19',
  xx: '20',
};
const ROMAN_SINGLE: Record<string, string> = { i: '1', v: '5', x: '10' };
// Gazetteer sources mix French and English forms of the same quarter ("Pikine North" / "Pikine Nord").
const COMPASS: Record<string, string> = { north: 'nord', south: 'sud', east: 'est', west: 'ouest' };
const NUMERO_WORDS = new Set(['n', 'no', 'num', 'numero']);

const DIGITS = /^\d+$/;

export function isNumberToken(t: string): boolean {
  return DIGITS.test(t);
}

/** Case, accents (ᵉ → e through NFKD), ligatures; apostrophes vanish so "N'diarème" meets "Ndiarème". */
function foldChars(s: string): string {
  let out = s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  out = out.replace(/[œæßøłđı]/g, (c) => LIGATURES[c] ?? c);
  out = out.replace(/['’ʼ‘`´]/g, '');
  return out;
}

/** Letters and digits of ASCII only: nothing to unaccent, elide or split at punctuation (most words typed). */
const PLAIN_WORD = /^[A-Za-z0-9]+$/;

/** The runs of a–z and of 0–9 in folded text, anything else separating them ("u17 b" → u, 17, b). */
function letterAndDigitRuns(folded: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  let kind = 0; // 0: between runs, 1: letters, 2: digits
  for (let i = 0; i <= folded.length; i++) {
    const c = i < folded.length ? folded.charCodeAt(i) : 0;
    const k = c >= 97 && c <= 122 ? 1 : c >= 48 && c <= 57 ? 2 : 0;
    if (k === kind) continue;
    if (kind !== 0) pieces.push(folded.slice(start, i));
    start = i;
    kind = k;
  }
  return pieces;
}

/** Folds one raw word into zero or more alphanumeric pieces, splitting letter/digit runs ("u17" → u, 17). */
function foldWord(word: string): string[] {
  if (PLAIN_WORD.test(word)) return letterAndDigitRuns(word.toLowerCase());
  // French elision: "de l'Hôpital" and "Patte d'Oie" keep the article apart ("l hopital", "d oie"),
  // whereas a Wolof prenasal ("N'diarème", "M'Badon") is part of the name and is glued on.
  const unElided = word.replace(/^([ldLD])['’ʼ‘`´](?=\p{L})/u, '$1 ');
  return letterAndDigitRuns(foldChars(unElided));
}

/** Context rules that need neighbouring tokens: ordinals, roman numerals, "n°", number words. */
function canonicalise(tokens: Token[]): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    let t = tok.text;
    const prev = out[out.length - 1]?.text;
    const next = tokens[i + 1]?.text;
    if (isNumberToken(t)) {
      t = t.replace(/^0+(?=\d)/, '');
    } else if (prev !== undefined && isNumberToken(prev) && ORDINAL_SUFFIXES.has(t)) {
      t = 'e';
    } else if (NUMERO_WORDS.has(t) && next !== undefined && isNumberToken(next)) {
      continue;
    } else if (t in ORDINAL_WORDS) {
      out.push({ text: ORDINAL_WORDS[t]!, raw: tok.raw });
      t = 'e';
    } else if (t in NUMBER_WORDS) {
      t = NUMBER_WORDS[t]!;
    } else if (t === 'un' && i === tokens.length - 1 && prev !== undefined && !isNumberToken(prev)) {
      t = '1';
    } else if (t in ROMAN) {
      t = ROMAN[t]!;
    } else if (t in ROMAN_SINGLE && prev !== undefined && !isNumberToken(prev) && i === tokens.length - 1) {
      // "Arafat I": a one-letter numeral closing a name.
      t = ROMAN_SINGLE[t]!;
    } else if (t in COMPASS) {
      t = COMPASS[t]!;
    }
    out.push({ text: t, raw: tok.raw });
  }
  return out;
}

/** Splits a free-text field into raw words (punctuation other than apostrophes separates words). */
function rawWordsOf(s: string): string[] {
  return s.split(/[^\p{L}\p{N}'’ʼ‘`´°ᵉ]+/u).filter((w) => w !== '');
}

function tokensOfWords(words: string[]): Token[] {
  const tokens: Token[] = [];
  words.forEach((w, raw) => {
    for (const piece of foldWord(w)) tokens.push({ text: piece, raw });
  });
  return canonicalise(tokens);
}

/** Canonical tokens of any text (a gazetteer name, an alias, an address part). */
export function normaliseTokens(s: string): string[] {
  return tokensOfWords(rawWordsOf(s)).map((t) => t.text);
}

/**
 * The shared folding: lower case, accents removed (ᵉ → e, œ → oe), apostrophes dropped, hyphens and
 * punctuation as spaces, letters and digits split apart, ordinals ("7ème" → "7 e"), roman numerals and
 * French number words as digits, "n°" dropped before a number. Two texts that name the same place the
 * same way give the same string.
 */
export function normaliseText(s: string): string {
  return normaliseTokens(s).join(' ');
}

/**
 * Splits an address field into parts that a name never straddles: commas, semicolons, slashes, line
 * breaks, brackets and a dash between spaces ("Cocody - Angré"). A hyphen inside a word stays a word joint.
 */
export function segmentsOf(field: string): Segment[] {
  const parts = field.split(/[,;/\\|\n\r()[\]{}]+|\s[-–—]+\s/);
  const segments: Segment[] = [];
  for (const part of parts) {
    const rawWords = rawWordsOf(part);
    if (rawWords.length === 0) continue;
    const tokens = tokensOfWords(rawWords);
    if (tokens.length > 0) segments.push({ rawWords, tokens });
  }
  return segments;
}

/**
 * Optimal-string-alignment distance (Levenshtein plus adjacent transpositions, "Ouakma" → "Ouakam"),
 * abandoned as soon as it must exceed `max`: the caller only cares whether it is within the bound.
 * Returns max + 1 when the bound is exceeded.
 */
export function boundedEditDistance(a: string, b: string, max: number): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  // Cheap lower bound first: letters one word has and the other lacks each need an edit.
  if (letterDifference(a, b) > 2 * max) return max + 1;
  const n = b.length;
  let prevPrev = rowBuffer(0, n);
  let prev = rowBuffer(1, n);
  let cur = rowBuffer(2, n);
  for (let j = 0; j <= n; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= n; j++) {
      const cb = b.charCodeAt(j - 1);
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ca === cb ? 0 : 1));
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb)
        v = Math.min(v, prevPrev[j - 2]! + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prevPrev, prev, cur] = [prev, cur, prevPrev];
  }
  const d = prev[n]!;
  return d > max ? max + 1 : d;
}

// Reused rows: resolve() calls this thousands of times per address; allocating rows dominated its cost.
const ROWS: Int32Array[] = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];
function rowBuffer(k: 0 | 1 | 2, n: number): Int32Array {
  if (ROWS[k]!.length <= n) ROWS[k] = new Int32Array(n * 2 + 2);
  return ROWS[k]!;
}

const HISTOGRAM = new Int16Array(128);
/** Sum over characters of |count in a − count in b| (ASCII; folded text is a–z, 0–9). */
function letterDifference(a: string, b: string): number {
  for (let i = 0; i < a.length; i++) HISTOGRAM[a.charCodeAt(i) & 127]!++;
  for (let i = 0; i < b.length; i++) HISTOGRAM[b.charCodeAt(i) & 127]!--;
  let diff = 0;
  for (let i = 0; i < a.length; i++) {
    const c = a.charCodeAt(i) & 127;
    diff += Math.abs(HISTOGRAM[c]!);
    HISTOGRAM[c] = 0;
  }
  for (let i = 0; i < b.length; i++) {
    const c = b.charCodeAt(i) & 127;
    diff += Math.abs(HISTOGRAM[c]!);
    HISTOGRAM[c] = 0;
  }
  return diff;
}

/**
 * How many typing mistakes a word of this length may carry and still count as the same name. Short
 * words never: "Fass", "Yoff", "Ngor" are one letter from too many other words.
 */
export function allowedEdits(length: number): number {
  if (length <= 4) return 0;
  if (length <= 7) return 1;
  if (length <= 11) return 2;
  return 3;
}
