/**
 * The places an address's words name: exact names and their abbreviations, names written without spaces or in
 * another order, typos within a few edits, a numbered unit the gazetteer lists only by its base name, each
 * scored by how it matched and where (resolver.ts describes the confidence model).
 */
import { bareKeyOf, wordsKey, type CountryIndex, type Gazetteer, type KeyHit, type Place } from './gazetteer.js';
import { type Geography, encloses } from './geography.js';
import {
  ABBREVIATIONS,
  LINKING_WORDS,
  NOISE_WORDS,
  STREET_OR_LANDMARK_WORDS,
  UNIT_QUALIFIERS,
  type CountryCode,
} from './names.js';
import { allowedEdits, boundedEditDistance, isNumberToken } from './normalise.js';
import { soundKey } from './service-spellings.js';
import {
  EDITABLE_CACHE_SIZE,
  FIELD_WEIGHT,
  FUZZY_BASE,
  FUZZY_SLOPE,
  LISTED_QUARTIER_BONUS,
  MAX_COMPACT_TOKENS,
  MAX_FUZZY_TOKENS,
  MULTI_FIELD_BONUS,
  NUMBERED_FALLBACK,
  STREET_CONTEXT,
  subsumed,
  VIA_SCORE,
  type Candidate,
  type FieldText,
  type Match,
  type Token,
} from './resolver-model.js';

/** The words of a field as the customer typed them, from token `start` up to (not including) token `end`. */
type RawText = (start: number, end: number) => string;

/** Finds the places named in an address's fields, country by country. */
export class TextMatcher {
  private readonly editableWords = new Map<string, boolean>();

  constructor(
    private readonly gazetteer: Gazetteer,
    private readonly geo: Geography,
  ) {}

  /** The country's abbreviations written out ("PA U17" → "parcelles assainies unite 17"), within one part. */
  private expand(src: Token[], country: CountryCode): Token[] {
    const out: Token[] = [];
    const rules = ABBREVIATIONS[country];
    const inPart = (i: number, k: number) => src[i + k] !== undefined && src[i + k]!.seg === src[i]!.seg;
    for (let i = 0; i < src.length;) {
      const rule = rules.find(
        (r) =>
          r.from.every((t, k) => inPart(i, k) && src[i + k]!.text === t) &&
          (!r.beforeNumber || (inPart(i, r.from.length) && isNumberToken(src[i + r.from.length]!.text))),
      );
      if (rule) {
        for (const t of rule.to) out.push({ text: t, raw: src[i]!.raw, seg: src[i]!.seg, expanded: true });
        i += rule.from.length;
      } else {
        out.push(src[i]!);
        i++;
      }
    }
    return out;
  }

  textCandidates(
    fields: FieldText[],
    countries: CountryIndex[],
    explicit: CountryCode | undefined,
    unlisted: string[],
  ): Candidate[] {
    const byPlace = new Map<Place, Candidate>();
    const isEditable = (t: Token) => !t.expanded && this.editable(t.text);
    for (const index of countries) {
      for (const fs of fields) {
        const tokens = this.expand(fs.tokens, index.country);
        const rawText: RawText = (start, end) =>
          fs.rawWords.slice(tokens[start]!.raw, tokens[end - 1]!.raw + 1).join(' ');
        const found = [...this.exactMatches(index, fs, tokens, rawText)];
        found.push(...this.reorderedMatches(index, fs, tokens, rawText, found));
        const exact = subsumed(found);
        const covered = new Array<boolean>(tokens.length).fill(false);
        for (const m of exact) for (let k = m.start; k < m.end; k++) covered[k] = true;
        const kept = subsumed([
          ...exact,
          ...this.fuzzyMatches(index, fs, tokens, covered, rawText, tokens.map(isEditable)),
        ]);
        const matches = this.withNumberedFallback(
          [...kept, ...this.communesOpening(found, kept, tokens)],
          tokens,
          rawText,
          unlisted,
        );
        for (const m of matches) {
          if (m.place.onlyWithCountry && explicit === undefined) continue;
          if (this.afterStreetWord(tokens, m.start)) {
            m.score *= STREET_CONTEXT;
            m.street = true;
          }
          m.score *= FIELD_WEIGHT[m.field] * m.place.typeFactor;
          const c = byPlace.get(m.place) ?? { place: m.place, matches: [], score: 0, confidence: 0 };
          c.matches.push(m);
          byPlace.set(m.place, c);
        }
      }
    }
    for (const c of byPlace.values()) {
      c.matches.sort((a, b) => b.score - a.score);
      const fields = new Set(c.matches.map((m) => m.field)).size;
      // Not capped yet: bonuses still separate two strong candidates; the cap applies to the confidence.
      c.score =
        c.matches[0]!.score +
        MULTI_FIELD_BONUS * Math.min(2, fields - 1) +
        (c.place.specificity === 3 ? LISTED_QUARTIER_BONUS : 0);
    }
    return [...byPlace.values()];
  }

