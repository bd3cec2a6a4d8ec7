import type { ArmadaChartSpec } from '../../api/chart';
import type { ArmadaChartGroupSpec } from '../../api/chart-group';
import { durationSeconds } from '../../api/duration';
import type { ArmadaManifestSpec } from '../../api/manifest';
import type { DeployerSpec } from '../../api/deployer';
import { resolveDependencies } from './dependencies';
import { lockstepProblems } from './lockstep';
import { objectWorkflowId, prefixedRelease, releaseWorkflowId } from './names';
import { notifyTarget } from './notifications';
import type { ChartPlan, DeployerPlan, GroupPlan, ManifestPlan } from './plans';

/** The documents a run is planned from: one manifest and the groups and charts it may name. */
export interface ManifestDocuments {
  namespace: string;
  manifest: { name: string; spec: ArmadaManifestSpec };
  groups: Record<string, ArmadaChartGroupSpec>;
  /** The charts its groups may name, and those their `dependencies` name. */
  charts: Record<string, ArmadaChartSpec>;
  /** The Deployers its groups may name; none: they list none. */
  deployers?: Record<string, DeployerSpec>;
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
  /** The Deployers it may name; none: it lists none. */
  deployers?: Record<string, DeployerSpec>;
}

/** What one plan has handed out so far: each chart and Deployer to one group, each release to one chart. */
class Claims {
  readonly problems: string[] = [];
  /** The group each chart and Deployer went to, by `chart web` / `Deployer web`. */
  private readonly listedBy = new Map<string, string>();
  private readonly releaseOwner = new Map<string, string>();

  /** The group's charts, with Armada release names; a chart that does not resolve is a problem. */
  charts(
    groupName: string,
    group: ArmadaChartGroupSpec,
    charts: Record<string, ArmadaChartSpec>,
    releasePrefix?: string,
  ): ChartPlan[] {
    return group.chart_group.flatMap((chartName): ChartPlan[] => {
      const spec = this.listed(groupName, 'chart', chartName, charts);
      if (!spec) return [];
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
      const { dependencies, problems } = resolveDependencies(chartName, charts);
      this.problems.push(...problems);
      return [
        {
          chart: chartName,
          release,
          namespace: spec.namespace,
          workflowId: releaseWorkflowId(spec.namespace, release),
          spec,
          ...(dependencies && { dependencies }),
        },
      ];
    });
  }

  /**
   * `{ deployers }`: the group's Deployers under their standalone runs' workflow IDs (nothing when
   * it lists none); one that does not exist, or that another group of the plan lists, is a problem.
   */
  deployers(
    groupName: string,
    group: ArmadaChartGroupSpec,
    namespace: string,
    deployers: Record<string, DeployerSpec> = {},
  ): { deployers?: DeployerPlan[] } {
    if (!group.deployers) return {};
    const planned = group.deployers.flatMap((name): DeployerPlan[] => {
      const spec = this.listed(groupName, 'Deployer', name, deployers);
      return spec ? [{ name, workflowId: objectWorkflowId('Deployer', namespace, name), spec }] : [];
    });
    return { deployers: planned };
  }

  /** The spec of an object a group lists, handed to that group; a problem when it does not exist or another group has it. */
  private listed<S>(
    groupName: string,
    what: 'chart' | 'Deployer',
    name: string,
    specs: Record<string, S>,
  ): S | undefined {
    const spec = specs[name];
    if (!spec) {
      this.problems.push(`ArmadaChartGroup ${groupName} lists ${what} "${name}", which does not exist`);
      return undefined;
    }
    const owner = this.listedBy.get(`${what} ${name}`);
    if (owner) {
      this.problems.push(`${what} "${name}" is listed by both group ${owner} and group ${groupName}`);
      return undefined;
    }
    this.listedBy.set(`${what} ${name}`, groupName);
    return spec;
  }

  /**
   * `{ lockstep: true }` for a group whose canary charts and Deployers step together (its own
   * canary_lockstep or its manifest's), nothing otherwise; a set that cannot step together is a
   * problem.
   */
  lockstep(
    groupName: string,
    group: ArmadaChartGroupSpec,
    planned: Pick<GroupPlan, 'charts' | 'deployers'>,
    manifestLockstep?: boolean,
  ): { lockstep?: true } {
    if (!group.canary_lockstep && !manifestLockstep) return {};
    this.problems.push(
      ...lockstepProblems(
        `ArmadaChartGroup ${groupName}`,
        group.sequenced,
        planned.charts,
        planned.deployers,
      ),
    );
    return { lockstep: true };
  }

  /** Throws PlanError listing every problem found, if any. */
  check(): void {
    if (this.problems.length) throw new PlanError(this.problems);
  }
}

/**
 * Resolves a manifest into its ordered groups, their charts and Deployers, with Armada release
 * names (`<release_prefix>-<release>`). Throws PlanError listing every reference that does not
 * resolve, every chart or Deployer listed in two groups and every release claimed twice.
 */
