import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { armadaManifestSpec } from '../../api/manifest';
import { planManifest, type ManifestDocuments } from '../../core/plan/manifest';
import type { ManifestPlan } from '../../core/plan/plans';
import { uniqueName } from '../helpers/env';

/**
 * The documents of the tests' manifest: "platform" (sequenced: a, b), then "apps" (parallel:
 * c, d), releases `<prefix>-<chart>` in `namespace`; `manifest` adds to its spec (a gate, an
 * on_failure).
 */
export function demoDocuments({
  name = 'demo',
  prefix = 'demo',
  namespace = uniqueName('ns'),
  manifest = {},
}: {
  name?: string;
  prefix?: string;
  namespace?: string;
  manifest?: Record<string, unknown>;
} = {}): ManifestDocuments {
  const chart = (release: string) =>
    armadaChartSpec.parse({ release, namespace, source: { type: 'local', location: 'x' }, values: { v: 1 } });
  return {
    namespace: 'default',
    manifest: {
      name,
      spec: armadaManifestSpec.parse({
        release_prefix: prefix,
        chart_groups: ['platform', 'apps'],
        ...manifest,
      }),
    },
    groups: {
      platform: armadaChartGroupSpec.parse({ chart_group: ['a', 'b'], sequenced: true }),
      apps: armadaChartGroupSpec.parse({ chart_group: ['c', 'd'] }),
    },
    charts: { a: chart('a'), b: chart('b'), c: chart('c'), d: chart('d') },
  };
}

/** The plan of demoDocuments. */
export function demoPlan(manifest: Record<string, unknown> = {}, namespace = uniqueName('ns')): ManifestPlan {
  return planManifest(demoDocuments({ namespace, manifest }));
}
