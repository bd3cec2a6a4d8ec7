import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { repo } from './processes';
import type { Results } from './results';
import type { Summary } from './stats';

/**
 * The benchmark's plots, drawn from the results file (`npm run bench` ends with them; `node
 * dist/bench/plot.js [results.json]` redraws them alone): end-to-end.png, benchmark 4's time
 * per engine as p50 bars with p95 whiskers, and transitions.png, the CDF of benchmark 1's group
 * transitions (and of any other transition or round-trip series it reports).
 *
 * Why no library: node-canvas is native, and the pure-JS ones (pureimage) pull in a TrueType
 * parser, a JPEG codec and a font file for what two charts need. So this module is a small
 * rasterizer: shapes are laid out first as data (a Scene, which the tests inspect), then painted
 * into an RGB bitmap with a 5 × 8 bitmap font and encoded as PNG on node:zlib.
 */

// ---------------------------------------------------------------------------------------------
// Bitmap, font and PNG

type Rgb = readonly [number, number, number];

export interface Bitmap {
  width: number;
  height: number;
  /** Row-major RGB, 3 bytes a pixel. */
  pixels: Uint8Array;
}

export function createBitmap(width: number, height: number, background: Rgb = WHITE): Bitmap {
  const pixels = new Uint8Array(width * height * 3);
  for (let i = 0; i < pixels.length; i += 3) pixels.set(background, i);
  return { width, height, pixels };
}

function setPixel(bitmap: Bitmap, x: number, y: number, color: Rgb): void {
  const px = Math.round(x);
  const py = Math.round(y);
  if (px < 0 || py < 0 || px >= bitmap.width || py >= bitmap.height) return;
  bitmap.pixels.set(color, (py * bitmap.width + px) * 3);
}

function fillRect(bitmap: Bitmap, x: number, y: number, w: number, h: number, color: Rgb): void {
  for (let py = Math.round(y); py < Math.round(y + h); py++)
    for (let px = Math.round(x); px < Math.round(x + w); px++) setPixel(bitmap, px, py, color);
}

/** A straight line `width` pixels thick: a square brush stepped along its longer axis. */
function drawLine(bitmap: Bitmap, from: Point, to: Point, color: Rgb, width: number): void {
  const steps = Math.max(Math.abs(to[0] - from[0]), Math.abs(to[1] - from[1]), 1);
  const half = (width - 1) / 2;
  for (let i = 0; i <= steps; i++) {
    const x = from[0] + ((to[0] - from[0]) * i) / steps;
    const y = from[1] + ((to[1] - from[1]) * i) / steps;
    fillRect(bitmap, x - half, y - half, width, width, color);
  }
}

/**
 * Printable ASCII (0x20-0x7E) as 5 columns of 8 pixels, bit 0 at the top: the classic 5 × 7
 * LCD font (with descenders in the eighth row), ten hex digits a glyph.
 */
const FONT =
  '000000000000005f00000007000700147f147f14242a7f2a12231308646236495620500008070300001c224100004122' +
  '1c002a1c7f1c2a08083e080800807030000808080808000060600020100804023e5149453e00427f4000724949494621' +
  '41494d331814127f1027454545393c4a49493141211109073649494936464949291e0000140000004034000000081422' +
  '411414141414004122140802015909063e415d594e7c1211127c7f494949363e414141227f4141413e7f494949417f09' +
  '0909013e414151737f0808087f00417f41002040413f017f081422417f404040407f021c027f7f0408107f3e4141413e' +
  '7f090909063e4151215e7f09192946264949493203017f01033f4040403f1f2040201f3f4038403f6314081463030478' +
  '04036159494d43007f4141410204081020004141417f04020102044040404040000307080020545478407f2844443838' +
  '44444428384444287f385454541800087e090218a4a49c787f0804047800447d40002040403d007f1028440000417f40' +
  '007c047804787c080404783844444438fc1824241818242418fc7c08040408485454542404043f44243c4040207c1c20' +
  '40201c3c4030403c44281028444c9090907c4464544c440008364100000077000000413608000201020402';

const GLYPH_WIDTH = 5;
const GLYPH_HEIGHT = 8;
const ADVANCE = GLYPH_WIDTH + 1;

function glyph(char: string): number[] {
  let code = char.charCodeAt(0);
  if (code < 0x20 || code > 0x7e) code = '?'.charCodeAt(0);
  const at = (code - 0x20) * GLYPH_WIDTH * 2;
  return Array.from({ length: GLYPH_WIDTH }, (_, c) => parseInt(FONT.slice(at + c * 2, at + c * 2 + 2), 16));
}

