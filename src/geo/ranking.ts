/**
 * How the resolver ranks the places an address names: coordinates confirming a named place, or alone the
 * nearest point; the ambiguity penalty between unrelated places; the winner's nested group (an area and its
 * sub-area, one answer) and which level of it is sent; and the words explaining the answer or the hold.
 */
import type { CountryIndex, Place, Point } from './gazetteer.js';
import { related, type PlaceTree } from './geography.js';
import type { CountryCode } from './names.js';
import {
  AMBIGUITY_WINDOW,
  COORDS_BASE,
  COORDS_BOOST,
  COORDS_CLEARLY_NEARER,
  COORDS_CROWDED,
  COORDS_DISTANCE_SLOPE,
  FIELD_ORDER,
  MAX_CONFIDENCE,
  placeDistanceKm,
  round2,
  type Candidate,
  type Mention,
} from './resolver-model.js';
import { COORDS_RADIUS_KM, type LevelDecision, type PricedNames } from './types.js';

/** The winner and every named place nested with it, widest first: one answer at several levels. */
export function nestedGroup(tree: PlaceTree, best: Candidate, candidates: Candidate[]): Candidate[] {
  if (best.matches.length === 0) return [best];
  const group = [best];
  for (let grew = true; grew;) {
    grew = false;
    for (const c of candidates) {
      if (c.matches.every((m) => m.street) || group.some((g) => g.place === c.place || g.place.name === c.place.name))
        continue;
      if (group.some((g) => tree.holds(g, c) || tree.holds(c, g))) {
        group.push(c);
        grew = true;
      }
    }
  }
  const heldBy = (c: Candidate) => group.filter((o) => o !== c && tree.holds(o, c)).length;
  // Two parts of one area ("Cocody Angré, 7e tranche"): customers write from the widest to the finest.
  const typedAt = (c: Candidate) => Math.min(...c.matches.map((m) => FIELD_ORDER.indexOf(m.field) * 1000 + m.start));
  return group.sort(
    (a, b) => heldBy(a) - heldBy(b) || a.place.specificity - b.place.specificity || typedAt(a) - typedAt(b),
  );
}

/** Issue 18 §3: the most precise name the service prices; until that is known, the area. */
export function chooseLevel(
  group: Candidate[],
  pricing: PricedNames | undefined,
): { sent: Candidate; level: LevelDecision } {
  const preciseFirst = [...group].reverse();
  const priced = (c: Candidate) => pricing?.isPriced(c.place.name);
  const levels = preciseFirst.map((c) => {
    const p = priced(c);
    return { name: c.place.name, placeType: c.place.placeType, ...(p === undefined ? {} : { priced: p }) };
  });
  const decide = (sent: Candidate, reason: string) => ({
    sent,
    level: {
      sent: group.length === 1 ? ('only' as const) : sent === group[0] ? ('area' as const) : ('sub-area' as const),
      levels,
      reason,
    },
  });
  if (group.length === 1) {
    const p = priced(group[0]!);
    return decide(
      group[0]!,
      `the only place named${p === undefined ? '' : p ? '; the service prices it' : '; the service is not known to price it'}`,
    );
  }
  const names = preciseFirst.map((c) => c.place.name).join(' ⊂ ');
  const pricedOne = preciseFirst.find((c) => priced(c) === true);
  if (pricedOne)
    return decide(pricedOne, `${names}: ${pricedOne.place.name} is the most precise name the service prices`);
  const area = group.find((c) => priced(c) !== false);
  if (area) {
    const why = pricing ? 'no finer name is known to be priced' : 'which names the service prices is not known yet';
    return decide(
      area,
      `${names}: ${why}, so the area ${area.place.name} is sent and ${preciseFirst[0]!.place.name} stays in the address line`,
    );
  }
  return decide(
    group[0]!,
    `${names}: none is known to be priced; the area ${group[0]!.place.name} is sent (the fallback-tariff guard decides)`,
  );
}

export function whyWon(best: Candidate, group: Candidate[], candidates: Candidate[]): string {
  const m = best.matches[0];
  const how = m
    ? `"${m.text}" in ${m.field} (${m.via.replace('_', ' ')}, ${round2(m.score).toFixed(2)})`
    : `the coordinates, ${best.coordsKm?.toFixed(2)} km away`;
  const parts = [`best match ${best.place.name} ${round2(best.confidence).toFixed(2)}, from ${how}`];
  if (best.coordsKm !== undefined && m) parts.push(`coordinates ${best.coordsKm.toFixed(2)} km from it`);
  if (group.length > 1)
    parts.push(
      `${group
        .filter((c) => c !== best)
        .map((c) => c.place.name)
        .join(', ')} nested with it, not rivals`,
    );
  const next = candidates.find((c) => !group.includes(c));
  if (next) parts.push(`next unrelated: ${next.place.name} ${round2(next.confidence).toFixed(2)}`);
  const shorter = best.matches.length > 0 ? candidates.filter((c) => !group.includes(c) && c.matches.length === 0) : [];
  if (shorter.length > 0) parts.push(`${shorter.map((c) => c.place.name).join(', ')} only near the coordinates`);
  return parts.join('; ');
}

