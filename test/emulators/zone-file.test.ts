/** The dispatch emulator's zone file: the service's own priced places, and clear errors for a bad file. */
import { parseZoneFile } from '@relais/emulators/dispatch';
import { describe, expect, it } from 'vitest';

const HEADER = 'country,name,band,lat,lon,covers';

describe('a zone file', () => {
  it('prices the listed names at their band, whatever their case, accents and hyphens, and knows no other name', () => {
    const zones = parseZoneFile(`${HEADER}\nSN,Cité Avion,2,14.72,-17.48,Cite Avion\nSN,Les Almadies,3,,,Almadies\n`);
    expect(zones.candidates('cite-avion')).toMatchObject([{ name: 'Cité Avion', band: 2, country: 'SN' }]);
    expect(zones.candidates('LES ALMADIES')).toMatchObject([{ band: 3 }]);
    expect(zones.candidates('Almadies')).toEqual([]);
    expect(zones.size).toBe(2);
  });

  it('refuses a file without the agreed header, naming it', () => {
    expect(() => parseZoneFile('country,name,band\nSN,Ouakam,2\n', 'map.csv')).toThrow(
      /map\.csv: the header must be "country,name,band,lat,lon,covers"/,
    );
  });

  it('refuses a row with a band outside 1–5, an empty name or a name listed twice, naming its line', () => {
    expect(() => parseZoneFile(`${HEADER}\nSN,Ouakam,6,,,\n`, 'map.csv')).toThrow(/map\.csv, line 2: band must be/);
    expect(() => parseZoneFile(`${HEADER}\nSN,Ouakam,2,,,\nSN, ,2,,,\n`, 'map.csv')).toThrow(/line 3: name is empty/);
    expect(() => parseZoneFile(`${HEADER}\nSN,Ouakam,2,,,\nSN,ouakam,3,,,\n`)).toThrow(
      /line 3: "ouakam" is listed twice/,
    );
  });
});
