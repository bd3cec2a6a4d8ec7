import type { KindName } from '../../api/kinds';
import { armadaChartSpec } from '../../api/chart';
import { deployerSpec } from '../../api/deployer';
import { armadaPolicySpec } from '../../api/policy';
import { decideLeftover, type LeftoverDecision, type ReleaseRun } from '../../core/bridge/decide-leftover';
import { decideRun, type RunDecision, type RunState } from '../../core/bridge/decide-run';
import { decideUninstall, type UninstallDecision } from '../../core/bridge/decide-uninstall';
import { policyRefusal, type PolicyBounded } from '../../core/bridge/policy-refusal';
import type { RunMemo } from '../../core/plan/specs';

const created = Date.parse('2026-11-27T12:00:00Z');
/** The object: generation 3 of ArmadaChart web (uid u1), and the deploy it plans now. */
const planned: RunMemo = { specs: 'ArmadaChart/web@3', mode: 'deploy', uid: 'u1' };
const OLDER = 'ArmadaChart/web@2';
const settlesAt = created + 60_000;

/** The latest run as Temporal describes it: by default a deploy of these very specs, running. */
const run = (
  status: string,
  memo: Partial<RunMemo> = {},
  startedAt = created + 2_000,
  type = 'chartWorkflow',
): RunState => ({
  runId: 'run-1',
  type,
  running: status === 'RUNNING',
  status,
  memo: { ...planned, ...memo },
  startedAt,
});

interface Row {
  case: string;
  kind?: KindName;
  latest: 'followed' | RunState | null;
  settlesAt?: number;
  /** The workflow type of the planned run; absent: the rows above, where it does not matter. */
  plannedType?: string;
  decision: RunDecision;
}

const leave = (why: Extract<RunDecision, { do: 'leave' }>['why']): RunDecision => ({ do: 'leave', why });
const follow = (why: Extract<RunDecision, { do: 'follow' }>['why']): RunDecision => ({ do: 'follow', why });
const replan = (from: string | undefined): RunDecision => ({ do: 'replan', runId: 'run-1', from });
const start: RunDecision = { do: 'start' };

