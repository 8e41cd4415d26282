/**
 * The neighbourhood resolver. The dispatch service prices a delivery by the NEIGHBOURHOOD it receives in
 * `city`; a city name falls back to the highest tariff and the customer pays the difference (spec §1).
 * So this module finds the customer's quartier in whatever the shop gave (every address field, the
 * merchant's aliases, coordinates) and answers with a confidence, or refuses with a reason a merchant can
 * act on. It never answers a city, region or country name, and never guesses below `minConfidence`.
 *
 * Confidence model (each number is a constant below):
 *  - a text match scores by how it matched: alias 0.99, exact name 0.97, alternate name 0.95,
 *    abbreviation 0.90, numbered part missing from the gazetteer ×0.90, typo 0.92 − 0.4 × edits/length;
 *  - times the field's weight (province 0.95, zip 0.9, company 0.85) and the kind of place (a whole
 *    commune 0.9, a village 0.93, a hamlet 0.9), ×0.75 right after a street or landmark word ("Route de");
 *  - plus small bonuses: the same place in several fields (+0.02 each), a numbered/listed quartier (+0.01),
 *    coordinates near it (+0.08 × (1 − distance/2.5 km));
 *  - minus an ambiguity penalty when another, unrelated place scores within 0.25 (max(0, 0.25 − gap));
 *  - coordinates alone (no words matched): 0.9 − 0.2 × distance/2.5 km, −0.15 unless the nearest quartier
 *    point is 1.3 times nearer than any other. Below 0.75: not resolved.
 */
import { join, resolve as resolvePath } from 'node:path';
import { findProjectDir } from '../config/project-files.js';
import { AddressSignals } from './address-signals.js';
import { rememberFoldedSpellings } from './candidates.js';
import { loadGazetteer, type Gazetteer, type Point } from './gazetteer.js';
import { PlaceTree } from './geography.js';
import { isCountryCode, type CountryCode } from './names.js';
import {
  applyCoords,
  chooseLevel,
  nearestCandidates,
  nestedGroup,
  reasonFor,
  scoreAmbiguity,
  whyWon,
} from './ranking.js';
import {
  addressText,
  placeDistanceKm,
  round2,
  spanOf,
  toNeighbourhood,
  VIA_SCORE,
  type Candidate,
  type Mention,
} from './resolver-model.js';
import { TextMatcher } from './text-matches.js';
import {
  DEFAULT_MIN_CONFIDENCE,
  type MatchEvidence,
  type Neighbourhood,
  type Resolution,
  type ResolveInput,
} from './types.js';

export { normaliseText } from './normalise.js';
export { explainResolution } from './explain.js';
export {
  COORDS_RADIUS_KM,
  DEFAULT_MIN_CONFIDENCE,
  type AddressFields,
  type LevelDecision,
  type MatchEvidence,
  type Neighbourhood,
  type PricedNames,
  type Resolution,
  type ResolveInput,
} from './types.js';

function defaultDataDir(): string {
  const found = findProjectDir(import.meta.url, join('data', 'neighbourhoods'), 'official-lists.csv');
  if (found) return found;
  throw new Error(
    'data/neighbourhoods not found above src/geo: pass the gazetteer directory to NeighbourhoodResolver.load()',
  );
}

const loaded = new Map<string, NeighbourhoodResolver>();

export class NeighbourhoodResolver {
  readonly minConfidence: number = DEFAULT_MIN_CONFIDENCE;
  private readonly tree: PlaceTree;
  private readonly matcher: TextMatcher;
  private readonly signals: AddressSignals;
  /** The city, region and country names by key: every candidate name of every order is checked against them. */
  private readonly blockedByKey = new Map<string, Gazetteer['blocked']>();

