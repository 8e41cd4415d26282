/**
 * The merchant's clock: the dashboard's days (orders per day, cash per day) are the shop's local days. Each shop
 * may name its IANA time zone (`timeZone` in its registry entry); by default it is its country's. Every country
 * of the XOF zone keeps one offset all year: UTC+0 (Senegal, Côte d'Ivoire, Mali, Burkina Faso, Togo,
 * Guinea-Bissau) or UTC+1 (Benin, Niger), with no daylight saving time.
 */
/** The countries of the XOF zone the delivery service serves, as ISO codes (a shop's `country`). */
export const XOF_COUNTRIES = ['SN', 'CI', 'TG', 'BJ', 'ML', 'BF', 'NE', 'GW'] as const;
export type CountryCode = (typeof XOF_COUNTRIES)[number];

export const COUNTRY_TIME_ZONES: Record<CountryCode, string> = {
  SN: 'Africa/Dakar',
  CI: 'Africa/Abidjan',
  ML: 'Africa/Bamako',
  BF: 'Africa/Ouagadougou',
  TG: 'Africa/Lome',
  GW: 'Africa/Bissau',
  BJ: 'Africa/Porto-Novo',
  NE: 'Africa/Niamey',
};

/** Whether this runtime (and so PostgreSQL, which uses the same IANA database) knows the zone. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The shop's time zone: its own setting, else its country's. */
export function shopTimeZone(shop: { country: CountryCode; timeZone?: string }): string {
  return shop.timeZone ?? COUNTRY_TIME_ZONES[shop.country];
}