/** Width in pixels of `text` at `scale` (no trailing gap). */
export function textWidth(text: string, scale: number): number {
  return text.length ? (text.length * ADVANCE - 1) * scale : 0;
}

function drawText(bitmap: Bitmap, x: number, y: number, text: string, color: Rgb, scale: number): void {
  [...text].forEach((char, i) => {
    glyph(char).forEach((column, c) => {
      for (let row = 0; row < GLYPH_HEIGHT; row++)
        if (column & (1 << row))
          fillRect(bitmap, x + (i * ADVANCE + c) * scale, y + row * scale, scale, scale, color);
    });
  });
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** CRC-32 (ISO 3309, as PNG chunks carry it): "123456789" → 0xcbf43926. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The bitmap as a PNG: 8-bit RGB, every scanline unfiltered, deflated by node:zlib. */
export function encodePng(bitmap: Bitmap): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(bitmap.width, 0);
  header.writeUInt32BE(bitmap.height, 4);
  header.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type 2 (RGB), deflate, no filter, no interlace
  const stride = bitmap.width * 3;
  const raw = Buffer.alloc((stride + 1) * bitmap.height);
  for (let y = 0; y < bitmap.height; y++)
    raw.set(bitmap.pixels.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', new Uint8Array()),
  ]);
}

// ---------------------------------------------------------------------------------------------
// Scales and scenes

/** A linear map from [d0, d1] to [r0, r1] (pixels): linearScale(0, 10, 80, 880)(5) is 480. */
export function linearScale(d0: number, d1: number, r0: number, r1: number): (value: number) => number {
  const span = d1 - d0 || 1;
  return (value) => r0 + ((value - d0) / span) * (r1 - r0);
}

/**
 * Round tick values from 0 to at least `max`, about `count` of them, a step of 1, 2 or 5 × 10ⁿ:
 * niceTicks(420, 5) is 0, 100, …, 500.
 */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= rough)!;
  const ticks: number[] = [];
  for (let i = 0; ticks.at(-1) === undefined || ticks.at(-1)! < max; i++) ticks.push(round(i * step));
  return ticks;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

type Point = readonly [number, number];
type Align = 'left' | 'center' | 'right';

/** What a chart is made of, in pixels, before it is painted. */
export type Shape =
  | { kind: 'rect'; x: number; y: number; w: number; h: number; color: Rgb; role?: 'bar' }
  | { kind: 'line'; points: Point[]; color: Rgb; width: number; role?: 'whisker' | 'series' }
  | { kind: 'text'; x: number; y: number; text: string; color: Rgb; scale: number; align?: Align };

export interface Scene {
  width: number;
  height: number;
  shapes: Shape[];
}

export function paint(scene: Scene): Bitmap {
  const bitmap = createBitmap(scene.width, scene.height);
  for (const s of scene.shapes) {
    if (s.kind === 'rect') fillRect(bitmap, s.x, s.y, s.w, s.h, s.color);
    else if (s.kind === 'line')
      for (let i = 1; i < s.points.length; i++)
        drawLine(bitmap, s.points[i - 1], s.points[i], s.color, s.width);
    else {
      const w = textWidth(s.text, s.scale);
      const x = s.align === 'center' ? s.x - w / 2 : s.align === 'right' ? s.x - w : s.x;
      drawText(bitmap, x, s.y, s.text, s.color, s.scale);
    }
  }
  return bitmap;
}

const WHITE: Rgb = [255, 255, 255];
const INK: Rgb = [34, 34, 34];
const GRID: Rgb = [225, 225, 225];
const MUTED: Rgb = [110, 110, 110];
/** Series colours, in order (Tableau 10). */
const PALETTE: Rgb[] = [
  [31, 119, 180],
  [127, 127, 127],
  [255, 127, 14],
  [214, 39, 40],
  [44, 160, 44],
  [148, 103, 189],
  [140, 86, 75],
  [227, 119, 194],
];

const WIDTH = 1000;
const HEIGHT = 560;
/** The plot area: room for the title above, tick labels left and below, the legend right. */
const AREA = { left: 80, right: 730, top: 70, bottom: 480 };
/** Text scale of titles, ticks and labels; small print is scale 1 (5 × 8 pixels a glyph). */
const BIG = 2;
const LINE_HEIGHT = GLYPH_HEIGHT * BIG + 8;

