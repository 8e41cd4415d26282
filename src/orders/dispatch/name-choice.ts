/**
 * Which candidate name an order is sent under: the most precise one the service prices below its fallback
 * tariff (spec §1), chosen from what the service map knows and, where it knows nothing, from quotes (quotes
 * create nothing). Bounded: MAX_EXTRA_QUOTES quotes beyond the order's own. With a learned map the order's own
 * quote is the only one: the name known priced is quoted first.
 *
 * Pure: the caller quotes (priced-dropoff.ts) and records what was learned.
 */
import type { NameCandidate } from '../../geo/candidates.js';
import type { NamePrice } from '../../ledger/service-map.js';

/** Quotes an order may make beyond its own to find a priced name (issue 24). */
export const MAX_EXTRA_QUOTES = 3;
/** What the map knows is trusted this long; an older answer is asked again (tariffs change, rarely). */
export const MAP_FRESH_MS = 7 * 24 * 3600 * 1000;

export interface PlannedName {
  candidate: NameCandidate;
  /** What the map knows of it, when it knows it priced (a name known at the fallback is not planned). */
  known?: NamePrice;
}

export interface QuotedName {
  name: string;
  totalXof: number;
  /** undefined: the fallback tariff is not known, so the quote could not be judged (it is used as it is). */
  priced: boolean | undefined;
}

/** Only what the map learned recently enough to trust. */
export function freshKnowledge(known: Map<string, NamePrice>, now: Date): Map<string, NamePrice> {
  return new Map([...known].filter(([, p]) => now.getTime() - p.learnedAt.getTime() < MAP_FRESH_MS));
}

/**
 * The order names are tried in: place by place, most precise first; within one place (its spellings, equally
 * precise), the spellings known priced first, then those the map does not know. A name known at the fallback
 * is left out: asking again would only cost a quote.
 */
export function tryOrder(candidates: NameCandidate[], known: Map<string, NamePrice>): PlannedName[] {
  const plan: PlannedName[] = [];
  const precisions = [...new Set(candidates.map((c) => c.precision))].sort((a, b) => a - b);
  for (const precision of precisions) {
    const place = candidates.filter((c) => c.precision === precision);
    for (const candidate of place) {
      const k = known.get(candidate.name);
      if (k?.priced) plan.push({ candidate, known: k });
    }
    for (const candidate of place) if (!known.has(candidate.name)) plan.push({ candidate });
  }
  return plan;
}

/**
 * Is a name of the place the address names (precision 0) known priced? Then nothing finer is to be found, and
 * the service's other spellings (service-spellings.ts) need not be read: the happy path of a learned map.
 */
export function finestKnownPriced(candidates: NameCandidate[], known: Map<string, NamePrice>): boolean {
  return candidates.some((c) => c.precision === 0 && known.get(c.name)?.priced === true);
}

export interface ChoiceOptions<Q extends { total: number }> {
  /** The quote already made (or saved) for plan[0], made beside the shipment lookup. */
  first: Q;
  quote(name: string): Promise<Q>;
  /** Below the fallback tariff: true; at it: false; the fallback not known: undefined. */
  isPriced(totalXof: number): boolean | undefined;
  maxExtraQuotes?: number;
}

export type Choice<Q> =
  | { kind: 'chosen'; candidate: NameCandidate; quote: Q; quoted: QuotedName[] }
  | { kind: 'none'; quoted: QuotedName[]; untried: NameCandidate[] };

/**
 * Walks the plan: the first name priced (or not judgeable) is chosen. A name the map does not know is quoted
 * only while the budget allows, and the last quote is kept for a later name known priced, if there is one.
 */
export async function chooseByPrice<Q extends { total: number }>(
  plan: PlannedName[],
  options: ChoiceOptions<Q>,
): Promise<Choice<Q>> {
  const max = options.maxExtraQuotes ?? MAX_EXTRA_QUOTES;
  const quoted: QuotedName[] = [];
  let extra = 0;
  for (const [i, step] of plan.entries()) {
    let quote: Q;
    if (i === 0) quote = options.first;
    else {
      const laterKnownPriced = plan.slice(i + 1).some((p) => p.known);
      if (extra >= max || (!step.known && laterKnownPriced && extra + 1 >= max)) continue;
      extra++;
      quote = await options.quote(step.candidate.name);
    }
    const priced = options.isPriced(quote.total);
    quoted.push({ name: step.candidate.name, totalXof: quote.total, priced });
    if (priced !== false) return { kind: 'chosen', candidate: step.candidate, quote, quoted };
  }
  const asked = new Set(quoted.map((q) => q.name));
  return { kind: 'none', quoted, untried: plan.map((p) => p.candidate).filter((c) => !asked.has(c.name)) };
}

/** For `relais resolve --shop`: each candidate with what the service map knows of it, and what an order would do. */
export function describeCandidates(candidates: NameCandidate[], known: Map<string, NamePrice>, now: Date): string[] {
  const fresh = freshKnowledge(known, now);
  const what = (name: string): string => {
    const k = known.get(name);
    if (!k) return 'price not known (an order quotes it)';
    const when = `${fresh.has(name) ? 'quoted' : 'quoted long ago, asked again by the next order,'} ${k.learnedAt.toISOString().slice(0, 10)} for ${k.quotedFor}`;
    return k.priced ? `priced, ${k.totalXof} XOF (${when})` : `at the fallback tariff, ${k.totalXof} XOF (${when})`;
  };
  const lines = [
    "Candidate names at the shop's delivery service, most precise first:",
    ...candidates.map(
      (c) => `  - ${c.name} [${c.via}${c.precision > 0 ? `, wider: ${c.place}` : ''}]: ${what(c.name)}`,
    ),
  ];
  const plan = tryOrder(candidates, fresh);
  const first = plan[0];
  if (!first) lines.push('An order here is held: every candidate is known to be priced at the fallback tariff.');
  else if (first.known) lines.push(`An order here is sent as "${first.candidate.name}" (known priced; one quote).`);
  else
    lines.push(
      `An order here quotes "${first.candidate.name}" first, then up to ${MAX_EXTRA_QUOTES} more candidates until one is priced.`,
    );
  return lines;
}
