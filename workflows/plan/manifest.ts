import type { ArmadaChartSpec } from '../../api/chart';
import type { ArmadaChartGroupSpec } from '../../api/chart-group';
import { durationSeconds } from '../../api/duration';
import type { ArmadaManifestSpec } from '../../api/manifest';
import { prefixedRelease, releaseWorkflowId } from './names';

/** One chart as a run deploys it: the CR name, the Helm release it drives, and its spec. */
export interface ChartPlan {
  chart: string;
  release: string;
  namespace: string;
  workflowId: string;
  spec: ArmadaChartSpec;
}

export interface GroupPlan {
  name: string;
  sequenced: boolean;
  /** Wait for an approve signal before this group starts, and what a timed-out wait does. */
  approval?: { timeoutSeconds?: number; onTimeout: 'stop' | 'rollback' | 'continue' };
  charts: ChartPlan[];
}

/** Everything a manifest run does, in order. */
export interface ManifestPlan {
  manifest: string;
  namespace: string;
  onFailure: 'stop' | 'rollback';
  targetState: ArmadaManifestSpec['target_state'];
  groups: GroupPlan[];
}

/** The documents a run is planned from: one manifest and the groups and charts it may name. */
export interface ManifestDocuments {
  namespace: string;
  manifest: { name: string; spec: ArmadaManifestSpec };
  groups: Record<string, ArmadaChartGroupSpec>;
  charts: Record<string, ArmadaChartSpec>;
}

/** A manifest that names what is not there, or claims a release twice. */
export class PlanError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'PlanError';
  }
}

/**
 * Resolves a manifest into its ordered groups and charts, with Armada release names
 * (`<release_prefix>-<release>`). Throws PlanError listing every reference that does not resolve,
 * every chart listed in two groups and every release claimed twice.
 */
export function planManifest(docs: ManifestDocuments): ManifestPlan {
  const { manifest } = docs;
  const problems: string[] = [];
  const chartOwner = new Map<string, string>();
  const releaseOwner = new Map<string, string>();
  const gate = manifest.spec.approval;
  const approvals = new Set(gate?.before ?? []);
  const approval = gate && {
    timeoutSeconds: gate.timeout === undefined ? undefined : (durationSeconds(gate.timeout) ?? undefined),
    onTimeout: gate.on_timeout,
  };

  const groups = manifest.spec.chart_groups.flatMap((groupName): GroupPlan[] => {
    const group = docs.groups[groupName];
    if (!group) {
      problems.push(`ArmadaManifest ${manifest.name} lists chart group "${groupName}", which does not exist`);
      return [];
    }
    const charts = group.chart_group.flatMap((chartName): ChartPlan[] => {
      const spec = docs.charts[chartName];
      if (!spec) {
        problems.push(`ArmadaChartGroup ${groupName} lists chart "${chartName}", which does not exist`);
        return [];
      }
      const owner = chartOwner.get(chartName);
      if (owner) {
        problems.push(`chart "${chartName}" is listed by both group ${owner} and group ${groupName}`);
        return [];
      }
      chartOwner.set(chartName, groupName);
      const release = prefixedRelease(manifest.spec.release_prefix, spec.release);
      const key = `${spec.namespace}/${release}`;
      const claimedBy = releaseOwner.get(key);
      if (claimedBy) {
        problems.push(`charts "${claimedBy}" and "${chartName}" both deploy release ${key}`);
        return [];
      }
      releaseOwner.set(key, chartName);
      if (release.length > 53) {
        problems.push(
          `release name "${release}" of chart "${chartName}" is longer than Helm's 53 characters`,
        );
      }
      return [
        {
          chart: chartName,
          release,
          namespace: spec.namespace,
          workflowId: releaseWorkflowId(spec.namespace, release),
          spec,
        },
      ];
    });
    return [
      {
        name: groupName,
        sequenced: group.sequenced,
        approval: approvals.has(groupName) ? approval : undefined,
        charts,
      },
    ];
  });

  if (problems.length) throw new PlanError(problems);
  return {
    manifest: manifest.name,
    namespace: docs.namespace,
    onFailure: manifest.spec.on_failure,
    targetState: manifest.spec.target_state,
    groups,
  };
}
