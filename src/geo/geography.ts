/**
 * Where the gazetteer's places lie relative to one another: which place holds which (official parents, a name
 * opening another a few km away, the commune whose point is the nearest), which two an address may name
 * together without contradiction, and the wider places a place lies in (placeNamed, for an order's candidates).
 */
import {
  communesNamedAfter,
  districtCommunes,
  isCommune,
  nameUsedApart,
  nearestDistrictCommune,
} from './containment.js';
import { isCountryCode, NOISE_WORDS } from './names.js';
import { normaliseTokens } from './normalise.js';
import type { CountryIndex, Gazetteer, Place } from './gazetteer.js';
import {
  ADJACENT_KM,
  AREA_MAX_KM,
  COMMUNE_ARRONDISSEMENT_REACH_KM,
  COMMUNE_REACH_KM,
  contains,
  placeDistanceKm,
  placesDistanceKm,
  TYPED_SUB_AREA_KM,
  toNeighbourhood,
  type Candidate,
} from './resolver-model.js';
import { COORDS_RADIUS_KM, type Neighbourhood } from './types.js';

export function isAncestor(parent: Place, child: Place): boolean {
  const own = parent.tokens.filter((t) => !NOISE_WORDS.has(t));
  return child.parents.some((p) => parent.keys.has(p.join(' ')) || (own.length > 0 && own.every((t) => p.includes(t))));
}

/**
 * Two places an address may both mention without contradiction: one inside the other (official parent,
 * "HLM" / "HLM 5", "Cocody" / "Cocody Danga"), neighbours ("Angré 8e tranche"), or a commune and a
 * quartier a few kilometres apart. Anything else ("Mermoz, Ouakam": 2.2 km, neither holds the other) is
 * a contradiction and costs confidence.
 */
/** What the gazetteer knows of where places lie: for telling nested names from rival names. */
export interface Geography {
  /** The commune whose point is the nearest (AREA_MAX_KM at most). */
  areaOf(p: Place): Place | undefined;
  /** The places the official lists name as its parents, their parents, and so on. */
  ancestorsOf(p: Place): Place[];
}

export function isAncestorDeep(a: Place, b: Place, geo: Geography): boolean {
  return isAncestor(a, b) || geo.ancestorsOf(b).some((q) => q === a || isAncestor(a, q));
}

/**
 * A commune and a quartier go together when the lists make the commune its parent, or, when no list
 * gives the quartier another commune, when it lies within COMMUNE_REACH_KM of the commune's point or the
 * commune's point is the nearest one to it. "Angré, Yopougon" contradicts itself: the list puts Angré in Cocody.
 */
export function communeHolds(commune: Place, b: Place, geo: Geography): boolean {
  if (b.specificity === 1 || commune.country !== b.country) return false;
  if (isAncestorDeep(commune, b, geo)) return true;
  if (geo.ancestorsOf(b).some((q) => q.specificity === 1)) return false;
  const km = placesDistanceKm(commune, b);
  return (km !== undefined && km <= COMMUNE_REACH_KM) || geo.areaOf(b) === commune;
}

export function related(a: Place, b: Place, geo: Geography): boolean {
  if (a === b) return true;
  if (a.country !== b.country) return false;
  if (isAncestorDeep(a, b, geo) || isAncestorDeep(b, a, geo)) return true;
  if (contains(a.tokens, b.tokens) || contains(b.tokens, a.tokens)) return true;
  if (a.specificity === 1) return communeHolds(a, b, geo);
  if (b.specificity === 1) return communeHolds(b, a, geo);
  const km = placesDistanceKm(a, b);
  if (km === undefined) return false;
  if (km <= ADJACENT_KM) return true;
  return a.commune !== b.commune && km <= COMMUNE_ARRONDISSEMENT_REACH_KM;
}