  private constructor(private readonly gazetteer: Gazetteer) {
    this.tree = new PlaceTree(gazetteer);
    this.matcher = new TextMatcher(gazetteer, this.tree);
    this.signals = new AddressSignals(gazetteer);
    rememberFoldedSpellings(this.tree.names());
    for (const b of gazetteer.blocked) {
      const list = this.blockedByKey.get(b.key);
      if (list) list.push(b);
      else this.blockedByKey.set(b.key, [b]);
    }
  }

  /**
   * The gazetteer's place of this country named `name` (as a resolution names it), with the wider places that
   * hold it, most precise first (geography.ts PlaceTree.placeNamed). For the candidate names of an order.
   */
  placeNamed(country: string, name: string): { place: Neighbourhood; containing: Neighbourhood[] } | undefined {
    return this.tree.placeNamed(country, name);
  }

  /** The gazetteer's spelling of the place of this country named `name`: placeNamed's place, without its wider places. */
  placeNameOf(country: string, name: string): string | undefined {
    return this.tree.findPlace(country, name)?.name;
  }

  /** Every place the gazetteer lists for a country (what `relais map learn` asks a service about). */
  placesOf(country: string): Neighbourhood[] {
    if (!isCountryCode(country)) return [];
    return (this.gazetteer.countries.get(country)?.places ?? []).map(toNeighbourhood);
  }

  /** Is this text one of the country's city, region or country names (never sent as a neighbourhood)? */
  isCityRegionOrCountry(country: string, text: string): boolean {
    const named = this.blockedByKey.get(this.tree.keyOf(text));
    return named !== undefined && named.some((b) => b.country === country || b.kind === 'country');
  }

  /**
   * Of `names` (as a service spells them), those whose gazetteer place lies nearest `point`, nearest first, with
   * the distance in km: the priced places a hold offers as aliases. A name the gazetteer does not know is left out.
   */
  nearestOf(country: string, point: Point, names: string[], limit: number): { name: string; km: number }[] {
    const found: { name: string; km: number }[] = [];
    for (const name of names) {
      const place = this.tree.findPlace(country, name);
      const km = place ? placeDistanceKm(place, point) : undefined;
      if (km !== undefined) found.push({ name, km: Math.round(km * 10) / 10 });
    }
    return found.sort((a, b) => a.km - b.km || a.name.localeCompare(b.name)).slice(0, limit);
  }

  /** The directory the gazetteer was read from. */
  get dataDir(): string {
    return this.gazetteer.dataDir;
  }

  /** Reads the gazetteer once per directory (default: <project>/data/neighbourhoods) and indexes it. */
  static load(dataDir?: string): NeighbourhoodResolver {
    const dir = resolvePath(dataDir ?? defaultDataDir());
    let resolver = loaded.get(dir);
    if (!resolver) {
      resolver = new NeighbourhoodResolver(loadGazetteer(dir));
      loaded.set(dir, resolver);
    }
    return resolver;
  }

  /** Where the gazetteer puts the neighbourhood it spells `name` (the dashboard's map), when it has a point for it. */
  whereIs(country: string, name: string): Point | undefined {
    if (!isCountryCode(country)) return undefined;
    const place = this.gazetteer.countries
      .get(country)
      ?.places.find((p) => p.name === name && (p.coords ?? p.points[0]));
    return place?.coords ?? place?.points[0];
  }

