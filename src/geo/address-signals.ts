/**
 * What an address gives besides its place names: its fields in tokens, the city, region and country names
 * written in it (never answers, but they tell the country), the coordinates when they place a delivery, the
 * countries to search, and the merchant's aliases, which win over everything else.
 */
import type { BlockedName, CountryIndex, Gazetteer, Place, Point } from './gazetteer.js';
import { COUNTRIES, type CountryCode } from './names.js';
import { normaliseTokens, segmentsOf } from './normalise.js';
import {
  CITY_CENTROID_KM,
  CITY_POINT_KM,
  COARSE_ACCURACY_M,
  decimalsOf,
  FIELD_ORDER,
  haversineKm,
  inBox,
  PRECISE_ACCURACY_M,
  PRECISE_DECIMALS,
  VIA_SCORE,
  type CompiledAlias,
  type FieldText,
  type Mention,
} from './resolver-model.js';
import { RecentlyUsed } from './recently-used.js';
import type { AddressFields, MatchEvidence, ResolveInput } from './types.js';

/** How many shops' alias sets stay compiled (each shop has one set at a time; a change makes a new one). */
const ALIAS_SETS_KEPT = 256;

/** Reads an address's fields, city names, coordinates and aliases against one gazetteer. */
export class AddressSignals {
  /**
   * Compiled alias sets by content: the pipeline and the checkout merge a shop's aliases into a new object for every
   * order or quote (the registry's and those added at run time), which a cache by identity never finds. Compiling 30
   * aliases took about 110 µs, more than the rest of the resolution; the content key costs a JSON.stringify.
   */
  private readonly aliasSets = new RecentlyUsed<string, CompiledAlias[]>(ALIAS_SETS_KEPT);

  constructor(private readonly gazetteer: Gazetteer) {}

  fieldTexts(fields: AddressFields): FieldText[] {
    const out: FieldText[] = [];
    for (const field of FIELD_ORDER) {
      const value = fields[field];
      if (typeof value !== 'string' || value.trim() === '') continue;
      const text: FieldText = { field, rawWords: [], tokens: [] };
      segmentsOf(value).forEach((segment, seg) => {
        const offset = text.rawWords.length;
        text.rawWords.push(...segment.rawWords);
        for (const t of segment.tokens) text.tokens.push({ text: t.text, raw: t.raw + offset, seg, expanded: false });
      });
      if (text.tokens.length > 0) out.push(text);
    }
    return out;
  }

  /** City, region and country names written in the address: never answers, but they tell the country. */
  blockedMentions(fields: FieldText[]): Mention[] {
    const found: Mention[] = [];
    for (const { field, rawWords, tokens: fieldTokens } of fields) {
      const tokens = fieldTokens.map((t) => t.text);
      for (let i = 0; i < tokens.length; i++) {
        for (const b of this.gazetteer.blockedByFirstToken.get(tokens[i]!) ?? []) {
          // "Grand Dakar", "Dakar-Plateau", "Pointe de Dakar" are places, not the city.
          const end = i + b.tokens.length;
          if (end > tokens.length || fieldTokens[end - 1]!.seg !== fieldTokens[i]!.seg) continue;
          if (b.tokens.every((t, k) => tokens[i + k] === t) && !this.insideLongerName(tokens, i, end)) {
            const text = rawWords.slice(fieldTokens[i]!.raw, fieldTokens[end - 1]!.raw + 1).join(' ');
            found.push({ name: b, field, text });
          }
        }
      }
    }
    return found;
  }

  private insideLongerName(tokens: string[], start: number, end: number): boolean {
    for (let s = Math.max(0, start - 3); s <= start; s++) {
      for (let e = end; e <= Math.min(tokens.length, end + 3); e++) {
        if (e - s === end - start) continue;
        const key = tokens.slice(s, e).join(' ');
        for (const index of this.gazetteer.countries.values()) if (index.byKey.has(key)) return true;
      }
    }
    return false;
  }

