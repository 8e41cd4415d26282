/**
 * Charts drawn on the server as SVG (issue 29): readable without script (the pages allow none), printable, and
 * accessible: each chart has a title and a description, each mark a <title> with its value (shown on hover),
 * and each mark is a link to the orders behind it. The figures are also given as a table beside every chart.
 */
import { html, type SafeHtml } from './html.js';

export interface Series {
  key: string;
  label: string;
  colour: string;
}

export interface Frame {
  /** Unique on the page: the SVG's title and description are referred to by it. */
  id: string;
  title: string;
  description: string;
  /** How a value reads (a count, francs, a percentage). */
  format(value: number): string;
}

export interface StackedBars extends Frame {
  series: Series[];
  bars: { label: string; values: Record<string, number> }[];
  /** The orders behind a segment: bar index and series key. */
  href(index: number, key: string): string;
  /** A line over the bars on a scale of its own (shown on the right), e.g. a running balance. */
  line?: { label: string; colour: string; values: number[]; href?(index: number): string };
}

export interface Lines extends Frame {
  series: Series[];
  xs: string[];
  values: Record<string, Array<number | undefined>>;
  /** The top of the scale (100 for percentages); default: from the values. */
  max?: number;
  href?(index: number, key: string): string;
}

const W = 760;
const H = 240;
const PAD = { left: 64, right: 64, top: 14, bottom: 30 };
const PLOT_W = W - PAD.left - PAD.right;
const PLOT_H = H - PAD.top - PAD.bottom;
const TICKS = 4;

/**
 * The top of a scale of TICKS steps above `value`: each step 1, 2 or 5 times a power of ten, and at least 1 (so
 * a scale of counts never shows a fraction).
 */
export function niceMax(value: number): number {
  const rough = Math.max(1, value / TICKS);
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
  return step * TICKS;
}

/** Large amounts on an axis, shortened: 750 k, 1.5 M. */
export function compact(value: number): string {
  if (value >= 1_000_000) return `${Math.round(value / 100_000) / 10} M`;
  if (value >= 1_000) return `${Math.round(value / 100) / 10} k`;
  return String(Math.round(value));
}

const y = (value: number, max: number) => PAD.top + PLOT_H - (value / max) * PLOT_H;
const round = (n: number) => Math.round(n * 10) / 10;

function frame(chart: Frame, body: SafeHtml): SafeHtml {
  return html`<svg id="${chart.id}" class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${chart.id}-t ${chart.id}-d" xmlns="http://www.w3.org/2000/svg">
    <title id="${chart.id}-t">${chart.title}</title><desc id="${chart.id}-d">${chart.description}</desc>${body}</svg>`;
}

/** Horizontal grid lines with the scale's values on the left (or the right). */
function scale(max: number, format: (n: number) => string, side: 'left' | 'right'): SafeHtml {
  const marks = Array.from({ length: TICKS + 1 }, (_, i) => (max * i) / TICKS);
  const x = side === 'left' ? PAD.left - 6 : W - PAD.right + 6;
  return html`${marks.map(
    (
      value,
    ) => html`${side === 'left' ? html`<line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${round(y(value, max))}" y2="${round(y(value, max))}"/>` : ''}
    <text class="axis" x="${x}" y="${round(y(value, max) + 4)}" text-anchor="${side === 'left' ? 'end' : 'start'}">${max >= 10_000 ? compact(value) : format(value)}</text>`,
  )}`;
}

/** Labels under the x axis, thinned to about ten. */
function xLabels(labels: string[], centreOf: (i: number) => number): SafeHtml {
  const every = Math.max(1, Math.ceil(labels.length / 10));
  return html`${labels.map((label, i) =>
    i % every === 0
      ? html`<text class="axis" x="${round(centreOf(i))}" y="${H - 10}" text-anchor="middle">${label.length === 10 ? label.slice(5) : label}</text>`
      : '',
  )}`;
}