/**
 * Does place `a` hold place `b` (an area and a sub-area in it, one answer)? Its parent in the official
 * lists or its département; the commune it lies in (communeHolds); a name inside the other's a few km away
 * ("HLM" / "HLM 5", "Cocody" / "Cocody Danga", not "Plateau" / "Plateau Dokui", 8 km off); a commune
 * d'arrondissement and a quartier within its reach (Ouakam / Mamelles).
 */
export function encloses(a: Place, b: Place, geo: Geography): boolean {
  if (a === b || a.country !== b.country) return false;
  if (isAncestorDeep(a, b, geo)) return true;
  if (b.specificity === 1) return false;
  if (a.specificity === 1) return communeHolds(a, b, geo);
  const km = placesDistanceKm(a, b);
  if (a.tokens.length < b.tokens.length && contains(a.tokens, b.tokens))
    return km === undefined || km <= COORDS_RADIUS_KM;
  return a.commune && !b.commune && km !== undefined && km <= COMMUNE_ARRONDISSEMENT_REACH_KM;
}

/** Two towns of one rank (neither a commune d'arrondissement nor a quartier): neither holds the other. */
export function peerTowns(a: Place, b: Place): boolean {
  return a.specificity === 1 && b.specificity === 1 && !a.commune && !b.commune;
}

/** The gazetteer's places as a tree: what holds what, computed once per place. */
export class PlaceTree implements Geography {
  private readonly ancestors = new Map<Place, Place[]>();
  private readonly areas = new Map<Place, Place | undefined>();
  private readonly districts = new Map<CountryIndex, Place[]>();
  private readonly usedApart = new Map<Place, boolean>();
  private readonly unlisted = new Map<Place, Place[]>();
  private readonly containing = new Map<Place, Place[]>();
  /** Every name and alternate name of the gazetteer with its key, folded once: an order's candidate names are mostly these. */
  private readonly nameKeys = new Map<string, string>();

  constructor(private readonly gazetteer: Gazetteer) {
    for (const index of gazetteer.countries.values())
      for (const p of index.places)
        for (const name of [p.name, ...p.altNames])
          if (!this.nameKeys.has(name)) this.nameKeys.set(name, normaliseTokens(name).join(' '));
  }

  /** Every name and alternate name of the gazetteer. */
  names(): Iterable<string> {
    return this.nameKeys.keys();
  }

  /** normaliseTokens(name).join(' '), read from the names folded at load when it is one of them. */
  keyOf(name: string): string {
    return this.nameKeys.get(name) ?? normaliseTokens(name).join(' ');
  }

  ancestorsOf(p: Place): Place[] {
    let found = this.ancestors.get(p);
    if (found) return found;
    found = [];
    const index = this.gazetteer.countries.get(p.country);
    const opening = (q: Place) => (index ? this.openingNames(index, q) : []);
    let frontier = [p];
    for (let depth = 0; depth < 3 && index && frontier.length > 0; depth++) {
      const next = frontier.flatMap((q) => [
        ...q.parents.flatMap((key) => (index.byKey.get(key.join(' ')) ?? []).map((h) => h.place)),
        ...opening(q),
      ]);
      frontier = next.filter((q) => q !== p && !found!.includes(q));
      found.push(...new Set(frontier));
    }
    this.ancestors.set(p, found);
    return found;
  }

  /** A name that opens this one, a few km away, holds it too: "Angré" holds "Angré Cocoteraie", and Angré's parent is Cocody. */
  private openingNames(index: CountryIndex, q: Place): Place[] {
    return q.tokens
      .slice(0, -1)
      .flatMap((_, n) =>
        (index.byKey.get(q.tokens.slice(0, n + 1).join(' ')) ?? [])
          .filter((h) => h.kind === 'exact' && h.place !== q && (placesDistanceKm(h.place, q) ?? 0) <= COORDS_RADIUS_KM)
          .map((h) => h.place),
      );
  }

