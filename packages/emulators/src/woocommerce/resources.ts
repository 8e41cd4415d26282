/**
 * JSON of the non-order resources, as the wc/v3 controllers shape them: products and variations (weights
 * are strings in the shop's unit, "" when unset; a variation without its own weight shows its parent's),
 * setting options, and webhooks (the secret only in the `edit` context of create/update answers).
 */
import { formatWpDate, webhookHooks, type Product, type ShopState, type Variation, type Webhook } from './model.js';

const WEIGHT_UNIT_OPTIONS = { kg: 'kg', g: 'g', lbs: 'lbs', oz: 'oz' };
const DIMENSION_UNIT_OPTIONS = { m: 'm', cm: 'cm', mm: 'mm', in: 'in', yd: 'yd' };

export function productPrice(shop: ShopState, product: Product): string {
  if (product.variationIds.length === 0) return product.regularPrice;
  const prices = product.variationIds
    .map((id) => shop.variations.get(id)?.regularPrice ?? '')
    .filter((price) => price !== '')
    .map(Number);
  return prices.length > 0 ? String(Math.min(...prices)) : '';
}

export function productJson(shop: ShopState, product: Product, homeUrl: string): Record<string, unknown> {
  const offset = shop.settings.utcOffsetMinutes;
  const rest = `${homeUrl}/wp-json/wc/v3`;
  const variable = product.variationIds.length > 0;
  const price = productPrice(shop, product);
  return {
    id: product.id,
    name: product.name,
    slug: product.slug,
    permalink: `${homeUrl}/product/${product.slug}/`,
    date_created: formatWpDate(product.dateCreated, offset, false),
    date_created_gmt: formatWpDate(product.dateCreated, offset, true),
    date_modified: formatWpDate(product.dateModified, offset, false),
    date_modified_gmt: formatWpDate(product.dateModified, offset, true),
    type: variable ? 'variable' : 'simple',
    status: 'publish',
    featured: false,
    catalog_visibility: 'visible',
    description: '',
    short_description: '',
    sku: product.sku,
    price,
    regular_price: variable ? '' : product.regularPrice,
    sale_price: '',
    date_on_sale_from: null,
    date_on_sale_from_gmt: null,
    date_on_sale_to: null,
    date_on_sale_to_gmt: null,
    on_sale: false,
    purchasable: price !== '',
    total_sales: 0,
    virtual: false,
    downloadable: false,
    downloads: [],
    download_limit: -1,
    download_expiry: -1,
    external_url: '',
    button_text: '',
    tax_status: 'taxable',
    tax_class: '',
    manage_stock: false,
    stock_quantity: null,
    backorders: 'no',
    backorders_allowed: false,
    backordered: false,
    low_stock_amount: null,
    sold_individually: false,
    weight: product.weight,
    dimensions: { length: '', width: '', height: '' },
    shipping_required: true,
    shipping_taxable: true,
    shipping_class: '',
    shipping_class_id: 0,
    reviews_allowed: true,
    average_rating: '0',
    rating_count: 0,
    upsell_ids: [],
    cross_sell_ids: [],
    parent_id: 0,
    purchase_note: '',
    categories: [],
    tags: [],
    images: [],
    attributes: variable
      ? [
          {
            id: 0,
            name: 'Variante',
            slug: 'variante',
            position: 0,
            visible: true,
            variation: true,
            options: product.variationIds.map((id) => shop.variations.get(id)?.attributes[0]?.option ?? ''),
          },
        ]
      : [],
    default_attributes: [],
    variations: [...product.variationIds],
    grouped_products: [],
    menu_order: 0,
    price_html: '',
    related_ids: [],
    meta_data: [],
    stock_status: 'instock',
    has_options: variable,
    post_password: '',
    global_unique_id: '',
    _links: {
      self: [{ href: `${rest}/products/${product.id}` }],
      collection: [{ href: `${rest}/products` }],
    },
  };
}

