/**
 * Tariff zones of the emulated dispatch service, built from the neighbourhood gazetteer
 * (data/neighbourhoods/*.csv, © OpenStreetMap contributors, ODbL; see SOURCES.md there).
 *
 * The real service decides zones from the neighbourhood name it receives (spec section 1) and does not
 * publish them. The emulator derives them deterministically so that the same input always costs the
 * same: each neighbourhood gets a band from the distance between its point and its city's centre row
 * (the row named like the city: "Dakar", "Abidjan", ...). Names are matched after normalisation
 * (case, accents, hyphens, apostrophes and repeated spaces folded), alternate names included.
 *
 * City names, their alternate names (DKR, Ndakaaru, ABJ...) and département names (Pikine, Rufisque...)
 * are NOT neighbourhoods: they are left out of the index on purpose, so they get the fallback tariff,
 * as the spec says a city name does.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { findProjectDir } from '../relais.js';
import { parseCsvRecords } from './csv.js';

/** Upper bounds (km from the city centre) of bands 1..4; anything farther is band 5. */
export const BAND_LIMITS_KM = [3, 6, 10, 16] as const;
export const FARTHEST_BAND = BAND_LIMITS_KM.length + 1;
/** An official-list name without a point and without a gazetteer twin: priced as a mid-city band. */
export const BAND_WITHOUT_POINT = 3;

export interface ZoneEntry {
  /** Normalised name this entry answers to. */
  key: string;
  /** The name as the gazetteer spells it (for people reading quotes). */
  name: string;
  country: string;
  city: string;
  band: number;
  /** e.g. "SN-DAKAR-Z2": what a quote reports as pickup_zone / dropoff_zone. */
  zoneId: string;
  distanceFromCentreKm?: number;
}

export interface ZoneIndex {
  /** Candidate zones for a neighbourhood name, one per city at most; empty when unknown or a city name. */
  candidates(name: string): ZoneEntry[];
  /** True when the name is a city or département name: priced with the fallback tariff. */
  isCityName(name: string): boolean;
  size: number;
}

