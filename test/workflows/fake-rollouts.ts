import type * as activities from '../../activities';
import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { deployerSpec } from '../../api/deployer';
import type { DeployedVersion } from '../../core/contracts/kube';
import type { CanaryOutcome } from '../../core/contracts/workflows';
import type { CanaryProgress } from '../../core/progress';
import { planGroup } from '../../core/plan/manifest';
import { canaryWorkflowId } from '../../core/plan/names';
import { canaryProgressQuery } from '../../workflows/messages';
import { uniqueName, type Harness } from '../helpers/env';
import { eventually } from '../helpers/processes';
import { chartCanaryStubs, fakeHelm } from './fake-helm';

export type Steps = { percent: number; sleep?: string; approval?: boolean }[];

/**
 * Canaries and Deployers for workflow tests, with Helm and Kubernetes stubbed (fakeHelm): chart
 * canary copies, Deployer Deployments, readiness (`slowReadiness` delays a new side) and analysis
 * answers (`analysis`, per URL, in order; a URL with none left answers healthy).
 */
export function fakeRollouts() {
  const helm = fakeHelm();
  const analysis = new Map<string, boolean[]>();
  /** Extra milliseconds the new side of a release (a Deployer: `<namespace>/<name>-v2`) takes to become Ready. */
  const slowReadiness = new Map<string, number>();
  const deleted: string[] = [];
  /** The versions running per Deployment namespace, as observeOwnedDeployments finds them. */
  const running = new Map<string, DeployedVersion[]>();
  /** Deployers that run no version yet: their run is a first deploy. */
  const firstDeploys = new Set<string>();
  const stubs: Partial<typeof activities> = {
    ...helm.activities,
    ...chartCanaryStubs,
    async waitForResources(req) {
      // The new side: a chart's canary copy (`-new`) or a Deployer's new version (`-v2`).
      const canaries = (req.targets ?? []).filter((t) => /-(new|v2)$/.test(t.fieldSelector ?? ''));
      const delay = slowReadiness.get(req.release);
      if (canaries.length && delay) await new Promise((resolve) => setTimeout(resolve, delay));
      return helm.activities.waitForResources!(req);
    },
    async deleteDeployments(req) {
      deleted.push(...req.names);
    },
    async observeOwnedDeployments(ref) {
      return running.get(ref.namespace) ?? [];
    },
    async createDeployerDeployment(req) {
      return `${req.name}-${req.version}`;
    },
    async checkAnalysis(req) {
      const ok = analysis.get(req.url)?.shift() ?? true;
      if (ok) return { ok, message: 'ok' };
      return { ok, message: `GET ${req.url}: status 503, expected 200` };
    },
  };

  /** A Deployer of `steps` running v1 (none for a first deploy), rolling out v2 in its own namespace. */
  function deployer(name: string, steps: Steps) {
    if (!firstDeploys.has(name))
      running.set(name, [{ deployment: `${name}-v1`, version: 'v1', replicas: 2 }]);
    return deployerSpec.parse({
      type: 'canary',
      deployment: { name, namespace: name, image: 'registry.test/app', version: 'v2', replicas: 2 },
      steps,
      analysis: { url: `http://analysis.test/${name}`, interval: '1h' },
    });
  }

  /** A group of canary charts with `canary_lockstep: true`, each release existing at revision 1. */
  function lockstepGroup(members: string[], steps: Steps, deployers: string[] = []) {
    const namespace = uniqueName('ns');
    const charts = Object.fromEntries(
      members.map((name) => {
        helm.releases.set(name, { revision: 1, status: 'deployed', digest: 'old', lastDeployedRevision: 1 });
        const spec = armadaChartSpec.parse({
          release: name,
          namespace,
          source: { type: 'local', location: name },
          canary: { steps, analysis: { url: `http://analysis.test/${name}`, interval: '1h' } },
        });
        return [name, spec];
      }),
    );
    const spec = armadaChartGroupSpec.parse({
      chart_group: members,
      canary_lockstep: true,
      ...(deployers.length && { deployers }),
    });
    return planGroup({
      namespace: 'default',
      name: uniqueName('lockstep'),
      spec,
      charts,
      deployers: Object.fromEntries(deployers.map((name) => [name, deployer(name, steps)])),
    });
  }

  /** A sequenced group of one plain chart (its release at revision 1), then two Deployers of one step. */
  function sequencedWithDeployers() {
    const chart = uniqueName('web');
    const deployers = [uniqueName('dpl'), uniqueName('dpl')];
    helm.releases.set(chart, { revision: 1, status: 'deployed', digest: 'old', lastDeployedRevision: 1 });
    const group = planGroup({
      namespace: 'default',
      name: uniqueName('seq'),
      spec: armadaChartGroupSpec.parse({ chart_group: [chart], deployers, sequenced: true }),
      charts: {
        [chart]: armadaChartSpec.parse({
          release: chart,
          namespace: uniqueName('ns'),
          source: { type: 'local', location: chart },
        }),
      },
      deployers: Object.fromEntries(deployers.map((name) => [name, deployer(name, [{ percent: 50 }])])),
    });
    return { group, chart, deployers };
  }

  return {
    helm,
    analysis,
    slowReadiness,
    deleted,
    running,
    firstDeploys,
    activities: stubs,
    deployer,
    lockstepGroup,
    sequencedWithDeployers,
  };
}

/** A chart's canary run, by the chart's name (its objects in `default`). */
export const canaryOf = (h: Harness, member: string) =>
  h.client.workflow.getHandle<(run: unknown) => Promise<CanaryOutcome>>(canaryWorkflowId('default', member));

/** Every member's canary outcome, once it ended. */
export const canaryOutcomes = (h: Harness, members: string[]) =>
  Promise.all(members.map((m) => canaryOf(h, m).result()));

/** Waits until every member's canary answers its progress query with `ready` true. */
export async function membersUntil(
  h: Harness,
  members: string[],
  what: string,
  ready: (p: CanaryProgress) => boolean,
): Promise<void> {
  await eventually(
    what,
    async () => {
      for (const m of members) {
        const p = await canaryOf(h, m)
          .query(canaryProgressQuery)
          .catch(() => undefined);
        if (!p || !ready(p)) return undefined;
      }
      return true;
    },
    { timeoutMs: 30_000 },
  );
}