  /**
   * The wider place a name opens with, for placeNamed: the longest opening name ("Médina Gounass" holds "Medina
   * Gounass 3", not "Medina"), unless the name hyphenates it with another place: "Mermoz-Sacré-Cœur" joins Mermoz
   * and Sacré-Cœur and lies in neither, while "Yeumbeul Nord" lies in Yeumbeul and "Koumassi Sicogi" in Koumassi.
   */
  private openingName(index: CountryIndex, q: Place): Place[] {
    return this.openingNames(index, q)
      .slice(-1)
      .filter((o) => {
        const rest = q.tokens.slice(o.tokens.length).join(' ');
        return !q.name.includes('-') || !(index.byKey.get(rest) ?? []).some((h) => h.kind === 'exact');
      });
  }

  /** The commune (a place of specificity 1) whose own point is the nearest to this place's, within AREA_MAX_KM. */
  areaOf(p: Place): Place | undefined {
    if (this.areas.has(p)) return this.areas.get(p);
    let best: Place | undefined;
    let bestKm = AREA_MAX_KM;
    for (const q of this.gazetteer.countries.get(p.country)?.places ?? []) {
      // The commune's own point (its highest-ranked row), not a same-name village elsewhere ("Adjamé" near Bingerville).
      if (q.specificity !== 1 || q === p || !q.coords) continue;
      const km = placeDistanceKm(p, q.coords);
      if (km !== undefined && km <= bestKm) {
        best = q;
        bestKm = km;
      }
    }
    this.areas.set(p, best);
    return best;
  }

  /**
   * Does the commune candidate `a` qualify candidate `b`, an estate name the city uses in several places, typed
   * right after it ("Abobo Sogefiha")? Then `b` says nothing against the commune (containment.ts nameUsedApart).
   */
  qualifies(a: Candidate, b: Candidate): boolean {
    if (a.place.specificity !== 1 || b.place.specificity === 1 || a.place.country !== b.place.country) return false;
    if (!a.matches.some((m) => b.matches.some((n) => n.field === m.field && n.seg === m.seg && n.start === m.end)))
      return false;
    let apart = this.usedApart.get(b.place);
    if (apart === undefined) {
      const index = this.gazetteer.countries.get(b.place.country);
      this.usedApart.set(b.place, (apart = index !== undefined && nameUsedApart(b.place, index)));
    }
    return apart;
  }

  /**
   * Does candidate `a` hold candidate `b`? As places (encloses), or as typed: an area written just before
   * a place within TYPED_SUB_AREA_KM of it, in the same part of the same field ("Angré 9e tranche",
   * "Grand-Yoff Arafat"), unless that place is itself a commune.
   */
  holds(a: Candidate, b: Candidate): boolean {
    if (encloses(a.place, b.place, this)) return true;
    if (
      encloses(b.place, a.place, this) ||
      b.place.specificity === 1 ||
      b.place.commune ||
      a.place.country !== b.place.country
    )
      return false;
    const km = placesDistanceKm(a.place, b.place);
    if (km === undefined || km > TYPED_SUB_AREA_KM) return false;
    return a.matches.some((m) => b.matches.some((n) => n.field === m.field && n.seg === m.seg && n.start === m.end));
  }

  /**
   * The gazetteer's place of this country named `name` (as a resolution names it), with the wider places that
   * hold it, most precise first: its official parents (a Dakar row's département among them) and the names that
   * open it a few km away ("Sacré Coeur" holds "Sacré-Cœur 3"), then theirs, up to a commune: nothing wider
   * than a commune or département is followed (an arrondissement holds places several km apart). Not the
   * nearest commune by distance: Dakar's communes d'arrondissement are 1–3 km across, so that guess is often
   * wrong. For the candidate names of an order (candidates.ts); city, region and country names are never places.
   */
  placeNamed(country: string, name: string): { place: Neighbourhood; containing: Neighbourhood[] } | undefined {
    const place = this.findPlace(country, name);
    const index = isCountryCode(country) ? this.gazetteer.countries.get(country) : undefined;
    if (!place || !index) return undefined;
    // Once per place: the dispatch path asks for every order, and what holds a place never changes.
    let containing = this.containing.get(place);
    if (!containing) this.containing.set(place, (containing = this.findContaining(index, place)));
    return { place: toNeighbourhood(place), containing: containing.map(toNeighbourhood) };
  }

