/**
 * Human text for `relais resolve "<address>" --country SN` and the held-order view: what was found,
 * how sure, from which words, why it won, what else it could be, which level of nested names is sent and
 * whether the service is known to price it, and, when not resolved, the alias that would fix it.
 */
import { normaliseText } from './normalise.js';
import {
  DEFAULT_MIN_CONFIDENCE,
  type LevelDecision,
  type MatchEvidence,
  type Resolution,
  type ResolveInput,
} from './types.js';

const VIA_LABEL: Record<MatchEvidence['via'], string> = {
  exact: 'exact name',
  alt_name: 'alternate spelling',
  alias: "merchant's alias",
  numbered: 'listed base name (this number is not in the gazetteer)',
  abbreviation: 'abbreviation',
  reordered: 'the words of a listed name in another order',
  fuzzy: 'close spelling (typo)',
  coords: 'coordinates',
};

function describe(e: MatchEvidence): string {
  const where = e.field === 'coords' ? 'coordinates' : e.field === 'alias' ? 'alias' : e.field;
  return `  - "${e.text}" (${where}): ${VIA_LABEL[e.via]}, score ${e.score.toFixed(2)}`;
}

function addressLine(input: ResolveInput): string {
  const f = input.fields;
  const parts = [f.company, f.address1, f.address2, f.city, f.province, f.zip]
    .map((v) => v?.trim())
    .filter((v): v is string => v !== undefined && v !== '');
  const where = input.country ? ` [${input.country.toUpperCase()}]` : ' [any country]';
  const coords = input.coords ? ` @ ${input.coords.lat},${input.coords.lng}` : '';
  return `Address: ${parts.join(', ') || '(empty)'}${where}${coords}`;
}

const pricedText = (p: boolean | undefined) =>
  p === undefined ? 'not known (no list of the names this service prices yet)' : p ? 'yes' : 'no (fallback tariff)';

function levelLines(level: LevelDecision, sent: string): string[] {
  const lines = [`Level sent: ${level.sent === 'only' ? 'the only place named' : level.sent} (${level.reason})`];
  if (level.levels.length > 1) {
    lines.push(
      'Nested names, most precise first:',
      ...level.levels.map(
        (l) => `  - ${l.name} (${l.placeType}): priced ${pricedText(l.priced)}${l.name === sent ? ' ← sent' : ''}`,
      ),
    );
  }
  lines.push(`Priced by the service: ${pricedText(level.levels.find((l) => l.name === sent)?.priced)}`);
  return lines;
}

export function explainResolution(input: ResolveInput, r: Resolution): string {
  const lines = [addressLine(input)];
  if (r.ok) {
    const n = r.neighbourhood;
    lines.push(`Neighbourhood: ${n.name} (${n.city}, ${n.country}; ${n.placeType})`);
    lines.push(`Confidence: ${r.confidence.toFixed(2)} (resolved: ${DEFAULT_MIN_CONFIDENCE} or more is needed)`);
    lines.push('Matched:', ...r.evidence.map(describe));
    if (r.why) lines.push(`Why it won: ${r.why}`);
    lines.push(
      `Other candidates (rivals): ${r.alternatives.length > 0 ? r.alternatives.map((a) => `${a.name} ${a.confidence.toFixed(2)}`).join(', ') : 'none'}`,
    );
    if (r.level) lines.push(...levelLines(r.level, n.name));
    if (r.subArea) lines.push(`Kept in the address line: ${r.subArea.name} (the more precise name)`);
    lines.push(`Sent to the dispatch service as the neighbourhood: "${n.name}"`);
    return lines.join('\n');
  }
  lines.push(`Not resolved: ${r.reason}`);
  const evidence = r.evidence ?? [];
  lines.push(evidence.length > 0 ? 'Matched:' : 'Matched: no word of this address names a known neighbourhood');
  lines.push(...evidence.map(describe));
  lines.push(
    `Candidates: ${r.candidates.length > 0 ? r.candidates.map((c) => `${c.name} ${c.confidence.toFixed(2)}`).join(', ') : 'none'}`,
  );
  const top = r.candidates[0];
  const matched = evidence.find((e) => e.field !== 'coords' && e.field !== 'alias');
  // An alias equal to the name would change nothing (the name is already known but contradicted):
  // then the alias to suggest is the customer's whole line ("Mermoz, Ouakam" → "Mermoz").
  const line = matched ? input.fields[matched.field as keyof typeof input.fields]?.trim() : undefined;
  const words = matched && normaliseText(matched.text) !== normaliseText(top?.name ?? '') ? matched.text : line;
  if (top && words && normaliseText(words) === normaliseText(top.name)) {
    lines.push(
      `To fix: the address names ${top.name} but not clearly enough; correct the address (or set the shop's country if it is missing).`,
    );
  } else if (top && words) {
    lines.push(
      `To fix: if "${words}" means ${top.name} for this shop, add the alias "${words}" → "${top.name}"; otherwise correct the address.`,
    );
  } else if (top) {
    lines.push(
      `To fix: add an alias from the words this customer uses for the quartier to "${top.name}" (or another listed name), or correct the address.`,
    );
  } else {
    lines.push(
      'To fix: correct the address with the customer\'s quartier, or add an alias from the words used here to a listed neighbourhood name (e.g. "Villa Awa" → "Mermoz").',
    );
  }
  return lines.join('\n');
}
