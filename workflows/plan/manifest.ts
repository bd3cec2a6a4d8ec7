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

/** The documents a standalone group's run is planned from: the group and the charts it may name. */
export interface GroupDocuments {
  namespace: string;
  name: string;
  spec: ArmadaChartGroupSpec;
  charts: Record<string, ArmadaChartSpec>;
}

/** What one plan has handed out so far: each chart to one group, each release to one chart. */
class Claims {
  readonly problems: string[] = [];
  private readonly chartOwner = new Map<string, string>();
  private readonly releaseOwner = new Map<string, string>();

  /** The group's charts, with Armada release names; a chart that does not resolve is a problem. */
  charts(
    groupName: string,
    group: ArmadaChartGroupSpec,
    charts: Record<string, ArmadaChartSpec>,
    releasePrefix?: string,
  ): ChartPlan[] {
    return group.chart_group.flatMap((chartName): ChartPlan[] => {
      const spec = charts[chartName];
      if (!spec) {
        this.problems.push(`ArmadaChartGroup ${groupName} lists chart "${chartName}", which does not exist`);
        return [];
      }
      const owner = this.chartOwner.get(chartName);
      if (owner) {
        this.problems.push(`chart "${chartName}" is listed by both group ${owner} and group ${groupName}`);
        return [];
      }
      this.chartOwner.set(chartName, groupName);
      const release = prefixedRelease(releasePrefix, spec.release);
      const key = `${spec.namespace}/${release}`;
      const claimedBy = this.releaseOwner.get(key);
      if (claimedBy) {
        this.problems.push(`charts "${claimedBy}" and "${chartName}" both deploy release ${key}`);
        return [];
      }
      this.releaseOwner.set(key, chartName);
      if (release.length > 53) {
        this.problems.push(
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
  }

  /** Throws PlanError listing every problem found, if any. */
  check(): void {
    if (this.problems.length) throw new PlanError(this.problems);
  }
}

/**
 * Resolves a manifest into its ordered groups and charts, with Armada release names
 * (`<release_prefix>-<release>`). Throws PlanError listing every reference that does not resolve,
 * every chart listed in two groups and every release claimed twice.
 */
export function planManifest(docs: ManifestDocuments): ManifestPlan {
  const { manifest } = docs;
  const claims = new Claims();
  const gate = manifest.spec.approval;
  const approvals = new Set(gate?.before ?? []);
  const approval = gate && {
    timeoutSeconds: gate.timeout === undefined ? undefined : (durationSeconds(gate.timeout) ?? undefined),
    onTimeout: gate.on_timeout,
  };

  const groups = manifest.spec.chart_groups.flatMap((groupName): GroupPlan[] => {
    const group = docs.groups[groupName];
    if (!group) {
      claims.problems.push(
        `ArmadaManifest ${manifest.name} lists chart group "${groupName}", which does not exist`,
      );
      return [];
    }
    return [
      {
        name: groupName,
        sequenced: group.sequenced,
        approval: approvals.has(groupName) ? approval : undefined,
        charts: claims.charts(groupName, group, docs.charts, manifest.spec.release_prefix),
      },
    ];
  });

  claims.check();
  return {
    manifest: manifest.name,
    namespace: docs.namespace,
    onFailure: manifest.spec.on_failure,
    targetState: manifest.spec.target_state,
    groups,
  };
}

/**
 * Resolves a group no manifest lists (its releases are not prefixed). Throws PlanError when a
 * chart it lists does not resolve or two charts claim one release.
 */
export function planGroup(docs: GroupDocuments): GroupPlan {
  const claims = new Claims();
  const charts = claims.charts(docs.name, docs.spec, docs.charts);
  claims.check();
  return { name: docs.name, sequenced: docs.spec.sequenced, charts };
}