  resolve(input: ResolveInput): Resolution {
    const requested = input.country?.trim().toUpperCase();
    if (
      requested !== undefined &&
      requested !== '' &&
      !(isCountryCode(requested) && this.gazetteer.countries.has(requested))
    ) {
      return {
        ok: false,
        reason: `no neighbourhood list for country '${input.country}': Relais knows ${[...this.gazetteer.countries.keys()].join(', ')}`,
        candidates: [],
      };
    }
    const explicit = requested !== undefined && requested !== '' ? (requested as CountryCode) : undefined;
    const fields = this.signals.fieldTexts(input.fields);
    const mentions = this.signals.blockedMentions(fields);
    const coords = this.signals.usableCoords(input.coords, explicit);
    const countries = this.signals.countriesFor(explicit, mentions, coords.point);

    const aliasOutcome = this.signals.aliasResolution(input.aliases, fields, countries, explicit);
    const unlisted: string[] = [];
    const candidates = this.matcher.textCandidates(fields, countries, explicit, unlisted);
    if (aliasOutcome) {
      if (!aliasOutcome.ok) return aliasOutcome;
      scoreAmbiguity(this.tree, candidates);
      candidates.sort((a, b) => b.confidence - a.confidence);
      const others = candidates.filter((c) => c.place !== aliasOutcome.place).slice(0, 4);
      return {
        ok: true,
        neighbourhood: toNeighbourhood(aliasOutcome.place),
        confidence: VIA_SCORE.alias,
        evidence: [aliasOutcome.evidence],
        alternatives: others.map((c) => ({ name: c.place.name, confidence: round2(c.confidence) })),
      };
    }

    if (candidates.length > 0) {
      if (coords.point) applyCoords(candidates, coords.point);
      scoreAmbiguity(this.tree, candidates);
    } else if (coords.point) {
      // Ambiguity between points is judged inside nearestCandidates (is the nearest clearly the nearest?).
      candidates.push(...nearestCandidates(this.tree, coords.point, countries, explicit));
    }
    candidates.sort(
      (a, b) =>
        b.confidence - a.confidence ||
        b.place.specificity - a.place.specificity ||
        Number(a.place.commune) - Number(b.place.commune) ||
        b.score - a.score ||
        spanOf(b) - spanOf(a) ||
        a.place.name.localeCompare(b.place.name),
    );
    return this.answer(input, candidates, { mentions, coords, unlisted });
  }

  /** The best candidate, with its nested group and the level sent, or the hold when none is confident enough. */
  private answer(
    input: ResolveInput,
    candidates: Candidate[],
    notes: { mentions: Mention[]; coords: { point?: Point; note?: string }; unlisted: string[] },
  ): Resolution {
    const { coords } = notes;
    const best = candidates[0];
    const evidenceOf = (c: Candidate): MatchEvidence[] => [
      ...c.matches.map((m) => ({ field: m.field, text: m.text, via: m.via, score: round2(m.score) })),
      ...(c.coordsKm !== undefined && coords.point
        ? [
            {
              field: 'coords' as const,
              text: `${coords.point.lat},${coords.point.lng}: ${c.coordsKm.toFixed(1)} km from ${c.place.name}`,
              via: 'coords' as const,
              score: round2(c.confidence),
            },
          ]
        : []),
    ];
    const distinct = (list: Candidate[]) => {
      const seen = new Set<string>();
      return list.filter((c) => !seen.has(c.place.name) && seen.add(c.place.name));
    };
    if (best && best.confidence >= this.minConfidence) {
      const group = nestedGroup(this.tree, best, candidates);
      const { sent, level } = chooseLevel(group, input.pricing);
      const finest = group.at(-1)!;
      return {
        ok: true,
        neighbourhood: toNeighbourhood(sent.place),
        confidence: round2(best.confidence),
        evidence: group.flatMap(evidenceOf),
        alternatives: distinct(candidates.filter((c) => !group.includes(c)))
          .slice(0, 4)
          .map((c) => ({ name: c.place.name, confidence: round2(c.confidence) })),
        why: whyWon(best, group, candidates),
        level,
        ...(finest !== sent ? { subArea: toNeighbourhood(finest.place) } : {}),
      };
    }
    const top = distinct(candidates).slice(0, 5);
    const address = addressText(input.fields);
    return {
      ok: false,
      reason: reasonFor(this.minConfidence, address, top, candidates, notes.mentions, coords, notes.unlisted),
      candidates: top.map((c) => ({ name: c.place.name, confidence: round2(c.confidence) })),
      evidence: top.flatMap(evidenceOf),
    };
  }
}