  private exactMatches(index: CountryIndex, fs: FieldText, tokens: Token[], rawText: RawText): Match[] {
    const found: Match[] = [];
    const texts = tokens.map((t) => t.text);
    // A word's sound is read only where its compact form is no name, so only then worked out.
    const sounds: string[] = [];
    const soundOf = (from: number, to: number) => {
      let joined = '';
      for (let k = from; k < to; k++) joined += sounds[k] ??= soundKey(texts[k]!);
      return joined;
    };
    for (let i = 0; i < texts.length; i++) {
      let key = '';
      let compact = '';
      let expanded = false;
      for (let end = i + 1; end <= texts.length; end++) {
        const n = end - i;
        key = n === 1 ? texts[i]! : `${key} ${texts[end - 1]!}`;
        compact += texts[end - 1]!;
        expanded ||= tokens[end - 1]!.expanded;
        const extendable = index.prefixes.has(key);
        const onePart = tokens[end - 1]!.seg === tokens[i]!.seg;
        // A name written without its spaces ("Sacrecoeur", "Keurmassar") is found by its compact form,
        // unless the words as typed already name a place ("Tang Sega" is not "Tangséga", 25 km away).
        // Or as it sounds ("Toit Rouge" for Toits-Rouges, "Pate d oie" for Patte d'Oie).
        const compactHits =
          onePart && n <= MAX_COMPACT_TOKENS && !index.byKey.has(key)
            ? (index.byCompact.get(compact) ?? index.bySound.get(soundOf(i, end)))
            : undefined;
        if (!extendable && compactHits === undefined) {
          if (n >= MAX_COMPACT_TOKENS) break;
          continue;
        }
        const seen = new Set<Place>();
        const add = (hit: KeyHit, viaCompact: boolean) => {
          if (seen.has(hit.place)) return;
          seen.add(hit.place);
          const via = expanded ? 'abbreviation' : viaCompact && hit.kind === 'exact' ? 'alt_name' : hit.kind;
          found.push({
            place: hit.place,
            field: fs.field,
            start: i,
            end,
            via,
            score: VIA_SCORE[via],
            text: rawText(i, end),
            seg: tokens[i]!.seg,
          });
        };
        for (const hit of (extendable && index.byKey.get(key)) || []) add(hit, false);
        for (const hit of compactHits ?? []) add(hit, true);
      }
    }
    return found;
  }

