import { inflateSync } from 'node:zlib';
import {
  barChart,
  cdfChart,
  crc32,
  createBitmap,
  encodePng,
  endToEndForms,
  latencySeries,
  linearScale,
  niceTicks,
  paint,
  PNG_SIGNATURE,
  textWidth,
  wrap,
  type Scene,
} from '../../bench/plot';
import type { Results } from '../../bench/results';
import { percentiles, type Summary } from '../../bench/stats';

const summary = (p50: number, p95 = p50 * 1.1, n = 5): Summary => ({
  n,
  min: p50 * 0.9,
  p50,
  p95,
  p99: p95,
  max: p95,
  mean: p50,
});

/** A results file holding only the figures the plots read. */
const results = (overhead: Record<string, unknown>, helmLoop: Record<string, unknown>): Partial<Results> => ({
  benchmarks: {
    overhead: { date: '2026-11-25T00:00:00.000Z', durationSeconds: 1, sizes: {}, figures: overhead },
    helmLoop: { date: '2026-11-25T00:00:00.000Z', durationSeconds: 1, sizes: {}, figures: helmLoop },
  },
});

const byRole = (scene: Scene, role: string) => scene.shapes.filter((s) => 'role' in s && s.role === role);

describe('encodePng', () => {
  const png = encodePng(createBitmap(3, 2, [255, 0, 0]));
  /** The chunks of a PNG after its signature: type, data, and the CRC it carries. */
  const chunks = (file: Buffer) => {
    const found: { type: string; data: Buffer; crc: number }[] = [];
    for (let at = 8; at < file.length;) {
      const length = file.readUInt32BE(at);
      const type = file.subarray(at + 4, at + 8).toString('ascii');
      found.push({
        type,
        data: file.subarray(at + 8, at + 8 + length),
        crc: file.readUInt32BE(at + 8 + length),
      });
      at += 12 + length;
    }
    return found;
  };

  it('starts with the PNG signature and has IHDR, IDAT and IEND in order', () => {
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(chunks(png).map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
  });

  it('declares the size as 8-bit RGB in its IHDR', () => {
    const header = chunks(png)[0].data;
    expect(header.length).toBe(13);
    expect([header.readUInt32BE(0), header.readUInt32BE(4)]).toEqual([3, 2]);
    expect([...header.subarray(8)]).toEqual([8, 2, 0, 0, 0]);
  });

  it('carries the CRC of each chunk’s type and data', () => {
    for (const { type, data, crc } of chunks(png))
      expect(crc).toBe(crc32(Buffer.concat([Buffer.from(type, 'ascii'), data])));
  });

  it('deflates one unfiltered scanline a row: a filter byte, then the pixels', () => {
    const raw = inflateSync(chunks(png)[1].data);
    expect([...raw]).toEqual([0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0]);
  });
});

describe('crc32', () => {
  it.each([
    ['the check value of "123456789"', '123456789', 0xcbf43926],
    ['the CRC every IEND chunk carries', 'IEND', 0xae426082],
  ])('gives %s', (_name, input, expected) => {
    expect(crc32(Buffer.from(input, 'ascii'))).toBe(expected);
  });
});

describe('scales', () => {
  it('linearScale maps the domain’s ends to the range’s and the middle between them', () => {
    const x = linearScale(0, 10, 80, 880);
    expect([x(0), x(5), x(10)]).toEqual([80, 480, 880]);
  });

  it('linearScale turns upside down for a y axis (0 at the bottom)', () => {
    const y = linearScale(0, 1, 480, 70);
    expect([y(0), y(1)]).toEqual([480, 70]);
  });

  it.each([
    ['420 ms in about 5 ticks: steps of 100 up to 500', 420, 5, [0, 100, 200, 300, 400, 500]],
    ['6,245 ms: steps of 2,000 up to 8,000', 6245, 5, [0, 2000, 4000, 6000, 8000]],
    ['exactly a tick: it is the last one', 100, 5, [0, 20, 40, 60, 80, 100]],
    ['nothing to show: one unit', 0, 5, [0, 1]],
  ])('niceTicks: %s', (_name, max, count, expected) => {
    expect(niceTicks(max, count)).toEqual(expected);
  });
});

describe('text', () => {
  it('is 6 pixels a character at scale 1, less the gap after the last', () => {
    expect([textWidth('ab', 1), textWidth('ab', 2), textWidth('', 2)]).toEqual([11, 22, 0]);
  });

  it('wraps words into lines that fit', () => {
    expect(wrap('workflow task round trip', 17)).toEqual(['workflow task', 'round trip']);
  });

  it('paints glyph pixels in the text colour and nothing outside it', () => {
    const bitmap = paint({
      width: 8,
      height: 10,
      shapes: [{ kind: 'text', x: 1, y: 1, text: 'I', color: [0, 0, 0], scale: 1 }],
    });
    const dark = [];
    for (let i = 0; i < bitmap.pixels.length; i += 3) if (bitmap.pixels[i] === 0) dark.push((i / 3) % 8);
    expect(dark.length).toBeGreaterThan(5);
    expect(Math.min(...dark)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...dark)).toBeLessThanOrEqual(5);
  });
});

