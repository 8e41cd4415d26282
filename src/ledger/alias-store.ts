/**
 * Neighbourhood aliases added by operators while Relais runs (`relais alias add`, the dashboard), on top of the
 * ones in the shop registry: the port. Kept in the database (src/adapters/postgres/pg-aliases.ts) so the fix for a
 * held order takes effect for every worker at once, without a restart, and survives restarts.
 */
export interface AliasStore {
  add(shopId: string, text: string, neighbourhood: string): Promise<void>;
  /** False when the shop had no such alias. */
  remove(shopId: string, text: string): Promise<boolean>;
  /** The aliases added at run time for the shop, by the text they match. */
  list(shopId: string): Promise<Record<string, string>>;
  /** Every alias in force for a shop: the registry's, overridden by those added at run time. */
  forShop(shop: {
    id: string;
    policy: { neighbourhoodAliases: Record<string, string> };
  }): Promise<Record<string, string>>;
}