  /**
   * "Akouedo camp militaire" for Camp Militaire d'Akouédo: every word of a listed name, in another order,
   * as a run of words of one part. Not a run whose words already name only communes ("Adjamé Abobo" is
   * two communes, not the quartier Abobo Adjame).
   */
  private reorderedMatches(
    index: CountryIndex,
    fs: FieldText,
    tokens: Token[],
    rawText: RawText,
    exact: Match[],
  ): Match[] {
    const found: Match[] = [];
    for (let i = 0; i < tokens.length; i++) {
      for (let end = i + 2; end <= Math.min(tokens.length, i + MAX_COMPACT_TOKENS); end++) {
        if (tokens[end - 1]!.seg !== tokens[i]!.seg) break;
        const texts = tokens.slice(i, end).map((t) => t.text);
        if (index.byKey.has(texts.join(' '))) continue;
        const words = wordsKey(texts);
        const hits = words === undefined ? undefined : index.byWords.get(words);
        if (!hits) continue;
        const inside = exact.filter((m) => m.start >= i && m.end <= end);
        if (inside.length > 0 && inside.every((m) => m.place.specificity === 1)) continue;
        for (const hit of hits) {
          found.push({
            place: hit.place,
            field: fs.field,
            start: i,
            end,
            via: 'reordered',
            score: VIA_SCORE.reordered,
            text: rawText(i, end),
            seg: tokens[i]!.seg,
          });
        }
      }
    }
    return found;
  }

  /**
   * "Cocody Danga" is listed as one name (an alternate name of Danga) but names the commune too: a
   * commune that opens a longer alternate-name match, holds its place and is followed by a word that
   * names something (not "Pikine Ouest", "Rufisque Nord") is kept beside it, so the area can be sent. A
   * place's own name ("Abobo Baoulé", "Koumassi Sicogi") is that place's name, not two levels.
   */
  private communesOpening(found: Match[], kept: Match[], tokens: Token[]): Match[] {
    return found.filter(
      (m) =>
        m.place.specificity === 1 &&
        !kept.includes(m) &&
        kept.some(
          (k) =>
            k.start === m.start &&
            k.end > m.end &&
            k.via === 'alt_name' &&
            encloses(m.place, k.place, this.geo) &&
            tokens.slice(m.end, k.end).some((t) => !NOISE_WORDS.has(t.text) && !isNumberToken(t.text)),
        ),
    );
  }

  /**
   * "Liberté 6" where only "Liberté" is listed: the base name, with less confidence. But "Hann Maristes 2"
   * where only "Hann Maristes 1" is listed (found by its bare name) is another unit, not that one: the
   * match is dropped and noted in `unlisted`, so the hold can say which number is missing.
   */
  private withNumberedFallback(matches: Match[], tokens: Token[], rawText: RawText, unlisted: string[]): Match[] {
    const kept: Match[] = [];
    for (const m of matches) {
      const numberFollows =
        m.end < tokens.length && tokens[m.end]!.seg === tokens[m.end - 1]!.seg && isNumberToken(tokens[m.end]!.text);
      // "Angré 8e tranche": the number opens another name, it does not number this one.
      if (numberFollows && !matches.some((o) => (o.start <= m.start && o.end > m.end) || o.start === m.end)) {
        if (bareKeyOf(m.place) !== undefined) {
          unlisted.push(`'${rawText(m.start, m.end + 1)}' is not in the gazetteer (${m.place.name} is)`);
          continue;
        }
        m.via = 'numbered';
        // A number after a commune's name ("Dieuppeul 2") numbers a part of it, which the commune holds all the same.
        if (m.place.specificity !== 1 && !m.place.commune) m.score *= NUMBERED_FALLBACK;
        // "Liberté 6 extension": the word after the number is part of the unit's name (candidates.ts numberedUnit).
        const next = tokens[m.end + 1];
        const named =
          next?.seg === tokens[m.end]!.seg &&
          (!NOISE_WORDS.has(next.text) || UNIT_QUALIFIERS.has(next.text)) &&
          !isNumberToken(next.text);
        m.text = rawText(m.start, m.end + (named ? 2 : 1));
      }
      kept.push(m);
    }
    return kept;
  }

