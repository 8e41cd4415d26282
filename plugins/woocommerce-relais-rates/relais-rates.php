<?php
/**
 * Plugin Name:          Relais — live delivery prices
 * Description:          Shows the customer the delivery price to their own neighbourhood at checkout, priced live by Relais from the delivery service. Add "Relais" to a shipping zone and fill in the Relais URL, the shop id and the secret.
 * Version:              0.1.0
 * Requires at least:    6.0
 * Requires PHP:         7.4
 * WC requires at least: 7.0
 * Text Domain:          relais-rates
 * Domain Path:          /languages
 * License:              MIT
 *
 * How it works: calculate_shipping() posts the package's destination and weights (in kg) to
 *   POST {Relais URL}/checkout/woocommerce/{shop id}/rates
 * signed with X-Relais-Signature = base64(HMAC-SHA256(secret, raw body)), the secret being the shop's checkout
 * secret in the Relais shop registry (woocommerce.checkoutSecret), a secret of its own: not the webhook secret, so
 * that this setting, readable by every shop manager, cannot be used to forge order webhooks. Relais answers { "rates": [ { "id", "label", "cost", "currency",
 * "description" } ] } with `cost` in whole XOF. On any failure (timeout, non-200 answer, unreadable body, a store
 * not in XOF) this method adds no rate, so the customer still sees the zone's other shipping methods.
 *
 * The payment method: Relais adds the delivery service's cash-collection fee to the rate of a customer who pays at
 * the door. The customer's chosen method (WooCommerce keeps it in the session) is put in each shipping package, so
 * the request names it as `payment_method` and WooCommerce, which caches rates per package, asks again when it
 * changes; the checkout is refreshed when the customer picks another method. Without a chosen method, the shop's
 * setting in Relais (checkoutRates.includeCodFee) decides.
 * It works with the classic and the block cart and checkout (it only prices the shipping package WooCommerce hands
 * it) and with High-Performance Order Storage (it reads and writes no order), and declares both to WooCommerce.
 * Its texts are translatable (text domain relais-rates); French is in languages/.
 */

defined( 'ABSPATH' ) || exit;

add_action( 'before_woocommerce_init', 'relais_rates_declare_compatibility' );
add_action( 'init', 'relais_rates_load_textdomain' );
add_action( 'woocommerce_shipping_init', 'relais_rates_shipping_init' );
add_filter( 'woocommerce_shipping_methods', 'relais_rates_register_method' );
add_filter( 'woocommerce_cart_shipping_packages', 'relais_rates_package_payment_method' );
add_action( 'woocommerce_after_checkout_form', 'relais_rates_refresh_on_payment_change' );

/**
 * Names the customer's chosen payment method in each shipping package (see the header).
 *
 * @param array<int, array<string, mixed>> $packages The cart's shipping packages.
 * @return array<int, array<string, mixed>>
 */
function relais_rates_package_payment_method( $packages ) {
	if ( ! function_exists( 'WC' ) || ! is_object( WC()->session ) ) {
		return $packages;
	}
	$method = (string) WC()->session->get( 'chosen_payment_method' );
	foreach ( $packages as $index => $package ) {
		$packages[ $index ]['relais_payment_method'] = $method;
	}
	return $packages;
}

/** The classic checkout recalculates shipping on its own only when the address changes: also when the payment method does. */
function relais_rates_refresh_on_payment_change() {
	if ( function_exists( 'wc_enqueue_js' ) ) {
		wc_enqueue_js( "jQuery( 'form.checkout' ).on( 'change', 'input[name=\"payment_method\"]', function () { jQuery( document.body ).trigger( 'update_checkout' ); } );" );
	}
}

/** HPOS (custom_order_tables) and the cart and checkout blocks: compatible, declared as WooCommerce asks. */
function relais_rates_declare_compatibility() {
	if ( class_exists( '\Automattic\WooCommerce\Utilities\FeaturesUtil' ) ) {
		\Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility( 'custom_order_tables', __FILE__, true );
		\Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility( 'cart_checkout_blocks', __FILE__, true );
	}
}