export function stackedBarChart(chart: StackedBars): SafeHtml {
  const totals = chart.bars.map((bar) => chart.series.reduce((sum, s) => sum + (bar.values[s.key] ?? 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const slot = PLOT_W / Math.max(1, chart.bars.length);
  const width = Math.max(1, slot * 0.78);
  const centre = (i: number) => PAD.left + slot * i + slot / 2;
  const bars = chart.bars.map((bar, i) => {
    let base = 0;
    return chart.series.map((s) => {
      const value = bar.values[s.key] ?? 0;
      if (value <= 0) return '';
      const top = y(base + value, max);
      const height = y(base, max) - top;
      base += value;
      return html`<a href="${chart.href(i, s.key)}"><rect x="${round(centre(i) - width / 2)}" y="${round(top)}" width="${round(width)}" height="${round(Math.max(height, 0.5))}" fill="${s.colour}"><title>${bar.label} · ${s.label}: ${chart.format(value)}</title></rect></a>`;
    });
  });
  return frame(
    chart,
    html`${scale(max, chart.format, 'left')}${bars}${chart.line ? overlay(chart.line, chart.bars, centre, chart.format) : ''}${xLabels(
      chart.bars.map((b) => b.label),
      centre,
    )}`,
  );
}

function overlay(
  line: NonNullable<StackedBars['line']>,
  bars: StackedBars['bars'],
  centre: (i: number) => number,
  format: (n: number) => string,
): SafeHtml {
  const max = niceMax(Math.max(0, ...line.values));
  const points = line.values.map((v, i) => `${round(centre(i))},${round(y(v, max))}`).join(' ');
  return html`${scale(max, format, 'right')}<polyline class="line" points="${points}" stroke="${line.colour}"/>
    ${line.values.map((v, i) => {
      const dot = html`<circle cx="${round(centre(i))}" cy="${round(y(v, max))}" r="3" fill="${line.colour}"><title>${bars[i]?.label ?? ''} · ${line.label}: ${format(v)}</title></circle>`;
      return line.href ? html`<a href="${line.href(i)}">${dot}</a>` : dot;
    })}`;
}

export function lineChart(chart: Lines): SafeHtml {
  const all = Object.values(chart.values).flatMap((vs) => vs.filter((v): v is number => v !== undefined));
  const max = chart.max ?? niceMax(Math.max(0, ...all));
  const slot = PLOT_W / Math.max(1, chart.xs.length);
  const centre = (i: number) => PAD.left + slot * i + slot / 2;
  const drawn = chart.series.map((s) => {
    const values = chart.values[s.key] ?? [];
    const points = values.flatMap((v, i) => (v === undefined ? [] : [`${round(centre(i))},${round(y(v, max))}`]));
    return html`<polyline class="line" points="${points.join(' ')}" stroke="${s.colour}"/>
      ${values.map((v, i) => {
        if (v === undefined) return '';
        const dot = html`<circle cx="${round(centre(i))}" cy="${round(y(v, max))}" r="4" fill="${s.colour}"><title>${chart.xs[i] ?? ''} · ${s.label}: ${chart.format(v)}</title></circle>`;
        return chart.href ? html`<a href="${chart.href(i, s.key)}">${dot}</a>` : dot;
      })}`;
  });
  return frame(chart, html`${scale(max, chart.format, 'left')}${drawn}${xLabels(chart.xs, centre)}`);
}

/** The series' colours and names, as HTML beside the chart (so they print and read as text). */
export function legend(series: Series[]): SafeHtml {
  return html`<ul class="legend">${series.map((s) => html`<li><svg viewBox="0 0 10 10" width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${s.colour}"/></svg> ${s.label}</li>`)}</ul>`;
}

export interface MapPoint {
  name: string;
  lat: number;
  lng: number;
  orders: number;
  /** Delivered share of the shipped orders, 0..1; undefined when none was shipped. */
  deliveryRate?: number;
  href: string;
}

const MAP_W = 360;
const MAP_H = 300;

/** The colour of a delivery rate: good, middling, poor. */
export function rateColour(rate: number | undefined): string {
  if (rate === undefined) return '#98a2b3';
  return rate >= 0.8 ? '#2e7d32' : rate >= 0.6 ? '#f9a825' : '#c62828';
}

/**
 * The neighbourhoods where they are (the gazetteer's coordinates), no background map: a circle per
 * neighbourhood, its area the orders, its colour the delivery rate. Longitude is scaled by the cosine of the
 * latitude, so distances read true at a city's scale.
 */
export function neighbourhoodMap(id: string, points: MapPoint[]): SafeHtml {
  const lats = points.map((p) => p.lat);
  const lngs = points.map((p) => p.lng);
  const midLat = (Math.min(...lats) + Math.max(...lats)) / 2;
  const k = Math.cos((midLat * Math.PI) / 180);
  const spanX = Math.max(0.005, (Math.max(...lngs) - Math.min(...lngs)) * k);
  const spanY = Math.max(0.005, Math.max(...lats) - Math.min(...lats));
  const unit = Math.min((MAP_W - 80) / spanX, (MAP_H - 60) / spanY);
  const px = (lng: number) => 40 + (lng - Math.min(...lngs)) * k * unit + (MAP_W - 80 - spanX * unit) / 2;
  const py = (lat: number) => 30 + (Math.max(...lats) - lat) * unit + (MAP_H - 60 - spanY * unit) / 2;
  const most = Math.max(1, ...points.map((p) => p.orders));
  return html`<svg class="map" viewBox="0 0 ${MAP_W} ${MAP_H}" role="img" aria-labelledby="${id}-t" xmlns="http://www.w3.org/2000/svg">
    <title id="${id}-t">Neighbourhoods on a map: circle area is orders, colour is delivery rate</title>
    <rect class="map-bg" width="${MAP_W}" height="${MAP_H}"/>
    ${points.map((p) => {
      const r = round(4 + 14 * Math.sqrt(p.orders / most));
      const rate = p.deliveryRate === undefined ? 'no shipment' : `${Math.round(p.deliveryRate * 100)}% delivered`;
      return html`<a href="${p.href}"><circle cx="${round(px(p.lng))}" cy="${round(py(p.lat))}" r="${r}" fill="${rateColour(p.deliveryRate)}" fill-opacity="0.75"><title>${p.name}: ${p.orders} orders, ${rate}</title></circle>
        <text class="axis" x="${round(px(p.lng))}" y="${round(py(p.lat) - r - 3)}" text-anchor="middle">${p.name}</text></a>`;
    })}</svg>`;
}
