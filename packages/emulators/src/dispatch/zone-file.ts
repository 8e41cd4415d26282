/**
 * A service's own list of priced places, as a file: the emulated service then prices these names and no
 * other, cut and spelled its own way (a plural, "Le …", only the area of some places, only the sub-areas of
 * others), as a real service does. Any name not in the file is priced at the fallback tariff.
 *
 *   country,name,band,lat,lon,covers
 *   SN,Les Almadies,3,14.7442,-17.5175,Almadies;Pointe des Almadies
 *
 * country: ISO code; name: the service's spelling; band: the zone tariff band 1–5 (pricing.ts); lat/lon:
 * optional; covers: optional `;`-separated gazetteer names the priced name covers (read by scoring tools, not
 * here). Names are compared as the gazetteer-based zones compare them (normaliseName: case, accents,
 * hyphens, apostrophes and spacing folded); both ends of a route must be in the same country.
 */
import { readFile } from 'node:fs/promises';
import { parseCsvRecords } from './csv.js';
import { FARTHEST_BAND, normaliseName, type ZoneEntry, type ZoneIndex } from './zones.js';

export const ZONE_FILE_HEADER = ['country', 'name', 'band', 'lat', 'lon', 'covers'] as const;

function entryOf(record: Record<string, string>, line: number, file: string): ZoneEntry {
  const fail = (why: string) => new Error(`zone file ${file}, line ${line}: ${why}`);
  const country = (record.country ?? '').trim().toUpperCase();
  const name = (record.name ?? '').trim();
  const band = Number((record.band ?? '').trim());
  if (!/^[A-Z]{2}$/.test(country)) throw fail(`country must be an ISO code such as SN, not "${record.country}"`);
  if (normaliseName(name) === '') throw fail('name is empty');
  if (!Number.isInteger(band) || band < 1 || band > FARTHEST_BAND)
    throw fail(`band must be a whole number from 1 to ${FARTHEST_BAND}, not "${record.band}"`);
  // The country stands for the city: a route is zone-priced when both ends are in the same one.
  return { key: normaliseName(name), name, country, city: country, band, zoneId: `${country}-Z${band}` };
}

/** Parses a zone file's text; throws naming the line of the first bad row. */
export function parseZoneFile(text: string, file = 'zone file'): ZoneIndex {
  const header = (text.split(/\r?\n/, 1)[0] ?? '').split(',').map((h) => h.trim());
  if (ZONE_FILE_HEADER.some((h, i) => header[i] !== h))
    throw new Error(`zone file ${file}: the header must be "${ZONE_FILE_HEADER.join(',')}"`);
  const byKey = new Map<string, Map<string, ZoneEntry>>();
  parseCsvRecords(text).forEach((record, i) => {
    if (Object.values(record).every((v) => v.trim() === '')) return;
    const entry = entryOf(record, i + 2, file);
    const perCountry = byKey.get(entry.key) ?? new Map<string, ZoneEntry>();
    if (perCountry.has(entry.country))
      throw new Error(`zone file ${file}, line ${i + 2}: "${entry.name}" is listed twice`);
    byKey.set(entry.key, perCountry.set(entry.country, entry));
  });
  return {
    candidates: (name: string) => [...(byKey.get(normaliseName(name))?.values() ?? [])],
    isCityName: () => false,
    size: byKey.size,
  };
}

export async function loadZoneFile(file: string): Promise<ZoneIndex> {
  return parseZoneFile(await readFile(file, 'utf8'), file);
}