  /** May this word carry a typo? Not a short word, a number, an address word, or (nearly) a city name. */
  private editable(word: string): boolean {
    if (word.length < 5 || isNumberToken(word) || NOISE_WORDS.has(word)) return false;
    let e = this.editableWords.get(word);
    if (e === undefined) {
      // Customers' words repeat from order to order; the cache is bounded, not an unbounded memo.
      if (this.editableWords.size >= EDITABLE_CACHE_SIZE) this.editableWords.clear();
      this.editableWords.set(word, (e = !this.nearBlocked(word)));
    }
    return e;
  }

  private nearBlocked(word: string): boolean {
    const max = allowedEdits(word.length);
    for (const b of this.gazetteer.blockedWords) {
      if (Math.abs(b.length - word.length) <= max && boundedEditDistance(word, b, max) <= max) return true;
    }
    return false;
  }

  /**
   * Typos, token by token: short words, numbers, address words and words already matched exactly must be
   * equal; the others may differ within allowedEdits ("Mermoz Baobab" → "Mermoz Boabab").
   */
  private fuzzyMatches(
    index: CountryIndex,
    fs: FieldText,
    tokens: Token[],
    covered: boolean[],
    rawText: RawText,
    editable: boolean[],
  ): Match[] {
    const found: Match[] = [];
    const editableHere = editable.map((e, k) => e && !covered[k]);
    for (let n = Math.min(MAX_FUZZY_TOKENS, tokens.length); n >= 1; n--) {
      const byLetters = index.fuzzyByLength.get(n);
      if (!byLetters) continue;
      for (let i = 0; i + n <= tokens.length; i++) {
        if (tokens[i + n - 1]!.seg !== tokens[i]!.seg) continue;
        let anyEditable = false;
        let candidateLength = 0;
        for (let k = i; k < i + n; k++) {
          if (editableHere[k]) anyEditable = true;
          candidateLength += tokens[k]!.text.length;
        }
        if (!anyEditable) continue;
        const budget = allowedEdits(candidateLength);
        for (let letters = candidateLength - budget; letters <= candidateLength + budget; letters++) {
          for (const fk of byLetters.get(letters) ?? []) {
            const edits = this.tokenEdits(tokens, i, fk.tokens, editableHere, budget);
            if (edits === undefined || edits === 0) continue;
            const score = FUZZY_BASE - (FUZZY_SLOPE * edits) / fk.length;
            found.push({
              place: fk.hit.place,
              field: fs.field,
              start: i,
              end: i + n,
              via: 'fuzzy',
              score,
              text: rawText(i, i + n),
              seg: tokens[i]!.seg,
            });
          }
        }
      }
    }
    return found;
  }

  /** Edits needed to turn tokens[i..] into `want`, or undefined beyond the budget or on a frozen word. */
  private tokenEdits(
    tokens: Token[],
    i: number,
    want: string[],
    editableHere: boolean[],
    budget: number,
  ): number | undefined {
    // Frozen words (numbers, short or address words, words already matched) first: cheapest to refute.
    for (let k = 0; k < want.length; k++) {
      if (!editableHere[i + k] && tokens[i + k]!.text !== want[k]) return undefined;
    }
    let edits = 0;
    for (let k = 0; k < want.length; k++) {
      const have = tokens[i + k]!.text;
      const w = want[k]!;
      if (have === w) continue;
      const max = Math.min(allowedEdits(Math.min(have.length, w.length)), budget - edits);
      if (max <= 0) return undefined;
      const d = boundedEditDistance(have, w, max);
      if (d > max) return undefined;
      edits += d;
    }
    return edits;
  }

  private afterStreetWord(tokens: Token[], start: number): boolean {
    let skipped = 0;
    for (let k = start - 1; k >= 0 && skipped <= 3 && tokens[k]!.seg === tokens[start]!.seg; k--) {
      const t = tokens[k]!.text;
      if (STREET_OR_LANDMARK_WORDS.has(t)) return true;
      if (!LINKING_WORDS.has(t)) return false;
      skipped++;
    }
    return false;
  }
}