// prettier-ignore
const rows: Row[] = [
  // This bridge started it and follows it: Temporal is not asked.
  { case: 'this bridge started the run of these specs and follows it', latest: 'followed', decision: leave('followed') },
  { case: 'no run ever (describe: WorkflowNotFound)', latest: null, decision: start },

  // A run that is running.
  { case: 'running these specs', latest: run('RUNNING'), decision: leave('running these specs') },
  { case: 'a paused run (running to Temporal) of these specs', latest: run('RUNNING'), decision: leave('running these specs') },
  { case: 'running an older generation', latest: run('RUNNING', { specs: OLDER }), decision: replan(OLDER) },
  { case: 'a paused run of an older generation', latest: run('RUNNING', { specs: OLDER }), decision: replan(OLDER) },
  { case: 'running an older generation, already told these specs', latest: run('RUNNING', { specs: OLDER, next: planned.specs }), decision: follow('already re-planned') },
  { case: 'running an older generation, told a generation since replaced', latest: run('RUNNING', { specs: OLDER, next: 'ArmadaChart/web@1' }), decision: replan(OLDER) },
  { case: 'running an uninstall (a deploy waits for it to end)', latest: run('RUNNING', { mode: 'uninstall' }), decision: follow('another mode runs') },
  { case: 'running an uninstall of an older generation', latest: run('RUNNING', { specs: OLDER, mode: 'uninstall' }), decision: follow('another mode runs') },
  { case: 'running these specs for an earlier object of the name (uid u0): re-planned', latest: run('RUNNING', { uid: 'u0' }), decision: replan(planned.specs) },
  { case: 'running a run whose memo names no specs', latest: run('RUNNING', { specs: undefined }), decision: replan(undefined) },

  // A drift repair or an undo under the object's ID (the release lock, core/plan/release-lock.ts):
  // it copied the memo of the run before it and takes no re-plan.
  { case: 'a repair runs, these specs deployed before it', latest: run('RUNNING', {}, created + 2_000, 'driftWorkflow'), decision: leave('running these specs') },
  { case: 'a repair runs, an older generation deployed before it: the deploy starts when it ends', latest: run('RUNNING', { specs: OLDER }, created + 2_000, 'driftWorkflow'), decision: follow('a repair or an undo holds the lock') },
  { case: 'a repair runs, the owner never ran (its memo names no specs)', latest: run('RUNNING', { specs: undefined, uid: undefined }, created + 2_000, 'driftWorkflow'), decision: follow('a repair or an undo holds the lock') },
  { case: 'a repair runs, the run before it was an earlier object’s (uid u0)', latest: run('RUNNING', { uid: 'u0' }, created + 2_000, 'driftWorkflow'), decision: follow('a repair or an undo holds the lock') },
  { case: 'an undo runs, an older generation deployed before it', latest: run('RUNNING', { specs: OLDER }, created + 2_000, 'undoWorkflow'), decision: follow('a repair or an undo holds the lock') },
  { case: 'a repair runs, an uninstall ran before it', latest: run('RUNNING', { mode: 'uninstall' }, created + 2_000, 'driftWorkflow'), decision: follow('a repair or an undo holds the lock') },
  { case: 'a manifest: a repair of one of its releases runs, specs not settled', kind: 'ArmadaManifest', latest: run('RUNNING', { specs: OLDER }, created + 2_000, 'driftWorkflow'), settlesAt, decision: follow('a repair or an undo holds the lock') },
  { case: 'a repair ended, an older generation deployed before it', latest: run('COMPLETED', { specs: OLDER }, created + 2_000, 'driftWorkflow'), decision: start },
  { case: 'a repair ended with no owner run before it', latest: run('COMPLETED', { specs: undefined, uid: undefined }, created + 2_000, 'driftWorkflow'), decision: start },
  { case: 'a repair ended, these specs deployed before it', latest: run('COMPLETED', {}, created + 2_000, 'driftWorkflow'), decision: leave('these specs have had their run') },
  { case: 'an undo failed, these specs deployed before it (a person retries)', latest: run('FAILED', {}, created + 2_000, 'undoWorkflow'), decision: leave('these specs have had their run') },

  // A run that ended.
  { case: 'completed these specs', latest: run('COMPLETED'), decision: leave('these specs have had their run') },
  { case: 'failed these specs (a person retries it)', latest: run('FAILED'), decision: leave('these specs have had their run') },
  { case: 'cancelled these specs', latest: run('CANCELED'), decision: leave('these specs have had their run') },
  { case: 'terminated these specs', latest: run('TERMINATED'), decision: leave('these specs have had their run') },
  { case: 'timed out on these specs', latest: run('TIMED_OUT'), decision: leave('these specs have had their run') },
  { case: 'completed an older generation', latest: run('COMPLETED', { specs: OLDER }), decision: start },
  { case: 'failed an older generation', latest: run('FAILED', { specs: OLDER }), decision: start },
  { case: 'completed an uninstall of these specs (a deploy asked again)', latest: run('COMPLETED', { mode: 'uninstall' }), decision: start },
  { case: 'completed these specs for an earlier object of the name (uid u0)', latest: run('COMPLETED', { uid: 'u0' }), decision: start },
  { case: 'completed these specs, no uid, started an hour before the object', latest: run('COMPLETED', { uid: undefined }, created - 3_600_000), decision: start },
  { case: 'completed these specs, no uid, started after the object', latest: run('COMPLETED', { uid: undefined }), decision: leave('these specs have had their run') },

  // Looked at again after the I/O edge lost a race.
  { case: 'a re-plan signal found its run gone (WorkflowNotFound); its successor runs these specs', latest: run('RUNNING'), decision: leave('running these specs') },
  { case: 'a re-plan signal found its run gone; it completed these specs', latest: run('COMPLETED'), decision: leave('these specs have had their run') },
  { case: 'another bridge won the start (already started): its run of these specs', latest: run('RUNNING'), decision: leave('running these specs') },

  // Manifests and groups start once their specs have settled; a re-plan goes at once.
  { case: 'a manifest never run, specs not settled', kind: 'ArmadaManifest', latest: null, settlesAt, decision: { do: 'wait', until: settlesAt } },
  { case: 'a manifest whose older run completed, specs not settled', kind: 'ArmadaManifest', latest: run('COMPLETED', { specs: OLDER }), settlesAt, decision: { do: 'wait', until: settlesAt } },
  { case: 'a manifest never run, specs settled', kind: 'ArmadaManifest', latest: null, decision: start },
  { case: 'a manifest running an older generation, specs not settled', kind: 'ArmadaManifest', latest: run('RUNNING', { specs: OLDER }), settlesAt, decision: replan(OLDER) },
  { case: 'a manifest that completed these specs, settling', kind: 'ArmadaManifest', latest: run('COMPLETED'), settlesAt, decision: leave('these specs have had their run') },
  { case: 'a standalone group never run, specs not settled', kind: 'ArmadaChartGroup', latest: null, settlesAt, decision: { do: 'wait', until: settlesAt } },
  { case: 'a standalone chart never run, waits for no settling', kind: 'ArmadaChart', latest: null, settlesAt, decision: start },
  { case: 'a Deployer never run, waits for no settling', kind: 'Deployer', latest: null, settlesAt, decision: start },

  // Runs of an older build under the same ID, as another workflow type (the upgrade to deployRun).
  { case: 'an older build’s groupWorkflow runs an older generation: followed, deployRun starts when it ends', kind: 'ArmadaChartGroup', latest: run('RUNNING', { specs: OLDER }, created + 2_000, 'groupWorkflow'), plannedType: 'deployRun', decision: follow('an older build runs it as another workflow type') },
  { case: 'an older build’s deployerWorkflow runs an older generation: followed', kind: 'Deployer', latest: run('RUNNING', { specs: OLDER }, created + 2_000, 'deployerWorkflow'), plannedType: 'deployRun', decision: follow('an older build runs it as another workflow type') },
  { case: 'an older build’s deployerWorkflow runs these specs', kind: 'Deployer', latest: run('RUNNING', {}, created + 2_000, 'deployerWorkflow'), plannedType: 'deployRun', decision: leave('running these specs') },
  { case: 'an older build’s groupWorkflow completed an older generation', kind: 'ArmadaChartGroup', latest: run('COMPLETED', { specs: OLDER }, created + 2_000, 'groupWorkflow'), plannedType: 'deployRun', decision: start },
  { case: 'an older build’s manifestWorkflow runs an older generation: it takes deployRun’s input', kind: 'ArmadaManifest', latest: run('RUNNING', { specs: OLDER }, created + 2_000, 'manifestWorkflow'), plannedType: 'deployRun', decision: replan(OLDER) },
  { case: 'a deployRun runs an older generation', kind: 'Deployer', latest: run('RUNNING', { specs: OLDER }, created + 2_000, 'deployRun'), plannedType: 'deployRun', decision: replan(OLDER) },
];

