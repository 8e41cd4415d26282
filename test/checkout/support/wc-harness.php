<?php
/**
 * Runs plugins/woocommerce-relais-rates/relais-rates.php outside WordPress, for the tests: the few WordPress and
 * WooCommerce functions the plugin calls are defined here with their documented behaviour, and wp_remote_post
 * makes a real HTTP request (PHP streams) to the Relais under test.
 *
 * Input (JSON on stdin): { "plugin": path, "settings": {...instance settings}, "currency": "XOF", "locale": "fr_FR" (optional),
 *   "weight_unit": "kg"|"g"|"lbs"|"oz", "instance_id": 3,
 *   "package": { "destination": {...}, "contents": [ { "weight": "400", "quantity": 2, "needs_shipping": true } ] } }
 * Output (JSON on stdout): { "rates": [ added rates, without the package ], "requests": [ what was posted ], "logs": [ ... ] }
 */

define( 'ABSPATH', __DIR__ . '/' );

$input = json_decode( stream_get_contents( STDIN ), true );
$GLOBALS['relais_hooks']    = array();
$GLOBALS['relais_requests'] = array();
$GLOBALS['relais_logs']     = array();

function add_action( $hook, $callback ) {
	$GLOBALS['relais_hooks'][ $hook ][] = $callback;
}
function add_filter( $hook, $callback ) {
	$GLOBALS['relais_hooks'][ $hook ][] = $callback;
}
/** Translated from the .mo file load_plugin_textdomain() loaded for the domain (input "locale"), else as written. */
function __( $text, $domain = 'default' ) {
	return $GLOBALS['relais_l10n'][ $domain ][ $text ] ?? $text;
}
function plugin_basename( $file ) {
	return basename( dirname( $file ) ) . '/' . basename( $file );
}
/** WordPress: loads WP_PLUGIN_DIR/<relative path>/<domain>-<locale>.mo when the site's locale is not English. */
function load_plugin_textdomain( $domain, $deprecated = false, $plugin_rel_path = false ) {
	$locale = $GLOBALS['relais_input']['locale'] ?? 'en_US';
	$file   = dirname( dirname( $GLOBALS['relais_input']['plugin'] ) ) . '/' . $plugin_rel_path . '/' . $domain . '-' . $locale . '.mo';
	$GLOBALS['relais_textdomains'][ $domain ] = $file;
	if ( 'en_US' === $locale || ! is_readable( $file ) ) {
		return false;
	}
	$GLOBALS['relais_l10n'][ $domain ] = relais_read_mo( $file );
	return true;
}
/** The messages of a GNU .mo file (the format WordPress reads). */
function relais_read_mo( $path ) {
	$data  = file_get_contents( $path );
	$fmt   = ( 0x950412de === unpack( 'V', substr( $data, 0, 4 ) )[1] ) ? 'V' : 'N';
	$head  = unpack( $fmt . '5', substr( $data, 4, 20 ) );
	$found = array();
	for ( $i = 0; $i < $head[2]; $i++ ) {
		$original    = unpack( $fmt . '2', substr( $data, $head[3] + 8 * $i, 8 ) );
		$translation = unpack( $fmt . '2', substr( $data, $head[4] + 8 * $i, 8 ) );
		$found[ substr( $data, $original[2], $original[1] ) ] = substr( $data, $translation[2], $translation[1] );
	}
	return $found;
}
// WooCommerce's FeaturesUtil (a namespaced class: declared through eval from this global-namespace file).
eval( 'namespace Automattic\\WooCommerce\\Utilities; class FeaturesUtil { public static function declare_compatibility( $feature, $plugin_file, $positive = true ) { $GLOBALS["relais_features"][] = array( "feature" => $feature, "plugin_file" => $plugin_file, "compatible" => $positive ); return true; } }' );
function absint( $value ) {
	return abs( (int) $value );
}
function wp_json_encode( $value ) {
	return json_encode( $value );
}
/** WordPress: lowercase, then keep a-z, 0-9, _ and -. */
function sanitize_key( $key ) {
	return preg_replace( '/[^a-z0-9_\-]/', '', strtolower( $key ) );
}
function get_woocommerce_currency() {
	return $GLOBALS['relais_input']['currency'];
}
/** WooCommerce: converts from the store's unit (woocommerce_weight_unit) to $to_unit. */
function wc_get_weight( $weight, $to_unit, $from_unit = '' ) {
	$from  = '' !== $from_unit ? $from_unit : $GLOBALS['relais_input']['weight_unit'];
	$in_kg = array( 'kg' => 1.0, 'g' => 0.001, 'lbs' => 0.45359237, 'oz' => 0.028349523125 );
	return (float) $weight * $in_kg[ $from ] / $in_kg[ $to_unit ];
}
class WP_Error {
	private $message;
	public function __construct( $code = '', $message = '' ) {
		$this->message = $message;
	}
	public function get_error_message() {
		return $this->message;
	}
}
function is_wp_error( $thing ) {
	return $thing instanceof WP_Error;
}
function wp_remote_post( $url, $args ) {
	$GLOBALS['relais_requests'][] = array( 'url' => $url, 'headers' => $args['headers'], 'body' => $args['body'], 'timeout' => $args['timeout'] );
	$header_lines = '';
	foreach ( $args['headers'] as $name => $value ) {
		$header_lines .= $name . ': ' . $value . "\r\n";
	}
	$context = stream_context_create(
		array(
			'http' => array(
				'method'          => 'POST',
				'header'          => $header_lines,
				'content'         => $args['body'],
				'timeout'         => (float) $args['timeout'],
				'ignore_errors'   => true,
				'follow_location' => 0,
			),
		)
	);
	$body = @file_get_contents( $url, false, $context );
	if ( false === $body || empty( $http_response_header ) ) {
		return new WP_Error( 'http_request_failed', 'no answer from ' . $url );
	}
	preg_match( '#^HTTP/\S+\s+(\d{3})#', $http_response_header[0], $status );
	return array( 'response' => array( 'code' => (int) $status[1] ), 'body' => $body );
}
function wp_remote_retrieve_response_code( $response ) {
	return $response['response']['code'];
}
function wp_remote_retrieve_body( $response ) {
	return $response['body'];
}
class Relais_Test_Logger {
	public function warning( $message, $context = array() ) {
		$GLOBALS['relais_logs'][] = array( 'level' => 'warning', 'message' => $message, 'source' => $context['source'] ?? '' );
	}
}
function wc_get_logger() {
	return new Relais_Test_Logger();
}

