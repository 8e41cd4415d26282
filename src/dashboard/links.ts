/**
 * The addresses of the dashboard's pages that link to each other, in one place so the pages need not import
 * one another (the Connect page links to the Service map page and back).
 */

export function shopSettingsHref(id: string): string {
  return `/dashboard/shops/${encodeURIComponent(id)}`;
}

export function serviceMapHref(shopId: string): string {
  return `/dashboard/service-map?shop=${encodeURIComponent(shopId)}`;
}

/** The page that learns a shop's wire profile from what its delivery service showed (issue 28). */
export function shopProfileHref(shopId: string): string {
  return `/dashboard/shops/${encodeURIComponent(shopId)}/profile`;
}