export function planManifest(docs: ManifestDocuments): ManifestPlan {
  const { manifest } = docs;
  const claims = new Claims();
  const gate = manifest.spec.approval;
  const approvals = new Set(gate?.before ?? []);
  const approval = gate && {
    timeoutSeconds: gate.timeout === undefined ? undefined : (durationSeconds(gate.timeout) ?? undefined),
    onTimeout: gate.on_timeout,
    ...(gate.distinct_approvers !== undefined && { distinct_approvers: gate.distinct_approvers }),
    ...(gate.not_author !== undefined && { not_author: gate.not_author }),
  };

  const groups = manifest.spec.chart_groups.flatMap((groupName): GroupPlan[] => {
    const group = docs.groups[groupName];
    if (!group) {
      claims.problems.push(
        `ArmadaManifest ${manifest.name} lists chart group "${groupName}", which does not exist`,
      );
      return [];
    }
    const charts = claims.charts(groupName, group, docs.charts, manifest.spec.release_prefix);
    const deployers = claims.deployers(groupName, group, docs.namespace, docs.deployers);
    return [
      {
        name: groupName,
        sequenced: group.sequenced,
        approval: approvals.has(groupName) ? approval : undefined,
        charts,
        ...deployers,
        ...claims.lockstep(groupName, group, { charts, ...deployers }, manifest.spec.canary_lockstep),
      },
    ];
  });

  claims.check();
  const notify = notifyTarget('ArmadaManifest', docs.namespace, manifest.name, manifest.spec);
  return {
    manifest: manifest.name,
    namespace: docs.namespace,
    onFailure: manifest.spec.on_failure,
    targetState: manifest.spec.target_state,
    groups,
    ...(notify && { notify }),
    ...(manifest.spec.windows && { windows: manifest.spec.windows }),
  };
}

/**
 * Resolves a group no manifest lists (its releases are not prefixed). Throws PlanError when a
 * chart or Deployer it lists does not resolve or two charts claim one release.
 */
export function planGroup(docs: GroupDocuments): GroupPlan {
  const claims = new Claims();
  const charts = claims.charts(docs.name, docs.spec, docs.charts);
  const deployers = claims.deployers(docs.name, docs.spec, docs.namespace, docs.deployers);
  const lockstep = claims.lockstep(docs.name, docs.spec, { charts, ...deployers });
  claims.check();
  return { name: docs.name, sequenced: docs.spec.sequenced, charts, ...deployers, ...lockstep };
}

/**
 * An object as the release claims see it: its spec as stored (only the names are read), and when
 * it was created. Objects with `target_state: uninitialized` start nothing and claim nothing.
 */
export interface ClaimDocument {
  kind: 'ArmadaManifest' | 'ArmadaChartGroup' | 'ArmadaChart' | 'Deployer';
  namespace: string;
  name: string;
  /** creationTimestamp in ms: the older claim wins. */
  createdAt: number;
  spec: {
    target_state?: string;
    release_prefix?: string;
    chart_groups?: readonly string[];
    chart_group?: readonly string[];
    /** A group's Deployers. */
    deployers?: readonly string[];
    release?: string;
    namespace?: string;
    /** A chart that is only built into others while no group lists it: it claims no release. */
    dependency_only?: boolean;
    /** A Deployer's Deployments: `<name>-<version>` in `namespace`. */
    deployment?: { namespace: string; name: string };
  };
}

/** Which object. */
export type ClaimKey = { kind: string; namespace: string; name: string };

/** `ArmadaChart default/web`: how claims and rival problems name an object. */
export const describeObject = (o: ClaimKey): string => `${o.kind} ${o.namespace}/${o.name}`;

/** The objects a manifest (its groups) or a group (its charts and Deployers) lists, as describeObject names them. */
export function listedObjects(doc: ClaimDocument): string[] {
  const kind = doc.kind === 'ArmadaManifest' ? 'ArmadaChartGroup' : 'ArmadaChart';
  const described = (kind: ClaimDocument['kind']) => (name: string) =>
    describeObject({ kind, namespace: doc.namespace, name });
  return [
    ...(doc.spec.chart_groups ?? doc.spec.chart_group ?? []).map(described(kind)),
    ...(doc.spec.deployers ?? []).map(described('Deployer')),
  ];
}

/**
 * Objects with `target_state: uninitialized` start nothing and claim nothing; nor does a
 * `dependency_only` chart on its own (what lists it, if anything, claims its release).
 */
export const claimsAnything = (doc: ClaimDocument): boolean =>
  doc.spec.target_state !== 'uninitialized' && !doc.spec.dependency_only;

/**
 * What `doc` would deploy if it runs on its own (see topLevelClaims), with the other documents
 * looked up by their describeObject name. Reads only the documents `doc` lists, and theirs.
 */