describe('decideRun: what the bridge does about an object’s run', () => {
  it.each(rows)('$case', ({ kind = 'ArmadaChart', latest, settlesAt: settles, plannedType, decision }) => {
    const object = { kind, uid: 'u1', createdAt: created };
    expect(decideRun({ object, planned, plannedType, latest, settlesAt: settles })).toEqual(decision);
  });
});

describe('policyRefusal: which ArmadaPolicy rule refuses a chart or Deployer', () => {
  const chart = (spec: object = {}): PolicyBounded => ({
    kind: 'ArmadaChart',
    namespace: 'team-a',
    name: 'web',
    spec: armadaChartSpec.parse({
      release: 'web',
      namespace: 'team-a',
      source: { type: 'tar', location: 'https://charts.example.com/web-1.0.0.tgz' },
      ...spec,
    }),
  });
  const deployer = (namespace: string): PolicyBounded => ({
    kind: 'Deployer',
    namespace: 'team-a',
    name: 'nginx',
    spec: deployerSpec.parse({
      type: 'canary',
      deployment: { name: 'nginx', namespace, image: 'nginx', version: '1', replicas: 2 },
      steps: [{ percent: 50 }],
    }),
  });
  const teamA = {
    name: 'team-a',
    spec: armadaPolicySpec.parse({ namespaces: ['team-a'], target_namespaces: ['shared'] }),
  };
  const open = { lockdown: false };
  const lockdown = { lockdown: true };

  // prettier-ignore
  it.each([
    { case: 'a chart in its own namespace, no policy', object: chart(), manifestServiceAccount: undefined, policies: [], tenancy: open, refused: undefined },
    { case: 'a chart into another namespace, no policy', object: chart({ namespace: 'kube-system' }), manifestServiceAccount: undefined, policies: [], tenancy: open, refused: 'namespace boundary' },
    { case: 'a chart into a namespace its policy grants', object: chart({ namespace: 'shared' }), manifestServiceAccount: undefined, policies: [teamA], tenancy: open, refused: undefined },
    { case: 'a chart into a namespace its policy does not grant', object: chart({ namespace: 'kube-system' }), manifestServiceAccount: undefined, policies: [teamA], tenancy: open, refused: 'namespace boundary' },
    { case: 'a chart with no service account under lockdown', object: chart(), manifestServiceAccount: undefined, policies: [], tenancy: lockdown, refused: 'service account required' },
    { case: 'a chart under lockdown acting as its manifest’s service account', object: chart(), manifestServiceAccount: 'deployer', policies: [], tenancy: lockdown, refused: undefined },
    { case: 'a chart under lockdown with its own service account', object: chart({ service_account_name: 'web' }), manifestServiceAccount: undefined, policies: [], tenancy: lockdown, refused: undefined },
    { case: 'a Deployer in its own namespace', object: deployer('team-a'), manifestServiceAccount: undefined, policies: [], tenancy: open, refused: undefined },
    { case: 'a Deployer into another namespace', object: deployer('kube-system'), manifestServiceAccount: undefined, policies: [], tenancy: open, refused: 'namespace boundary' },
  ])('$case: $refused', ({ object, manifestServiceAccount, policies, tenancy, refused }) => {
    const refusal = policyRefusal(object, manifestServiceAccount, policies, tenancy);
    if (refused === undefined) expect(refusal).toBeUndefined();
    else expect(refusal).toContain(refused);
  });
});