/** Case, accents, hyphens, apostrophes and spacing do not change a neighbourhood. */
export function normaliseName(value: string): string {
  return value
    .normalize('NFKD') // also turns the superscript in "7ᵉ tranche" into a plain "e"
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/œ/g, 'oe')
    .replace(/æ/g, 'ae')
    .replace(/[-‐‑‒–—'’‘`´ʼ_.,/]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function haversineKm(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const toRad = (deg: number) => (deg * Math.PI) / 180;
  const dLat = toRad(b.lat - a.lat);
  const dLng = toRad(b.lng - a.lng);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(toRad(a.lat)) * Math.cos(toRad(b.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function bandForDistance(km: number): number {
  const index = BAND_LIMITS_KM.findIndex((limit) => km <= limit);
  return index === -1 ? FARTHEST_BAND : index + 1;
}

function slug(value: string): string {
  return normaliseName(value).replace(/ /g, '-').toUpperCase();
}

function parseCoordinate(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

function splitAltNames(value: string | undefined): string[] {
  return (value ?? '')
    .split('|')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

interface GazetteerRow {
  country: string;
  city: string;
  names: string[];
  lat?: number;
  lng?: number;
  official: boolean;
  /** Administrative level (official lists) or place type (gazetteer). */
  level: string;
  admin2: string;
}

/** Finds data/neighbourhoods by walking up from this module: works from src/ (tsx) and from dist/. */
export function defaultGazetteerDir(): string {
  const found = findProjectDir(import.meta.url, join('data', 'neighbourhoods'), 'official-lists.csv');
  if (found) return found;
  throw new Error('data/neighbourhoods not found above the emulator module; pass gazetteerDir');
}

async function readRows(dir: string): Promise<GazetteerRow[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.csv')).sort();
  if (files.length === 0) throw new Error(`no CSV file in ${dir}`);
  const rows: GazetteerRow[] = [];
  for (const file of files) {
    for (const r of parseCsvRecords(await readFile(join(dir, file), 'utf8'))) {
      const official = r.name !== undefined && r.neighbourhood === undefined;
      const primary = (official ? r.name : r.neighbourhood) ?? '';
      if (!primary.trim() || !r.city) continue;
      rows.push({
        country: r.country ?? '',
        city: r.city,
        names: [primary, r.ascii_name ?? '', ...splitAltNames(r.alt_names)].filter((s) => s.trim() !== ''),
        lat: parseCoordinate(r.lat),
        lng: parseCoordinate(r.lng),
        official,
        level: (official ? r.level : r.place_type) ?? '',
        admin2: r.admin2 ?? '',
      });
    }
  }
  return rows;
}

function buildIndex(rows: GazetteerRow[]): ZoneIndex {
  // City centres: the gazetteer row named like its city; the mean of the city's points otherwise.
  const centres = new Map<string, { lat: number; lng: number }>();
  const cityNames = new Set<string>();
  for (const row of rows) cityNames.add(normaliseName(row.city));
  for (const row of rows) {
    const isCentreRow = !row.official && row.names.some((n) => normaliseName(n) === normaliseName(row.city));
    if (isCentreRow) {
      row.names.forEach((n) => cityNames.add(normaliseName(n)));
      if (row.lat !== undefined && row.lng !== undefined && !centres.has(row.city)) {
        centres.set(row.city, { lat: row.lat, lng: row.lng });
      }
    }
    // Départements (Dakar, Pikine, Guédiawaye, Rufisque) are administrative areas, not neighbourhoods.
    if (row.admin2) cityNames.add(normaliseName(row.admin2));
    if (row.official && /^d[ée]partement/i.test(row.level)) row.names.forEach((n) => cityNames.add(normaliseName(n)));
  }
  for (const city of new Set(rows.map((r) => r.city))) {
    if (centres.has(city)) continue;
    const points = rows.filter((r) => r.city === city && r.lat !== undefined && r.lng !== undefined);
    if (points.length === 0) continue;
    centres.set(city, {
      lat: points.reduce((s, r) => s + (r.lat ?? 0), 0) / points.length,
      lng: points.reduce((s, r) => s + (r.lng ?? 0), 0) / points.length,
    });
  }

  // key -> city -> entry. Within one city a name that appears twice (two hamlets called "Khar Yalla")
  // keeps the point nearest the centre, so the choice does not depend on row order.
  const byKey = new Map<string, Map<string, ZoneEntry>>();
  const put = (entry: ZoneEntry) => {
    let perCity = byKey.get(entry.key);
    if (!perCity) byKey.set(entry.key, (perCity = new Map()));
    const existing = perCity.get(entry.city);
    const distance = (e: ZoneEntry) => e.distanceFromCentreKm ?? Number.POSITIVE_INFINITY;
    if (!existing || distance(entry) < distance(existing)) perCity.set(entry.city, entry);
  };
  const addRow = (row: GazetteerRow, onlyIfAbsent: boolean) => {
    const centre = centres.get(row.city);
    const point = row.lat !== undefined && row.lng !== undefined ? { lat: row.lat, lng: row.lng } : undefined;
    const distanceFromCentreKm = point && centre ? haversineKm(point, centre) : undefined;
    const band = distanceFromCentreKm === undefined ? BAND_WITHOUT_POINT : bandForDistance(distanceFromCentreKm);
    const displayName = row.names[0] ?? '';
    for (const name of row.names) {
      const key = normaliseName(name);
      if (!key || cityNames.has(key)) continue;
      if (onlyIfAbsent && byKey.get(key)?.has(row.city)) continue;
      put({
        key,
        name: displayName,
        country: row.country,
        city: row.city,
        band,
        zoneId: `${row.country}-${slug(row.city)}-Z${band}`,
        ...(distanceFromCentreKm === undefined ? {} : { distanceFromCentreKm }),
      });
    }
  };
  // Gazetteer points first; official lists only add the names the gazetteer lacks.
  rows.filter((r) => !r.official).forEach((r) => addRow(r, false));
  rows.filter((r) => r.official).forEach((r) => addRow(r, true));

  return {
    candidates(name: string) {
      const key = normaliseName(name);
      if (!key || cityNames.has(key)) return [];
      return [...(byKey.get(key)?.values() ?? [])];
    },
    isCityName(name: string) {
      return cityNames.has(normaliseName(name));
    },
    size: byKey.size,
  };
}

const cache = new Map<string, Promise<ZoneIndex>>();

/** Reads the gazetteer once per directory and process (tests start many emulators). */
export function loadZoneIndex(dir: string = defaultGazetteerDir()): Promise<ZoneIndex> {
  const key = resolve(dir);
  let pending = cache.get(key);
  if (!pending) {
    pending = readRows(key).then(buildIndex);
    pending.catch(() => cache.delete(key));
    cache.set(key, pending);
  }
  return pending;
}