export function claimsOf(
  doc: ClaimDocument,
  find: (described: string) => ClaimDocument | undefined,
): string[] {
  const lookUp = (kind: ClaimDocument['kind'], namespace: string, name: string) =>
    find(describeObject({ kind, namespace, name }));
  const chartClaims = (chart: ClaimDocument | undefined, prefix?: string) =>
    chart?.spec.release && chart.spec.namespace
      ? [`release ${chart.spec.namespace}/${prefixedRelease(prefix, chart.spec.release)}`]
      : [];
  // Two Deployers of one base name in one namespace would step and delete each other's
  // Deployments (they are found by that name's label).
  const deployerClaims = (deployer: ClaimDocument) => {
    const target = deployer.spec.deployment;
    return target ? [`Deployment ${target.namespace}/${target.name}-*`] : [];
  };
  const groupClaims = (group: ClaimDocument | undefined, prefix?: string) => [
    ...(group?.spec.chart_group ?? []).flatMap((c) => {
      const chart = lookUp('ArmadaChart', group!.namespace, c);
      return chart ? [describeObject(chart), ...chartClaims(chart, prefix)] : [];
    }),
    ...(group?.spec.deployers ?? []).flatMap((d) => {
      const deployer = lookUp('Deployer', group!.namespace, d);
      return deployer ? [describeObject(deployer), ...deployerClaims(deployer)] : [];
    }),
  ];
  switch (doc.kind) {
    case 'ArmadaManifest':
      return (doc.spec.chart_groups ?? []).flatMap((g) => {
        const group = lookUp('ArmadaChartGroup', doc.namespace, g);
        return group ? [describeObject(group), ...groupClaims(group, doc.spec.release_prefix)] : [];
      });
    case 'ArmadaChartGroup':
      return groupClaims(doc);
    case 'ArmadaChart':
      return chartClaims(doc);
    case 'Deployer':
      return deployerClaims(doc);
  }
}

/**
 * What each object that runs on its own would deploy: manifests, groups no manifest lists, and
 * charts and Deployers no group lists (the rest are deployed by their parent). A claim reads
 * `release apps/demo-web` (a Helm release), `ArmadaChart default/web` or `ArmadaChartGroup
 * default/apps` (an object a run deploys), or `Deployment web/nginx-*` (a Deployer's). Names that do not resolve claim nothing;
 * planManifest and planGroup report them.
 */
function topLevelClaims(docs: readonly ClaimDocument[]): { doc: ClaimDocument; claims: string[] }[] {
  const byName = new Map(docs.map((d) => [describeObject(d), d]));
  const listed = new Set(docs.flatMap(listedObjects));
  return docs
    .filter((d) => claimsAnything(d) && !listed.has(describeObject(d)))
    .map((doc) => ({ doc, claims: claimsOf(doc, (described) => byName.get(described)) }));
}

/** Which of two claims wins: the older (creationTimestamp), then by kind, namespace and name. */
export const claimOrder = (a: ClaimDocument, b: ClaimDocument): number =>
  a.createdAt - b.createdAt ||
  a.kind.localeCompare(b.kind) ||
  a.namespace.localeCompare(b.namespace) ||
  a.name.localeCompare(b.name);

export const sameObject = (a: ClaimKey, b: ClaimKey): boolean =>
  a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;

/** One problem per claim of `target`'s (`mine`) that another object holds (`holderOf`). */
export function rivalProblems(
  target: ClaimKey,
  mine: readonly string[],
  holderOf: (claim: string) => ClaimKey | undefined,
): string[] {
  return [...new Set(mine)].flatMap((claim) => {
    const owner = holderOf(claim);
    return owner && !sameObject(owner, target)
      ? [`${claim} is already deployed by ${describeObject(owner)}`]
      : [];
  });
}

/**
 * What stops `target` from running because an older object already deploys one of its releases
 * or one of the charts or groups it lists: two manifests (or groups, or standalone charts, in any
 * namespaces) claiming one Helm release would otherwise take turns upgrading it, each to its own
 * spec. The oldest claim wins (creationTimestamp, then kind, namespace and name); every later
 * claimant gets one problem per claim, naming the object that holds it. Empty when `target`
 * holds all it claims.
 *
 * Example: ArmadaManifest default/good (created 10:00, release_prefix "good") deploys chart web
 * as release apps/good-web. ArmadaChart other/copy (10:07) with release "good-web" in namespace
 * apps gets `release apps/good-web is already deployed by ArmadaManifest default/good`; a group
 * made at 10:08 that lists chart web as well gets `ArmadaChart default/web is already deployed
 * by ArmadaManifest default/good`. Good keeps deploying both.
 */
export function rivalClaims(target: ClaimKey, docs: readonly ClaimDocument[]): string[] {
  const holder = new Map<string, ClaimDocument>();
  for (const { doc, claims } of topLevelClaims([...docs].sort(claimOrder))) {
    for (const claim of claims) if (!holder.has(claim)) holder.set(claim, doc);
  }
  const mine = topLevelClaims(docs).find(({ doc }) => sameObject(doc, target))?.claims ?? [];
  return rivalProblems(target, mine, (claim) => holder.get(claim));
}