  usableCoords(c: ResolveInput['coords'], explicit: CountryCode | undefined): { point?: Point; note?: string } {
    if (!c) return {};
    const { lat, lng } = c;
    if (!Number.isFinite(lat) || !Number.isFinite(lng) || Math.abs(lat) > 90 || Math.abs(lng) > 180)
      return { note: 'coordinates are not valid numbers' };
    if (Math.abs(lat) < 1e-6 && Math.abs(lng) < 1e-6) return { note: 'coordinates 0,0 ignored (no location)' };
    const boxes = explicit ? [explicit] : COUNTRIES;
    if (!boxes.some((k) => inBox({ lat, lng }, k)))
      return { note: `coordinates ${lat},${lng} lie outside ${explicit ?? 'the covered countries'}` };
    const accuracy = c.accuracyM;
    if (accuracy !== undefined && Number.isFinite(accuracy) && accuracy > COARSE_ACCURACY_M) {
      return {
        note: `coordinates are only accurate to ${Math.round(accuracy)} m (a geocoded city or district), not a delivery point`,
      };
    }
    const centreKm = Math.min(
      Infinity,
      ...this.gazetteer.cityCentres
        .filter((cc) => !explicit || cc.country === explicit)
        .map((cc) => haversineKm(cc.point, { lat, lng })),
    );
    // Distance alone cannot tell a phone's fix at a landmark near the centre from the city's centroid: precision decides.
    const precise =
      accuracy !== undefined && Number.isFinite(accuracy)
        ? accuracy <= PRECISE_ACCURACY_M
        : Math.min(decimalsOf(lat), decimalsOf(lng)) >= PRECISE_DECIMALS && centreKm > CITY_POINT_KM;
    if (centreKm <= CITY_CENTROID_KM && !precise) {
      return {
        note: 'coordinates are the city centre (a geocoded city name), not a delivery point: add the quartier or precise coordinates',
      };
    }
    return { point: { lat, lng } };
  }

  countriesFor(
    explicit: CountryCode | undefined,
    mentions: { name: BlockedName }[],
    point: Point | undefined,
  ): CountryIndex[] {
    const all = [...this.gazetteer.countries.values()];
    if (explicit) return all.filter((c) => c.country === explicit);
    const named = new Set(mentions.map((m) => m.name.country));
    if (named.size === 1) return all.filter((c) => named.has(c.country));
    if (named.size === 0 && point) {
      const boxed = all.filter((c) => inBox(point, c.country));
      if (boxed.length === 1) return boxed;
    }
    return all;
  }

  private compiledAliases(aliases: Record<string, string>): CompiledAlias[] {
    const key = JSON.stringify(aliases);
    const known = this.aliasSets.get(key);
    if (known) return known;
    const compiled = Object.entries(aliases)
      .map(([text, canonical]) => ({ tokens: normaliseTokens(text), text, canonical }))
      .filter((a) => a.tokens.length > 0)
      .sort((a, b) => b.tokens.length - a.tokens.length);
    this.aliasSets.set(key, compiled);
    return compiled;
  }

  /** A merchant alias found in the address wins over everything else, once its target is checked. */
  aliasResolution(
    aliases: Record<string, string> | undefined,
    fields: FieldText[],
    countries: CountryIndex[],
    explicit: CountryCode | undefined,
  ): { ok: true; place: Place; evidence: MatchEvidence } | { ok: false; reason: string; candidates: [] } | undefined {
    if (!aliases) return undefined;
    const hits: { alias: CompiledAlias; field: keyof AddressFields }[] = [];
    for (const alias of this.compiledAliases(aliases)) {
      const n = alias.tokens.length;
      // An alias may span commas ("Mermoz, Ouakam" → "Mermoz"): it is matched against each whole field.
      for (const { field, tokens } of fields) {
        for (let i = 0; i + n <= tokens.length; i++) {
          if (alias.tokens.every((t, k) => tokens[i + k]!.text === t)) {
            hits.push({ alias, field });
            break;
          }
        }
      }
    }
    if (hits.length === 0) return undefined;
    const longest = hits.filter((h) => h.alias.tokens.length === hits[0]!.alias.tokens.length);
    const targets = new Map<string, { hit: (typeof hits)[number]; places: Place[] }>();
    for (const hit of longest) {
      const key = normaliseTokens(hit.alias.canonical).join(' ');
      const places = [
        ...new Set(
          countries
            .flatMap((c) => (c.byKey.get(key) ?? []).map((h) => h.place))
            .filter((p) => explicit !== undefined || !p.onlyWithCountry),
        ),
      ];
      if (places.length === 0) {
        return {
          ok: false,
          reason: `the alias '${hit.alias.text}' points to '${hit.alias.canonical}', which is not a neighbourhood in the gazetteer${explicit ? ` for ${explicit}` : ''}: correct the alias to a listed neighbourhood name`,
          candidates: [],
        };
      }
      targets.set(places.map((p) => p.id).join(','), { hit, places });
    }
    if (targets.size > 1) {
      return {
        ok: false,
        reason: `the aliases ${[...targets.values()].map((t) => `'${t.hit.alias.text}' → '${t.hit.alias.canonical}'`).join(' and ')} disagree for this address: remove one or correct the address`,
        candidates: [],
      };
    }
    const [{ hit, places }] = [...targets.values()] as [{ hit: (typeof hits)[number]; places: Place[] }];
    if (places.length > 1) {
      return {
        ok: false,
        reason: `the alias '${hit.alias.text}' points to '${hit.alias.canonical}', which exists in ${places.map((p) => p.country).join(' and ')}: set the shop's country`,
        candidates: [],
      };
    }
    return {
      ok: true,
      place: places[0]!,
      evidence: { field: 'alias', text: `${hit.alias.text} (in ${hit.field})`, via: 'alias', score: VIA_SCORE.alias },
    };
  }
}