describe('endToEndForms (benchmark 4, read defensively)', () => {
  it('finds armada-temporal and the serial loop, and the peers wherever they sit, in a fixed order', () => {
    const variant = {
      helmfileMs: summary(2500),
      engineMs: summary(5390),
      engineWorkflowMs: summary(4737),
      scriptMs: summary(1546),
      pairRatios: summary(3.5),
      engineActivitiesMs: { helmObserve: summary(111) },
      peers: { flux5sMs: summary(21000), fluxDependsOn30sMs: summary(95000) },
    };
    const forms = endToEndForms(results({}, { sequenced: variant, parallel: { engineMs: summary(5289) } }));
    expect(forms.map((v) => [v.variant, v.bars.map((b) => b.label)])).toEqual([
      ['sequenced', ['armada-temporal', 'serial helm loop', 'Flux 30 s', 'Flux 5 s', 'helmfile']],
      ['parallel', ['armada-temporal']],
    ]);
    expect(forms[0].bars.find((b) => b.label === 'Flux 5 s')?.key).toBe('peers.flux5sMs');
  });

  it('labels a form it does not know by its name', () => {
    const forms = endToEndForms(results({}, { parallel: { argoCdMs: summary(9000) } }));
    expect(forms[0].bars.map((b) => b.label)).toEqual(['argo cd']);
  });

  it('finds nothing in a file without benchmark 4', () => {
    expect(endToEndForms({ benchmarks: {} })).toEqual([]);
  });
});

describe('barChart', () => {
  const forms = endToEndForms(
    results(
      {},
      {
        sequenced: { engineMs: summary(5000, 6000), scriptMs: summary(1500), helmfileMs: summary(2500) },
        parallel: { engineMs: summary(4000), scriptMs: summary(1700), helmfileMs: summary(2400) },
      },
    ),
  );
  const scene = barChart(forms, 'test');

  it('draws one bar and one whisker per form in each variant', () => {
    expect(byRole(scene, 'bar')).toHaveLength(6);
    expect(byRole(scene, 'whisker')).toHaveLength(6);
  });

  it('makes bar heights proportional to the p50s, from a shared baseline', () => {
    const [engine, script] = byRole(scene, 'bar') as { y: number; h: number }[];
    expect(engine.h / script.h).toBeCloseTo(5000 / 1500, 1);
    expect(engine.y + engine.h).toBeCloseTo(script.y + script.h, 5);
  });

  it('labels each form once in the legend and each bar with its p50', () => {
    const texts = scene.shapes.flatMap((s) => (s.kind === 'text' ? [s.text] : []));
    for (const label of ['armada-temporal', 'serial helm loop', 'helmfile'])
      expect(texts.filter((t) => t === label)).toHaveLength(1);
    expect(texts).toContain('5.00 s');
    expect(texts).toEqual(expect.arrayContaining(['sequenced', 'parallel']));
  });
});

describe('latencySeries and cdfChart (benchmark 1, read defensively)', () => {
  const overhead = {
    groupTransitionMs: summary(420, 470, 45),
    groupTransitionPercentilesMs: percentiles(Array.from({ length: 45 }, (_, i) => 370 + i * 3)),
    workflowTaskRoundTripMs: summary(48, 70, 500),
    transitionsPerRunMs: summary(3784),
    totalMs: summary(10000),
  };
  const series = latencySeries(results(overhead, {}));

  it('draws every transition and round-trip summary, not the per-run sums or totals', () => {
    expect(series.map((s) => s.label)).toEqual(['group transition', 'workflow task round trip']);
  });

  it('uses the kept percentiles when there are any, else the summary’s points', () => {
    expect(series[0].fromSummary).toBe(false);
    expect(series[0].points).toHaveLength(101);
    expect(series[0].points[0]).toEqual([370, 0]);
    expect(series[0].points[100]).toEqual([502, 1]);
    expect(series[1].fromSummary).toBe(true);
    expect(series[1].points.map((p) => p[1])).toEqual([0, 0.5, 0.95, 0.99, 1]);
  });

  it('draws one curve per series, rising left to right', () => {
    const curves = byRole(cdfChart(series, 'test'), 'series').flatMap((s) => (s.kind === 'line' ? [s] : []));
    expect(curves).toHaveLength(2);
    for (const { points } of curves)
      for (let i = 1; i < points.length; i++) {
        expect(points[i][0]).toBeGreaterThanOrEqual(points[i - 1][0]);
        expect(points[i][1]).toBeLessThanOrEqual(points[i - 1][1]); // pixels: up is smaller
      }
  });
});

describe('percentiles', () => {
  it('keeps p0 … p100 of the samples, min to max', () => {
    const kept = percentiles([10, 20, 30, 40])!;
    expect(kept).toHaveLength(101);
    expect([kept[0], kept[1], kept[50], kept[100]]).toEqual([10, 10.3, 25, 40]);
    expect(percentiles([])).toBeUndefined();
  });
});