/**
 * Coordinates near a place the words named confirm it, the more the nearer: between two named
 * quartiers, the one the customer stands in pulls ahead ("Mermoz, Ouakam" at Ouakam's point).
 */
export function applyCoords(candidates: Candidate[], point: Point): void {
  for (const c of candidates) {
    const d = placeDistanceKm(c.place, point);
    if (d === undefined || d > COORDS_RADIUS_KM) continue;
    c.coordsKm = d;
    c.score += COORDS_BOOST * (1 - d / COORDS_RADIUS_KM);
  }
}

/** No words matched: the nearest known quartier point, if near enough and clearly the nearest. */
export function nearestCandidates(
  tree: PlaceTree,
  point: Point,
  countries: CountryIndex[],
  explicit: CountryCode | undefined,
): Candidate[] {
  const near: { place: Place; km: number }[] = [];
  for (const index of countries) {
    for (const place of index.places) {
      if (place.specificity === 1 || (place.onlyWithCountry && explicit === undefined)) continue;
      const km = placeDistanceKm(place, point);
      if (km !== undefined && km <= COORDS_RADIUS_KM) near.push({ place, km });
    }
  }
  near.sort((a, b) => a.km - b.km);
  return near.slice(0, 5).map(({ place, km }, i) => {
    const rival = near.find((o, j) => j !== i && o.place.name !== place.name && !related(o.place, place, tree));
    const crowded = rival !== undefined && rival.km < Math.max(km, 0.05) * COORDS_CLEARLY_NEARER;
    const score =
      (COORDS_BASE - (COORDS_DISTANCE_SLOPE * km) / COORDS_RADIUS_KM - (crowded ? COORDS_CROWDED : 0)) *
      place.typeFactor;
    return { place, matches: [], coordsKm: km, score, confidence: score };
  });
}

/** Confidence = score, less a penalty when an unrelated place scores close to it (nested names are one answer). */
export function scoreAmbiguity(tree: PlaceTree, candidates: Candidate[]): void {
  for (const c of candidates) {
    let rival = -Infinity;
    for (const o of candidates) {
      if (o === c || related(o.place, c.place, tree) || tree.holds(o, c) || tree.holds(c, o)) continue;
      if (tree.qualifies(c, o)) continue; // "Abobo Sogefiha": a cité of that name in Abobo, not Yopougon's
      if (o.place.name === c.place.name && o.place.country === c.place.country) continue;
      // A commune weighs 0.9 so that a quartier inside it wins; one that contradicts the quartier is a full rival.
      rival = Math.max(rival, o.place.specificity === 1 ? o.score / o.place.typeFactor : o.score);
    }
    const gap = c.score - rival;
    c.confidence = Math.min(MAX_CONFIDENCE, Math.max(0, c.score - Math.max(0, AMBIGUITY_WINDOW - gap)));
  }
}

export function reasonFor(
  minConfidence: number,
  address: string,
  top: Candidate[],
  all: Candidate[],
  mentions: Mention[],
  coords: { point?: Point; note?: string },
  unlisted: string[] = [],
): string {
  const quoted = `'${address || '(empty address)'}'`;
  const notes: string[] = [];
  const byKey = new Map<string, string>();
  for (const m of mentions) if (!byKey.has(m.name.key)) byKey.set(m.name.key, m.text);
  const names = [...new Set(byKey.values())];
  if (names.length === 1) {
    const kind = mentions[0]!.name.kind;
    notes.push(`'${names[0]}' is a ${kind}, not a neighbourhood`);
  } else if (names.length > 1) {
    notes.push(`${names.map((n) => `'${n}'`).join(', ')} are city, region or country names, not neighbourhoods`);
  }
  notes.push(...unlisted);
  if (coords.note) notes.push(coords.note);
  else if (coords.point && top.length === 0)
    notes.push(`no known neighbourhood within ${COORDS_RADIUS_KM} km of the coordinates`);
  const suffix = notes.length > 0 ? ` (${notes.join('; ')})` : '';
  if (top.length === 0) return `no neighbourhood found in ${quoted}${suffix}: add an alias or correct the address`;
  const best = top[0]?.confidence ?? 0;
  const countriesNamed = [
    ...new Set(all.filter((c) => c.confidence >= best - 0.05).map((c) => c.place.country)),
  ].sort();
  if (countriesNamed.length > 1) {
    return `${quoted} names neighbourhoods in several countries (${countriesNamed.join(', ')})${suffix}: set the shop's country, add an alias or correct the address`;
  }
  const list = top
    .slice(0, 3)
    .map((c) => `${c.place.name} ${round2(c.confidence).toFixed(2)}`)
    .join(', ');
  const ambiguous = top.length > 1 && top[0]!.score >= minConfidence;
  const what = ambiguous ? `${quoted} names several neighbourhoods` : `neighbourhood unclear in ${quoted}`;
  return `${what}: ${list}, below ${minConfidence}${suffix}: add an alias or correct the address`;
}