describe('decideLeftover: what a manifest does about the unprefixed release its chart web installed on its own', () => {
  const chart = { namespace: 'team-a', name: 'web' };
  const groupRuns = ['ArmadaChartGroup:team-a/apps'];
  /** The release's latest run: by default a deploy web's own standalone run started with generation 3. */
  const release = (status: string, extra: Partial<ReleaseRun> = {}): ReleaseRun => ({
    memo: { specs: 'ArmadaChart/web@3', mode: 'deploy' },
    status,
    object: { kind: 'ArmadaChart', namespace: 'team-a', name: 'web' },
    ...extra,
  });
  const uninstall = { specs: 'ArmadaChart/web@3', mode: 'uninstall' as const };

  // prettier-ignore
  it.each<{ case: string; run: ReleaseRun; decision: LeftoverDecision }>([
    { case: 'a deploy of its own still running', run: release('RUNNING'), decision: { do: 'cancel' } },
    { case: 'a deploy of its own that completed', run: release('COMPLETED'), decision: { do: 'uninstall' } },
    { case: 'a deploy of its own that failed', run: release('FAILED'), decision: { do: 'uninstall' } },
    { case: 'a deploy of its own that was cancelled', run: release('CANCELED'), decision: { do: 'uninstall' } },
    { case: 'a deploy a standalone run of its group started', run: release('COMPLETED', { parent: groupRuns[0], object: {} }), decision: { do: 'uninstall' } },
    { case: 'a deploy another group’s run started', run: release('COMPLETED', { parent: 'ArmadaChartGroup:team-a/other', object: {} }), decision: { do: 'none', why: 'not its own' } },
    { case: 'a deploy that names no generation of web (armadactl, another chart)', run: release('COMPLETED', { memo: { specs: 'ArmadaChart/api@1', mode: 'deploy' } }), decision: { do: 'none', why: 'not its own' } },
    { case: 'a deploy for another namespace’s web', run: release('COMPLETED', { object: { kind: 'ArmadaChart', namespace: 'team-b', name: 'web' } }), decision: { do: 'none', why: 'not its own' } },
    { case: 'a deploy a manifest started (ArmadaKind ArmadaManifest)', run: release('COMPLETED', { object: { kind: 'ArmadaManifest', namespace: 'team-a', name: 'web' } }), decision: { do: 'none', why: 'not its own' } },
    { case: 'its uninstall still running', run: release('RUNNING', { memo: uninstall }), decision: { do: 'follow' } },
    { case: 'its uninstall completed', run: release('COMPLETED', { memo: uninstall }), decision: { do: 'none', why: 'uninstalled' } },
    { case: 'its uninstall failed', run: release('FAILED', { memo: uninstall }), decision: { do: 'retry', ranWith: 3 } },
    { case: 'its uninstall timed out', run: release('TIMED_OUT', { memo: uninstall }), decision: { do: 'retry', ranWith: 3 } },
  ])('$case', ({ run, decision }) => {
    expect(decideLeftover(chart, groupRuns, run)).toEqual(decision);
  });
});

describe('decideUninstall: what the bridge does about the run of an object being deleted', () => {
  const deploy: RunMemo = { specs: 'ArmadaChart/web@3', mode: 'deploy' };
  const uninstall: RunMemo = { ...deploy, mode: 'uninstall' };
  const latest = (status: string, memo: RunMemo) => ({ running: status === 'RUNNING', status, memo });

  // prettier-ignore
  it.each<{ case: string; latest: ReturnType<typeof latest> | null; decision: UninstallDecision }>([
    { case: 'no run ever', latest: null, decision: { do: 'start' } },
    { case: 'a deploy running (paused too)', latest: latest('RUNNING', deploy), decision: { do: 'cancel' } },
    { case: 'a deploy that completed', latest: latest('COMPLETED', deploy), decision: { do: 'start' } },
    { case: 'a deploy that failed', latest: latest('FAILED', deploy), decision: { do: 'start' } },
    { case: 'a deploy that was cancelled (by the bridge, for this deletion)', latest: latest('CANCELED', deploy), decision: { do: 'start' } },
    { case: 'the uninstall running', latest: latest('RUNNING', uninstall), decision: { do: 'follow' } },
    { case: 'the uninstall completed', latest: latest('COMPLETED', uninstall), decision: { do: 'done' } },
    { case: 'the uninstall failed', latest: latest('FAILED', uninstall), decision: { do: 'start', failed: 'FAILED' } },
    { case: 'the uninstall terminated', latest: latest('TERMINATED', uninstall), decision: { do: 'start', failed: 'TERMINATED' } },
  ])('$case', ({ latest: run, decision }) => {
    expect(decideUninstall(run)).toEqual(decision);
  });
});