/** The part of WC_Shipping_Method the plugin uses, as WooCommerce defines it. */
abstract class WC_Shipping_Method {
	public $id                   = '';
	public $instance_id          = 0;
	public $method_title         = '';
	public $method_description   = '';
	public $supports             = array();
	public $title                = '';
	public $instance_form_fields = array();
	public $instance_settings    = array();
	public $rates                = array();

	public function get_option( $key, $empty_value = null ) {
		if ( array_key_exists( $key, $this->instance_settings ) ) {
			return $this->instance_settings[ $key ];
		}
		if ( isset( $this->instance_form_fields[ $key ]['default'] ) ) {
			return $this->instance_form_fields[ $key ]['default'];
		}
		return $empty_value;
	}
	public function get_rate_id( $suffix = '' ) {
		$parts = array( $this->id );
		if ( $this->instance_id ) {
			$parts[] = $this->instance_id;
		}
		if ( '' !== $suffix ) {
			$parts[] = $suffix;
		}
		return implode( ':', $parts );
	}
	public function add_rate( $args = array() ) {
		$this->rates[] = $args;
	}
	public function process_admin_options() {
	}
}

class Relais_Test_Product {
	private $weight;
	private $ships;
	public function __construct( $weight, $ships ) {
		$this->weight = $weight;
		$this->ships  = $ships;
	}
	public function get_weight() {
		return $this->weight;
	}
	public function needs_shipping() {
		return $this->ships;
	}
}


/** WooCommerce's session, holding only the chosen payment method the test gives (none when absent). */
class Relais_Test_Session {
	public function get( $key ) {
		return 'chosen_payment_method' === $key ? ( $GLOBALS['relais_input']['chosen_payment_method'] ?? null ) : null;
	}
}
class Relais_Test_WooCommerce {
	public $session;
	public function __construct() {
		$this->session = new Relais_Test_Session();
	}
}
function WC() {
	static $wc = null;
	return $wc ?? ( $wc = new Relais_Test_WooCommerce() );
}
$GLOBALS['relais_input']    = $input;
$GLOBALS['relais_features'] = array();
$GLOBALS['relais_l10n']     = array();
require $input['plugin'];

// WordPress fires these, in this order, before any shipping method is built.
foreach ( array( 'before_woocommerce_init', 'init' ) as $hook ) {
	foreach ( $GLOBALS['relais_hooks'][ $hook ] ?? array() as $callback ) {
		call_user_func( $callback );
	}
}

foreach ( $GLOBALS['relais_hooks']['woocommerce_shipping_init'] ?? array() as $init ) {
	call_user_func( $init );
}
$methods = array();
foreach ( $GLOBALS['relais_hooks']['woocommerce_shipping_methods'] ?? array() as $filter ) {
	$methods = call_user_func( $filter, $methods );
}
$class  = $methods['relais_rates'];
$method = new $class( $input['instance_id'] );
$method->instance_settings = $input['settings'];

$package = $input['package'];
$contents = array();
foreach ( $package['contents'] as $key => $line ) {
	$contents[ 'line' . $key ] = array( 'data' => new Relais_Test_Product( $line['weight'], $line['needs_shipping'] ), 'quantity' => $line['quantity'] );
}
$package['contents'] = $contents;
foreach ( $GLOBALS['relais_hooks']['woocommerce_cart_shipping_packages'] ?? array() as $filter ) {
	$package = call_user_func( $filter, array( $package ) )[0];
}
$method->calculate_shipping( $package );

$rates = array_map(
	function ( $rate ) {
		unset( $rate['package'] );
		return $rate;
	},
	$method->rates
);
$texts = array( 'method_title' => $method->method_title, 'method_description' => $method->method_description, 'title' => $method->title );
foreach ( $method->instance_form_fields as $key => $field ) {
	$texts[ $key . '.title' ]       = $field['title'];
	$texts[ $key . '.description' ] = $field['description'];
}
echo json_encode(
	array(
		'class'       => $class,
		'supports'    => $method->supports,
		'rates'       => $rates,
		'requests'    => $GLOBALS['relais_requests'],
		'logs'        => $GLOBALS['relais_logs'],
		'features'    => $GLOBALS['relais_features'],
		'textdomains' => $GLOBALS['relais_textdomains'] ?? array(),
		'texts'       => $texts,
	)
);