/** Translations from languages/ (relais-rates-fr_FR.mo, and .l10n.php for WordPress 6.5+). */
function relais_rates_load_textdomain() {
	load_plugin_textdomain( 'relais-rates', false, dirname( plugin_basename( __FILE__ ) ) . '/languages' );
}

/**
 * @param array<string, string> $methods Shipping method classes by id.
 * @return array<string, string>
 */
function relais_rates_register_method( $methods ) {
	$methods['relais_rates'] = 'Relais_Rates_Shipping_Method';
	return $methods;
}

/** Declared once WooCommerce has loaded WC_Shipping_Method, as WooCommerce asks of shipping plugins. */
function relais_rates_shipping_init() {
	if ( class_exists( 'Relais_Rates_Shipping_Method' ) ) {
		return;
	}

	class Relais_Rates_Shipping_Method extends WC_Shipping_Method {

		/** Seconds: WooCommerce recalculates shipping while the customer types; a slow answer blocks the checkout page. */
		const DEFAULT_TIMEOUT_SECONDS = 4;

		/**
		 * @param int $instance_id Shipping zone method instance.
		 */
		public function __construct( $instance_id = 0 ) {
			$this->id                 = 'relais_rates';
			$this->instance_id        = absint( $instance_id );
			$this->method_title       = __( 'Relais (live delivery prices)', 'relais-rates' );
			$this->method_description = __( 'The delivery price to the customer\'s neighbourhood, asked live from Relais. Adds nothing when Relais cannot answer, so keep another method in the zone as a backup.', 'relais-rates' );
			$this->supports           = array( 'shipping-zones', 'instance-settings', 'instance-settings-modal' );
			$this->init();
		}

		public function init() {
			$this->instance_form_fields = array(
				'relais_url' => array(
					'title'       => __( 'Relais URL', 'relais-rates' ),
					'type'        => 'text',
					'description' => __( 'The public address of your Relais, e.g. https://relais.example.com', 'relais-rates' ),
					'default'     => '',
				),
				'shop_id'    => array(
					'title'       => __( 'Shop id', 'relais-rates' ),
					'type'        => 'text',
					'description' => __( 'This shop\'s id in the Relais shop registry.', 'relais-rates' ),
					'default'     => '',
				),
				'secret'     => array(
					'title'       => __( 'Secret', 'relais-rates' ),
					'type'        => 'password',
					'description' => __( 'The checkout secret of this shop in Relais (woocommerce.checkoutSecret), not the webhook secret.', 'relais-rates' ),
					'default'     => '',
				),
				'timeout'    => array(
					'title'       => __( 'Time limit (seconds)', 'relais-rates' ),
					'type'        => 'number',
					'description' => __( 'How long to wait for Relais before showing the other methods only.', 'relais-rates' ),
					'default'     => (string) self::DEFAULT_TIMEOUT_SECONDS,
				),
			);
			$this->title = __( 'Relais', 'relais-rates' );
			add_action( 'woocommerce_update_options_shipping_' . $this->id, array( $this, 'process_admin_options' ) );
		}

		/**
		 * @param array<string, mixed> $package The cart package: contents, destination, ...
		 */
		public function calculate_shipping( $package = array() ) {
			$base   = rtrim( trim( (string) $this->get_option( 'relais_url' ) ), '/' );
			$shop   = trim( (string) $this->get_option( 'shop_id' ) );
			$secret = (string) $this->get_option( 'secret' );
			if ( '' === $base || '' === $shop || '' === $secret ) {
				$this->log( 'Relais rates are not configured (URL, shop id and secret are all needed).' );
				return;
			}
			// Relais prices in whole XOF; a cost in another currency would be read as a price in that currency.
			if ( 'XOF' !== get_woocommerce_currency() ) {
				$this->log( 'Relais rates are in XOF and this store is not: no rate added.' );
				return;
			}

			$body     = wp_json_encode( $this->rate_request( $package ) );
			$timeout  = (float) $this->get_option( 'timeout', (string) self::DEFAULT_TIMEOUT_SECONDS );
			$response = wp_remote_post(
				$base . '/checkout/woocommerce/' . rawurlencode( $shop ) . '/rates',
				array(
					'timeout'     => $timeout > 0 ? $timeout : self::DEFAULT_TIMEOUT_SECONDS,
					'redirection' => 0,
					'headers'     => array(
						'Content-Type'       => 'application/json',
						'X-Relais-Signature' => base64_encode( hash_hmac( 'sha256', $body, $secret, true ) ),
					),
					'body'        => $body,
				)
			);
			if ( is_wp_error( $response ) ) {
				$this->log( 'Relais did not answer: ' . $response->get_error_message() );
				return;
			}
			$status = (int) wp_remote_retrieve_response_code( $response );
			if ( 200 !== $status ) {
				$this->log( 'Relais answered ' . $status . ': no rate added.' );
				return;
			}
			$answer = json_decode( (string) wp_remote_retrieve_body( $response ), true );
			if ( ! is_array( $answer ) || ! isset( $answer['rates'] ) || ! is_array( $answer['rates'] ) ) {
				$this->log( 'Relais answered something that is not a list of rates.' );
				return;
			}
			foreach ( $answer['rates'] as $rate ) {
				if ( ! is_array( $rate ) || ! isset( $rate['id'], $rate['label'], $rate['cost'] ) || ! is_numeric( $rate['cost'] ) ) {
					continue;
				}
				if ( isset( $rate['currency'] ) && 'XOF' !== $rate['currency'] ) {
					continue;
				}
				$this->add_rate(
					array(
						'id'        => $this->get_rate_id( sanitize_key( (string) $rate['id'] ) ),
						'label'     => (string) $rate['label'],
						'cost'      => (int) $rate['cost'],
						'package'   => $package,
						'meta_data' => isset( $rate['description'] ) ? array( 'Relais' => (string) $rate['description'] ) : array(),
					)
				);
			}
		}

		/**
		 * The JSON Relais expects: the package destination and each shipped line's weight in kg.
		 *
		 * @param array<string, mixed> $package The cart package.
		 * @return array<string, mixed>
		 */
		private function rate_request( $package ) {
			$items = array();
			$contents = isset( $package['contents'] ) && is_array( $package['contents'] ) ? $package['contents'] : array();
			foreach ( $contents as $line ) {
				$product = isset( $line['data'] ) ? $line['data'] : null;
				if ( ! is_object( $product ) || ! $product->needs_shipping() ) {
					continue;
				}
				$weight  = (float) $product->get_weight();
				$items[] = array(
					// Product weights are in the store's unit (woocommerce_weight_unit): kg, g, lbs or oz.
					'weight_kg' => $weight > 0 ? (float) wc_get_weight( $weight, 'kg' ) : 0,
					'quantity'  => isset( $line['quantity'] ) ? (int) $line['quantity'] : 1,
				);
			}
			$d       = isset( $package['destination'] ) && is_array( $package['destination'] ) ? $package['destination'] : array();
			$request = array(
				'destination' => array(
					'country'   => isset( $d['country'] ) ? (string) $d['country'] : '',
					'state'     => isset( $d['state'] ) ? (string) $d['state'] : '',
					'postcode'  => isset( $d['postcode'] ) ? (string) $d['postcode'] : '',
					'city'      => isset( $d['city'] ) ? (string) $d['city'] : '',
					'address_1' => isset( $d['address_1'] ) ? (string) $d['address_1'] : ( isset( $d['address'] ) ? (string) $d['address'] : '' ),
					'address_2' => isset( $d['address_2'] ) ? (string) $d['address_2'] : '',
				),
				'items'       => $items,
				'currency'    => get_woocommerce_currency(),
			);
			if ( isset( $package['relais_payment_method'] ) && '' !== (string) $package['relais_payment_method'] ) {
				$request['payment_method'] = (string) $package['relais_payment_method'];
			}
			return $request;
		}

		/** @param string $message Never contains the secret. */
		private function log( $message ) {
			if ( function_exists( 'wc_get_logger' ) ) {
				wc_get_logger()->warning( $message, array( 'source' => 'relais-rates' ) );
			}
		}
	}
}
