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
