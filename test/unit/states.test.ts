import { crdFor } from '../../api/crd';
import { kinds } from '../../api/kinds';
import { deployerStatus } from '../../api/deployer';
import { CANARY_STATES, deployerOperatorPhase, STATES } from '../../api/states';
import { markdownOf, progressView, textOf } from '../../core/plan/progress-view';
import {
  pausedPhase,
  pendingGeneration,
  pendingGenerationStatus,
  shownPhase,
  statusFor,
} from '../../core/plan/status';
import type { CanaryProgress, Progress } from '../../core/progress';
import { formatObjectReport, objectRow } from '../../cli/list';
import type { ClusterObject } from '../../cli/cluster';
import { viewOf } from '../../bridge/view';

/** The columns `kubectl get` prints for a kind, read from its generated CRD: name → value in `object`. */
function kubectlColumns(kind: keyof typeof kinds, object: Record<string, unknown>): Record<string, unknown> {
  const crd = crdFor(kinds[kind]) as {
    spec: { versions: { additionalPrinterColumns: { name: string; jsonPath: string }[] }[] };
  };
  const read = (jsonPath: string) =>
    jsonPath
      .slice(1)
      .split('.')
      .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], object);
  return Object.fromEntries(
    crd.spec.versions[0].additionalPrinterColumns.map((c) => [c.name, read(c.jsonPath)]),
  );
}

/** What the API server keeps of a status write: the CRD's structural schema prunes unknown fields. */
function pruned(kind: keyof typeof kinds, status: Record<string, unknown>): Record<string, unknown> {
  const crd = crdFor(kinds[kind]) as {
    spec: {
      versions: {
        schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, unknown> } } } };
      }[];
    };
  };
  const known = crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties;
  return Object.fromEntries(Object.entries(status).filter(([field]) => field in known));
}

const since = '2026-11-28T03:00:00.000Z';

/** A finished Deployer's canary, as its progress query answers. */
const promotedCanary: CanaryProgress = {
  kind: 'canary',
  target: 'web/nginx-1.26.0',
  phase: 'Promoted',
  step: 2,
  steps: 2,
  percent: 100,
  history: [],
};

/** A manifest run paused after its first group: platform done, apps pending. */
const pausedManifest: Progress = {
  phase: 'Running',
  paused: { by: 'alice', reason: 'look', since },
  groups: [
    {
      name: 'platform',
      sequenced: true,
      state: 'done',
      charts: [{ chart: 'a', release: 'demo-a', namespace: 'ns', state: 'deployed', revision: 1 }],
    },
    {
      name: 'apps',
      sequenced: false,
      state: 'pending',
      charts: [{ chart: 'c', release: 'demo-c', namespace: 'ns', state: 'pending' }],
    },
  ],
};

/** An object on the cluster as the status writer left it (`status` as the API server keeps it). */
function clusterObject(
  kind: ClusterObject['kind'],
  status: Record<string, unknown>,
  generation = 1,
): ClusterObject {
  return {
    kind,
    metadata: { name: 'x', namespace: 'ns', generation, creationTimestamp: since },
    spec: {},
    status: pruned(kind, status) as ClusterObject['status'],
  };
}

const target = (kind: ClusterObject['kind']) => ({ kind, namespace: 'ns', name: 'x', workflowId: 'w' });
const running = (progress: Progress | CanaryProgress) => ({
  workflowId: 'w',
  runId: 'r',
  type: 'deployRun',
  status: 'RUNNING',
  running: true,
  startedAt: Date.parse(since),
  memo: { mode: 'deploy' as const },
  endedAt: null,
  progress,
});