export function variationJson(
  shop: ShopState,
  variation: Variation,
  parent: Product,
  homeUrl: string,
): Record<string, unknown> {
  const offset = shop.settings.utcOffsetMinutes;
  const rest = `${homeUrl}/wp-json/wc/v3`;
  return {
    id: variation.id,
    date_created: formatWpDate(variation.dateCreated, offset, false),
    date_created_gmt: formatWpDate(variation.dateCreated, offset, true),
    date_modified: formatWpDate(variation.dateModified, offset, false),
    date_modified_gmt: formatWpDate(variation.dateModified, offset, true),
    description: '',
    permalink: `${homeUrl}/product/${parent.slug}/?attribute_variante=${encodeURIComponent(variation.attributes[0]?.option ?? '')}`,
    // get_sku() and get_weight() in the view context fall back to the parent's value when empty.
    sku: variation.sku || parent.sku,
    price: variation.regularPrice,
    regular_price: variation.regularPrice,
    sale_price: '',
    date_on_sale_from: null,
    date_on_sale_from_gmt: null,
    date_on_sale_to: null,
    date_on_sale_to_gmt: null,
    on_sale: false,
    status: 'publish',
    purchasable: variation.regularPrice !== '',
    virtual: false,
    downloadable: false,
    downloads: [],
    download_limit: -1,
    download_expiry: -1,
    tax_status: 'taxable',
    tax_class: '',
    manage_stock: false,
    stock_quantity: null,
    stock_status: 'instock',
    backorders: 'no',
    backorders_allowed: false,
    backordered: false,
    low_stock_amount: null,
    weight: variation.weight || parent.weight,
    dimensions: { length: '', width: '', height: '' },
    shipping_class: '',
    shipping_class_id: 0,
    image: null,
    attributes: variation.attributes.map((attribute) => ({ id: 0, name: attribute.name, option: attribute.option })),
    menu_order: 0,
    meta_data: [],
    name:
      variation.attributes.length > 0
        ? `${parent.name} - ${variation.attributes.map((a) => a.option).join(', ')}`
        : parent.name,
    parent_id: parent.id,
    _links: {
      self: [{ href: `${rest}/products/${parent.id}/variations/${variation.id}` }],
      collection: [{ href: `${rest}/products/${parent.id}/variations` }],
      up: [{ href: `${rest}/products/${parent.id}` }],
    },
  };
}

interface SettingOption {
  id: string;
  label: string;
  description: string;
  type: string;
  default: string;
  options?: Record<string, string>;
  tip?: string;
  value: string;
}

/** The setting groups and options the emulator serves (a small, read-only subset of core's). */
export function settingOptions(shop: ShopState): Record<string, SettingOption[]> {
  return {
    general: [
      {
        id: 'woocommerce_currency',
        label: 'Currency',
        description:
          'This controls what currency prices are listed at in the catalog and which currency gateways will take payments in.',
        type: 'select',
        default: 'USD',
        value: shop.settings.currency,
      },
      {
        id: 'woocommerce_price_num_decimals',
        label: 'Number of decimals',
        description: 'This sets the number of decimal points shown in displayed prices.',
        type: 'number',
        default: '2',
        value: String(shop.settings.priceDecimals),
      },
    ],
    products: [
      {
        id: 'woocommerce_weight_unit',
        label: 'Weight unit',
        description: 'This controls what unit you will define weights in.',
        type: 'select',
        default: 'kg',
        options: WEIGHT_UNIT_OPTIONS,
        tip: 'This controls what unit you will define weights in.',
        value: shop.settings.weightUnit,
      },
      {
        id: 'woocommerce_dimension_unit',
        label: 'Dimensions unit',
        description: 'This controls what unit you will define lengths in.',
        type: 'select',
        default: 'cm',
        options: DIMENSION_UNIT_OPTIONS,
        tip: 'This controls what unit you will define lengths in.',
        value: shop.settings.dimensionUnit,
      },
    ],
  };
}

export function settingJson(group: string, option: SettingOption, homeUrl: string): Record<string, unknown> {
  const rest = `${homeUrl}/wp-json/wc/v3/settings/${group}`;
  return {
    ...option,
    _links: {
      self: [{ href: `${rest}/${option.id}` }],
      collection: [{ href: rest }],
    },
  };
}

export function webhookJson(
  shop: ShopState,
  webhook: Webhook,
  homeUrl: string,
  context: 'view' | 'edit',
): Record<string, unknown> {
  const offset = shop.settings.utcOffsetMinutes;
  const rest = `${homeUrl}/wp-json/wc/v3/webhooks`;
  const [resource = '', event = ''] = webhook.topic.split('.');
  const data: Record<string, unknown> = {
    id: webhook.id,
    name: webhook.name,
    status: webhook.status,
    topic: webhook.topic,
    resource,
    event,
    hooks: [...webhookHooks(webhook.topic)],
    delivery_url: webhook.deliveryUrl,
  };
  if (context === 'edit') data.secret = webhook.secret;
  Object.assign(data, {
    date_created: formatWpDate(webhook.dateCreated, offset, false),
    date_created_gmt: formatWpDate(webhook.dateCreated, offset, true),
    date_modified: formatWpDate(webhook.dateModified, offset, false),
    date_modified_gmt: formatWpDate(webhook.dateModified, offset, true),
    _links: {
      self: [{ href: `${rest}/${webhook.id}` }],
      collection: [{ href: rest }],
    },
  });
  return data;
}