  private findContaining(index: CountryIndex, place: Place): Place[] {
    const containing: Place[] = [];
    const top = (q: Place) => q.specificity === 1 || q.commune;
    // Quartier-sized areas, then communes d'arrondissement, then whole communes: finest to widest.
    const rank = (q: Place) => (q.specificity === 1 ? 2 : q.commune ? 1 : 0);
    let frontier = [place];
    for (let depth = 0; depth < 3 && frontier.length > 0; depth++) {
      const next = frontier
        .filter((q) => q === place || !top(q))
        .flatMap((q) => [
          // A parent is wider only if it is no finer a place: the quartier Almadies (folded with its
          // arrondissement) does not hold the commune Mermoz-Sacré-Cœur. A commune d'arrondissement is held by a
          // whole commune or département only, never by another of its rank: Ouakam is not in the quartier
          // Almadies, nor Médina in Plateau (each folded with the arrondissement of that name). Nor is a town held
          // by the town its département is named after: the name denotes that other town to a service (Diamniadio
          // is not Rufisque).
          ...q.parents
            .flatMap((key) => (index.byKey.get(key.join(' ')) ?? []).map((h) => h.place))
            .filter((o) => (q.commune ? rank(o) > rank(q) : rank(o) >= rank(q)) && !peerTowns(o, q)),
          ...this.openingName(index, q),
        ]);
      frontier = [...new Set(next)].filter((q) => q !== place && q.name !== place.name && !containing.includes(q));
      containing.push(...frontier);
    }
    containing.push(...this.unlistedCommunes(index, place, containing));
    containing.sort((a, b) => rank(a) - rank(b));
    return containing;
  }

  /**
   * The commune holding a place when no list says which (containment.ts): the commune named after it, else,
   * in a district wholly divided into listed communes, the one whose point is clearly the nearest to the
   * place's (or to its nearest wider place with a point). None when a wider place already is a commune.
   */
  private unlistedCommunes(index: CountryIndex, place: Place, containing: Place[]): Place[] {
    if (isCommune(place) || containing.some(isCommune)) return [];
    // Once per place: the dispatch path asks for every order.
    let found = this.unlisted.get(place);
    if (!found) this.unlisted.set(place, (found = this.findUnlistedCommunes(index, place, containing)));
    return found;
  }

  private findUnlistedCommunes(index: CountryIndex, place: Place, containing: Place[]): Place[] {
    // Named after by several ("Thiaroye" in Thiaroye-Gare and Thiaroye-sur-Mer): it spans them, none holds it.
    const named = [...new Set([place, ...containing].flatMap((q) => communesNamedAfter(q, index)))];
    if (named.length > 0) return named.length === 1 ? named : [];
    let communes = this.districts.get(index);
    if (!communes) this.districts.set(index, (communes = districtCommunes(this.gazetteer, index)));
    const located = [place, ...containing].find((q) => q.coords !== undefined || q.points.length > 0);
    const nearest = located && nearestDistrictCommune(located, communes);
    return nearest ? [nearest] : [];
  }

  /** The gazetteer place spelled `name` in this country: that very spelling first, else an exact key. */
  findPlace(country: string, name: string): Place | undefined {
    if (!isCountryCode(country)) return undefined;
    const hits = this.gazetteer.countries.get(country)?.byKey.get(this.keyOf(name)) ?? [];
    return (hits.find((h) => h.place.name === name) ?? hits.find((h) => h.kind === 'exact') ?? hits[0])?.place;
  }
}