describe('one state vocabulary across kubectl, armadactl and the Temporal UI', () => {
  it('a finished Deployer is deployed in kubectl get dpl, armadactl status, list and get, and the UI', () => {
    // What the Deployer's run writes as it ends (workflows/deployer.ts complete → report).
    const written = {
      ...statusFor('Deployed', 'nginx-1.26.0 serves 100 %'),
      phase: deployerOperatorPhase('Deployed'),
    };
    const object = clusterObject('Deployer', written);
    expect(kubectlColumns('Deployer', { status: object.status, spec: {} })).toMatchObject({
      State: 'deployed',
      Satisfied: true,
    });
    // armadactl status (and watch), the Temporal UI's current details
    expect(textOf(progressView(promotedCanary))[0]).toBe('web/nginx-1.26.0: Deployed, step 2/2 at 100 %');
    expect(markdownOf(progressView(promotedCanary))).toMatch(/^\*\*web\/nginx-1\.26\.0: Deployed,/);
    // armadactl list: after the run, as the status says; while its canary answers, as that says
    expect(objectRow(object, null)).toMatchObject({ state: 'ready', phase: 'Deployed' });
    expect(objectRow(object, running(promotedCanary))).toMatchObject({ phase: 'Deployed' });
    // armadactl get
    expect(formatObjectReport(target('Deployer'), { object, run: null })[0]).toBe(
      'Deployer ns/x: ready (deployed)',
    );
    // The Deployer operator's own word stays in status.phase, for scripts written for it.
    expect(object.status).toMatchObject({ phase: 'Completed' });
  });

  it("a Deployer's status keeps actual_state, satisfied and reason, as every kind's does", () => {
    const status = { actual_state: 'deployed', satisfied: true, reason: 'nginx-1.26.0 serves 100 %' };
    expect(deployerStatus.parse(status)).toEqual(status);
    for (const kind of Object.keys(kinds) as (keyof typeof kinds)[])
      expect([kind, Object.keys(pruned(kind, status))]).toEqual([
        kind,
        ['actual_state', 'satisfied', 'reason'],
      ]);
  });

  it('a manifest paused after its first group shows paused in kubectl get amf, armadactl status and list, and the UI', () => {
    // What a pause writes while the run's phase is Running (workflows/status.ts reportPause).
    const object = clusterObject(
      'ArmadaManifest',
      statusFor(pausedPhase('Running', true), 'paused by alice: look'),
    );
    expect(kubectlColumns('ArmadaManifest', { status: object.status, spec: {} })).toMatchObject({
      State: 'paused',
      Satisfied: false,
    });
    const [title] = textOf(progressView(pausedManifest));
    expect(title).toMatch(/^Paused — paused by alice \(look\) since 2026-11-28 03:00:00 UTC$/);
    expect(markdownOf(progressView(pausedManifest))).toMatch(/^\*\*Paused — paused by alice/);
    expect(objectRow(object, running(pausedManifest))).toMatchObject({
      state: 'reconciling',
      phase: 'Paused',
    });
  });

  it('an ended run shows how it ended, whatever its pause', () => {
    expect(pausedPhase('Deployed', true)).toBe('Deployed');
    expect(pausedPhase('Failed', true)).toBe('Failed');
    expect(pausedPhase('WaitingApproval', true)).toBe('Paused');
    expect(pausedPhase('Running', false)).toBe('Running');
    expect(shownPhase({ ...promotedCanary, phase: 'Progressing', paused: { since } })).toBe('Paused');
  });

  it('every canary phase is a word of the vocabulary', () => {
    for (const word of Object.values(CANARY_STATES)) expect(Object.keys(STATES)).toContain(word);
  });
});

describe('a chart with a new generation not yet deployed is not satisfied', () => {
  const deployedChart = (generation: number, observedGeneration: number) => ({
    apiVersion: 'armada.airshipit.org/v1alpha1',
    kind: 'ArmadaChart',
    metadata: { name: 'web', namespace: 'ns', generation },
    spec: { release: 'web', namespace: 'ns', source: { type: 'local', location: 'x' } },
    status: { ...statusFor('Deployed', 'ns/web'), observedGeneration },
  });

  it.each([
    [
      'a spec changed since the deployed generation is pending',
      3,
      2,
      { generation: 3, observedGeneration: 2 },
    ],
    ['the deployed generation is the current one', 2, 2, null],
    ['an unknown generation is not taken as pending', undefined, 2, null],
    ['a status not yet written is not pending', 3, undefined, null],
  ] as const)('%s', (_, generation, observed, pending) => {
    expect(pendingGeneration(generation, observed)).toEqual(pending);
  });

  it('the bridge sees a satisfied status of an older generation, and says SATISFIED false, not Ready, until the run writes', () => {
    expect(viewOf('ArmadaChart', deployedChart(3, 2)).satisfiedBefore).toEqual({
      generation: 3,
      observedGeneration: 2,
    });
    expect(viewOf('ArmadaChart', deployedChart(2, 2)).satisfiedBefore).toBeUndefined();
    const said = pendingGenerationStatus({ generation: 3, observedGeneration: 2 });
    const object = clusterObject('ArmadaChart', { ...deployedChart(3, 2).status, ...said }, 3);
    expect(
      kubectlColumns('ArmadaChart', { status: object.status, spec: { target_state: 'deployed' } }),
    ).toMatchObject({
      State: 'deployed',
      'Target State': 'deployed',
      Satisfied: false,
    });
    expect(said.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Ready', 'False', 'NewGeneration'],
      ['Reconciling', 'True', 'NewGeneration'],
      ['Progressing', 'True', 'NewGeneration'],
    ]);
  });
});
