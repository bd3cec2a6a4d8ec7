import { applyCell, medianAndP95, targetRows, targetsMarkdown } from '../../bench/targets';
import type { Results } from '../../bench/results';

const summary = (p50: number, p95: number, n = 5) => ({
  n,
  min: p50,
  p50,
  p95,
  p99: p95,
  max: p95,
  mean: p50,
});

const compared = (head: number, baseline: number) => ({
  baselineBuild: {
    ref: '0171bf6',
    figures: {
      groupTransitionInRoundTrips: {
        HEAD: summary(head, head + 1),
        baseline: summary(baseline, baseline + 1),
      },
      startedP99VsBaseline: { HEAD: summary(head, head + 1), baseline: summary(baseline, baseline + 1) },
      timerLatenessP99VsTimersOnly: {
        HEAD: summary(head, head + 1),
        baseline: summary(baseline, baseline + 1),
      },
    },
  },
});

const results: Partial<Results> = {
  benchmarks: {
    helmLoop: {
      date: '',
      durationSeconds: 0,
      sizes: {},
      figures: {
        sequenced: {
          engineMs: summary(2400, 2600),
          engineBaselineMs: summary(4400, 5000),
          scriptMs: summary(2000, 2100),
          helmfileMs: summary(2200, 2300),
          engineStartToFirstActivityMs: summary(300, 350),
        },
      },
    },
    overhead: { date: '', durationSeconds: 0, sizes: {}, figures: compared(1.5, 7.5) },
    bridge: { date: '', durationSeconds: 0, sizes: { objects: 200 }, figures: compared(2, 29) },
  },
};

describe('issue 35 targets table', () => {
  it('gives a median with its p95 and sample count, or a dash', () => {
    expect(medianAndP95(summary(1.234, 2), String)).toBe('1.234 (p95 2, n 5)');
    expect(medianAndP95(undefined, String)).toBe('—');
  });

  it('divides each build’s apply median by the helm loop’s and by helmfile’s', () => {
    const sequenced = results.benchmarks!.helmLoop!.figures!.sequenced;
    expect(applyCell(sequenced, 'engine')).toBe('1.2× the loop, 1.09× helmfile (2.4 s, p95 2.6 s, n 5)');
    expect(applyCell(sequenced, 'engineBaseline')).toBe('2.2× the loop, 2× helmfile (4.4 s, p95 5 s, n 5)');
    expect(applyCell({ engineMs: summary(1, 1) }, 'engine')).toBe('—');
  });

  it('puts the baseline build beside HEAD for every target, a dash where nothing was measured', () => {
    const rows = targetRows(results);
    const row = (start: string) => rows.find((r) => r[0].startsWith(start))!;
    expect(row('group transition')).toEqual([
      'group transition, in workflow-task round trips',
      '7.5 (p95 8.5, n 5)',
      '1.5 (p95 2.5, n 5)',
      '≤ 2',
    ]);
    expect(row('200 ArmadaCharts')[1]).toBe('29× (p95 30×, n 5)');
    expect(row('1,000 canaries').slice(1, 3)).toEqual(['—', '—']);
    expect(row('armadactl start')[2]).toBe('sequenced 0.3 s (p95 0.35 s, n 5)');
    expect(rows.every((r) => r.length === 4)).toBe(true);
  });

  it('divides each fleet size’s median by Flux’s, a dash for a size without figures', () => {
    const fleet = (sizes: Record<string, unknown>): Partial<Results> => ({
      benchmarks: { fleet: { date: '', durationSeconds: 0, sizes: {}, figures: { sizes } } },
    });
    const rows = targetRows(
      fleet({ 100: { armadaMs: summary(6000, 7000, 3), fluxMs: summary(24000, 25000, 3) }, 1000: {} }),
    );
    const row = rows.find((r) => r[0].includes('Flux HelmReleases'))!;
    expect(row[0]).toBe('100 and 1000 ArmadaCharts apply → all Ready ÷ Flux HelmReleases');
    expect(row[2]).toBe('100: 0.25× (6 s vs Flux 24 s, n 3); 1000: —');
    expect(targetRows({}).find((r) => r[0].includes('Flux HelmReleases'))![2]).toBe('—');
  });

  it('names the baseline ref in the header', () => {
    expect(targetsMarkdown(results)).toContain('| figure | baseline (0171bf6) | HEAD | target |');
  });
});