const text = (
  x: number,
  y: number,
  words: string,
  scale = BIG,
  align: Align = 'left',
  color = INK,
): Shape => ({
  kind: 'text',
  x,
  y,
  text: words,
  color,
  scale,
  align,
});
const line = (points: Point[], color = INK, width = 2, role?: 'whisker' | 'series'): Shape => ({
  kind: 'line',
  points,
  color,
  width,
  role,
});

function frame(title: string, subtitle: string): Shape[] {
  return [text(AREA.left, 14, title), text(AREA.left, 40, subtitle, 1, 'left', MUTED)];
}

/** Horizontal grid lines with their labels on the left, and the axes. */
function valueAxis(ticks: number[], y: (v: number) => number, label: (v: number) => string): Shape[] {
  return [
    ...ticks.flatMap((t) => [
      line(
        [
          [AREA.left, y(t)],
          [AREA.right, y(t)],
        ],
        GRID,
        1,
      ),
      text(AREA.left - 8, y(t) - 7, label(t), BIG, 'right'),
    ]),
    line([
      [AREA.left, AREA.top],
      [AREA.left, AREA.bottom],
    ]),
    line([
      [AREA.left, AREA.bottom],
      [AREA.right, AREA.bottom],
    ]),
  ];
}

/** Words in lines of at most `width` characters (a longer word stays whole). */
export function wrap(words: string, width: number): string[] {
  const lines: string[] = [];
  for (const word of words.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= width)
      lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

/** The legend, right of the plot area: a swatch, the label (wrapped), and small lines of detail. */
function legend(entries: { label: string; details: string[]; color: Rgb }[]): Shape[] {
  const x = AREA.right + 24;
  const fits = Math.floor((WIDTH - x - 26) / (ADVANCE * BIG));
  let y = AREA.top;
  return entries.flatMap(({ label, details, color }) => {
    const labelLines = wrap(label, fits);
    const shapes: Shape[] = [
      { kind: 'rect', x, y: y + 2, w: 18, h: 12, color },
      ...labelLines.map((words, i) => text(x + 26, y + i * LINE_HEIGHT, words)),
    ];
    y += labelLines.length * LINE_HEIGHT;
    shapes.push(...details.map((detail, i) => text(x + 26, y + i * 11, detail, 1, 'left', MUTED)));
    y += details.length * 11 + 14;
    return shapes;
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
/** A tick in seconds with no more decimals than it has: 0 s, 2 s, 2.5 s. */
const tickSeconds = (ms: number) => `${round(ms / 1000)} s`;

// ---------------------------------------------------------------------------------------------
// Reading the results file: defensively, since other benchmarks add forms and series by name

type Figures = Record<string, unknown>;

const isSummary = (v: unknown): v is Summary =>
  !!v &&
  typeof v === 'object' &&
  typeof (v as Summary).p50 === 'number' &&
  typeof (v as Summary).n === 'number';

/** `fluxDependsOn30sMs` → "flux depends on 30s". */
const humanize = (key: string) =>
  key
    .replace(/Ms$/, '')
    .replace(/([a-z])([A-Z0-9])/g, '$1 $2')
    .toLowerCase();

/** The forms benchmark 4 may report, in the order they are drawn; any other end-to-end summary follows. */
const FORMS: { match: RegExp; label: string }[] = [
  { match: /^engineMs$/, label: 'armada-temporal' },
  { match: /^engineBaselineMs$/, label: 'armada-temporal, baseline build' },
  { match: /^scriptMs$/, label: 'serial helm loop' },
  { match: /flux\D*30(?!\d)/i, label: 'Flux 30 s' },
  { match: /flux\D*5(?!\d)/i, label: 'Flux 5 s' },
  { match: /helmfile/i, label: 'helmfile' },
];
/** Summaries in a variant that are parts or ratios, not one form's end-to-end time. */
const NOT_A_FORM = /workflow|activit|ratio|pair/i;

export interface Bar {
  label: string;
  /** Where in the variant's figures it was read. */
  key: string;
  summary: Summary;
}

/**
 * Benchmark 4's end-to-end times per variant (`sequenced`, `parallel`): every summary in the
 * variant's figures, or one level down (e.g. `peers.flux5sMs`), that is a form's end-to-end
 * time, labelled by FORMS or by its name.
 */
export function endToEndForms(results: Partial<Results>): { variant: string; bars: Bar[] }[] {
  const figures = results.benchmarks?.helmLoop?.figures ?? {};
  const variants: { variant: string; bars: Bar[] }[] = [];
  for (const variant of ['sequenced', 'parallel']) {
    const found: Bar[] = [];
    const visit = (object: Figures, prefix: string, depth: number) => {
      for (const [key, value] of Object.entries(object)) {
        const at = prefix ? `${prefix}.${key}` : key;
        if (NOT_A_FORM.test(key)) continue;
        if (isSummary(value)) {
          const form = FORMS.find((f) => f.match.test(key) || f.match.test(at));
          found.push({ label: form?.label ?? humanize(key), key: at, summary: value });
        } else if (depth < 1 && value && typeof value === 'object' && !Array.isArray(value))
          visit(value as Figures, at, depth + 1);
      }
    };
    const v = figures[variant];
    if (v && typeof v === 'object') visit(v as Figures, '', 0);
    const rank = (bar: Bar) => {
      const i = FORMS.findIndex((f) => f.label === bar.label);
      return i < 0 ? FORMS.length : i;
    };
    if (found.length) variants.push({ variant, bars: found.sort((a, b) => rank(a) - rank(b)) });
  }
  return variants;
}

export interface CdfSeries {
  label: string;
  key: string;
  summary: Summary;
  /** [ms, cumulative fraction] in increasing order. */
  points: Point[];
  /** True when only the summary's percentiles were kept: the curve joins min, p50, p95, p99, max. */
  fromSummary: boolean;
}

/** Benchmark 1's summaries that are drawn as CDFs: transitions and round trips, not per-run sums. */
const CDF_SERIES = /transition|roundtrip/i;
const NOT_A_CDF = /perRun/i;

/**
 * The latency distributions of benchmark 1: each top-level summary named like a transition or a
 * round trip (`groupTransitionMs`, `workflowTaskRoundTripMs`, …), drawn from its percentiles
 * p0…p100 when the figures keep them beside it (`groupTransitionPercentilesMs`, see
 * stats.percentiles), else from the summary's own points.
 */
export function latencySeries(results: Partial<Results>): CdfSeries[] {
  const figures: Figures = results.benchmarks?.overhead?.figures ?? {};
  const series: CdfSeries[] = [];
  for (const [key, value] of Object.entries(figures)) {
    if (!CDF_SERIES.test(key) || NOT_A_CDF.test(key) || !isSummary(value)) continue;
    const kept = figures[`${key.replace(/Ms$/, '')}PercentilesMs`];
    const percentiles =
      Array.isArray(kept) && kept.length >= 2 && kept.every((x) => typeof x === 'number')
        ? (kept as number[])
        : undefined;
    const points: Point[] = percentiles
      ? percentiles.map((ms, i) => [ms, i / (percentiles.length - 1)])
      : [
          [value.min, 0],
          [value.p50, 0.5],
          [value.p95, 0.95],
          [value.p99, 0.99],
          [value.max, 1],
        ];
    series.push({ label: humanize(key), key, summary: value, points, fromSummary: !percentiles });
  }
  return series;
}

// ---------------------------------------------------------------------------------------------
// The two charts

/** Bars of p50 with p95 whiskers, one cluster per variant, one bar per form. */
export function barChart(variants: { variant: string; bars: Bar[] }[], subtitle: string): Scene {
  const shapes = frame("End to end: the examples' manifest, p50 and p95", subtitle);
  const labels = [...new Set(variants.flatMap((v) => v.bars.map((b) => b.label)))];
  const colorOf = (label: string) => PALETTE[labels.indexOf(label) % PALETTE.length];
  const all = variants.flatMap((v) => v.bars.map((b) => b.summary));
  const ticks = niceTicks(Math.max(1, ...all.map((s) => Math.max(s.p50, s.p95))));
  const y = linearScale(0, ticks.at(-1)!, AREA.bottom, AREA.top);
  shapes.push(...valueAxis(ticks, y, tickSeconds));
  const clusterWidth = (AREA.right - AREA.left) / Math.max(variants.length, 1);
  variants.forEach(({ variant, bars }, v) => {
    const centre = AREA.left + clusterWidth * (v + 0.5);
    const barWidth = Math.min(70, (clusterWidth * 0.8) / bars.length);
    bars.forEach((bar, b) => {
      const x = centre - (barWidth * bars.length) / 2 + b * barWidth + 3;
      const w = barWidth - 6;
      const mid = x + w / 2;
      const { p50, p95 } = bar.summary;
      shapes.push(
        { kind: 'rect', x, y: y(p50), w, h: y(0) - y(p50), color: colorOf(bar.label), role: 'bar' },
        line(
          [
            [mid, y(p50)],
            [mid, y(p95)],
          ],
          INK,
          2,
          'whisker',
        ),
        line([
          [mid - w / 4, y(p95)],
          [mid + w / 4, y(p95)],
        ]),
        text(mid, Math.min(y(p95), y(p50)) - 14, seconds(p50), 1, 'center'),
      );
    });
    shapes.push(text(centre, AREA.bottom + 14, variant, BIG, 'center'));
  });
  const ways = variants.map((v) => v.variant).join(' / ');
  shapes.push(
    ...legend(
      labels.map((label) => {
        const ns = variants.flatMap((v) => v.bars.filter((b) => b.label === label).map((b) => b.summary.n));
        return { label, details: [`n ${ns.join(' / ')} (${ways})`], color: colorOf(label) };
      }),
    ),
    text(AREA.left, AREA.bottom + 44, 'bars: p50; whiskers: p95; label: p50', 1, 'left', MUTED),
  );
  return { width: WIDTH, height: HEIGHT, shapes };
}

/** One cumulative distribution curve per series, ms across, 0-100 % up. */
export function cdfChart(series: CdfSeries[], subtitle: string): Scene {
  const shapes = frame('Group transition latency: cumulative distribution', subtitle);
  const ticks = niceTicks(Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[0]))), 6);
  const x = linearScale(0, ticks.at(-1)!, AREA.left, AREA.right);
  const y = linearScale(0, 1, AREA.bottom, AREA.top);
  const colorOf = (i: number) => PALETTE[i % PALETTE.length];
  shapes.push(
    ...valueAxis([0, 0.25, 0.5, 0.75, 1], y, (q) => `${q * 100} %`),
    ...ticks.map((t) => text(x(t), AREA.bottom + 10, `${t}`, BIG, 'center')),
    text(AREA.right, AREA.bottom + 36, 'ms', BIG, 'right'),
    ...series.map((s, i) =>
      line(
        s.points.map(([ms, q]) => [x(ms), y(q)]),
        colorOf(i),
        3,
        'series',
      ),
    ),
    ...legend(
      series.map(({ label, summary, fromSummary }, i) => ({
        label,
        details: [
          `p50 ${summary.p50} ms, p95 ${summary.p95} ms`,
          `n ${summary.n}${fromSummary ? ', drawn through min,' : ''}`,
          ...(fromSummary ? ['p50, p95, p99 and max only'] : []),
        ],
        color: colorOf(i),
      })),
    ),
  );
  return { width: WIDTH, height: HEIGHT, shapes };
}

/** "2026-11-23, 2 × AMD EPYC …": when and where the figures were taken. */
function provenance(results: Partial<Results>, benchmark: 'overhead' | 'helmLoop'): string {
  const entry = results.benchmarks?.[benchmark];
  const what = typeof entry?.figures?.what === 'string' ? entry.figures.what : '';
  const machine = results.machine ? `${results.machine.cpus} x ${results.machine.cpuModel}` : '';
  // The font is ASCII: the results' × and → become x and ->.
  return [entry?.date.slice(0, 10), machine, what]
    .filter(Boolean)
    .join('; ')
    .replace(/×/g, 'x')
    .replace(/→/g, '->')
    .replace(/^(.{140}).{4,}$/, '$1 ...');
}

/** The plots' files, next to the results file. */
export const PLOT_FILES = { endToEnd: 'end-to-end.png', transitions: 'transitions.png' } as const;

/**
 * Draws the plots of `resultsFile` next to it; returns the files written. A chart whose
 * benchmark has no figures in the file is not drawn (and an older PNG stays).
 */
export async function writePlots(resultsFile: string): Promise<string[]> {
  const results = JSON.parse(await readFile(resultsFile, 'utf8')) as Partial<Results>;
  const dir = path.dirname(resultsFile);
  const written: string[] = [];
  const forms = endToEndForms(results);
  if (forms.length) {
    const file = path.join(dir, PLOT_FILES.endToEnd);
    await writeFile(file, encodePng(paint(barChart(forms, provenance(results, 'helmLoop')))));
    written.push(file);
  }
  const series = latencySeries(results);
  if (series.length) {
    const file = path.join(dir, PLOT_FILES.transitions);
    await writeFile(file, encodePng(paint(cdfChart(series, provenance(results, 'overhead')))));
    written.push(file);
  }
  return written;
}

if (require.main === module) {
  const file = path.resolve(repo, process.argv[2] ?? process.env.BENCH_OUT ?? 'bench/results/latest.json');
  writePlots(file).then(
    (files) =>
      console.log(`plots: ${files.map((f) => path.relative(repo, f)).join(', ') || 'none (no figures)'}`),
    (err: unknown) => {
      console.error(`plot: ${file}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exit(1);
    },
  );
}
