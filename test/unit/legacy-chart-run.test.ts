import { legacyRunCounts } from '../../core/bridge/legacy-chart-run';
import { withLegacyChartRuns } from '../../runs/legacy-chart-runs';

describe("a standalone chart's runs of an older build under helm:<ns>/<release>", () => {
  const chart = { namespace: 'team', name: 'web' };
  const own = { kind: 'ArmadaChart', namespace: 'team', name: 'web' };
  // prettier-ignore
  it.each([
    { case: 'none: no run', run: null, counts: false },
    { case: 'its own, running: it holds the release', run: { running: true, object: own }, counts: true },
    { case: 'a group’s chart child, running: it holds the release too', run: { running: true, parent: 'ArmadaChartGroup:team/g', object: own }, counts: true },
    { case: 'its own, ended: its memo says what ran', run: { running: false, object: own }, counts: true },
    { case: 'a group’s chart child, ended: not the chart’s', run: { running: false, parent: 'ArmadaChartGroup:team/g', object: own }, counts: false },
    { case: 'another namespace’s chart, ended', run: { running: false, object: { ...own, namespace: 'other' } }, counts: false },
  ])('bridge: $case', ({ run, counts }) => {
    expect(legacyRunCounts(chart, run)).toBe(counts);
  });

  it('day-two reads them beside a standalone chart’s own runs, and only a standalone chart’s', () => {
    const query = "WorkflowId = 'ArmadaChart:team/web'";
    expect(withLegacyChartRuns({ kind: 'ArmadaChart', ...chart }, query)).toBe(
      `(${query}) OR (WorkflowId STARTS_WITH 'helm:' AND ArmadaKind = 'ArmadaChart' AND ArmadaNamespace = 'team' AND ArmadaName = 'web')`,
    );
    expect(withLegacyChartRuns({ kind: 'ArmadaChart', ...chart, group: 'g' }, query)).toBe(query);
    expect(withLegacyChartRuns({ kind: 'ArmadaChart', ...chart, group: 'g', manifest: 'm' }, query)).toBe(
      query,
    );
    expect(withLegacyChartRuns({ kind: 'ArmadaManifest', namespace: 'team', name: 'm' }, query)).toBe(query);
  });
});
