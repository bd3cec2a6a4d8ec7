import { armadaChartSpec, type ArmadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { armadaManifestSpec } from '../../api/manifest';
import { deployerSpec, type DeployerSpec } from '../../api/deployer';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { formatProblem, validateFiles } from '../../cli/validate';
import {
  holdingBack,
  lockstepMembers,
  lockstepView,
  releasedStep,
  takeReport,
  type MemberReport,
  type MemberState,
} from '../../core/plan/lockstep';
import { planGroup, planManifest, PlanError } from '../../core/plan/manifest';

const chart = (release: string, percents?: number[]): ArmadaChartSpec =>
  armadaChartSpec.parse({
    release,
    namespace: 'apps',
    source: { type: 'local', location: `charts/${release}` },
    ...(percents && { canary: { steps: percents.map((percent) => ({ percent, sleep: '1s' })) } }),
  });

const deployer = (name: string, percents: number[]): DeployerSpec =>
  deployerSpec.parse({
    type: 'canary',
    deployment: { name, namespace: 'apps', image: `registry.test/${name}`, version: 'v1', replicas: 2 },
    steps: percents.map((percent) => ({ percent, sleep: '1s' })),
  });

const group = (
  spec: object,
  charts: Record<string, ArmadaChartSpec>,
  deployers?: Record<string, DeployerSpec>,
) =>
  planGroup({
    namespace: 'default',
    name: 'apps',
    spec: armadaChartGroupSpec.parse(spec),
    charts,
    ...(deployers && { deployers }),
  });

function problemOf(plan: () => unknown): string {
  try {
    plan();
  } catch (err) {
    if (err instanceof PlanError) return err.message;
    throw err;
  }
  throw new Error('planned without a problem');
}

describe('canary_lockstep in plans', () => {
  it('marks a group with canary_lockstep, and leaves a group without it unmarked', () => {
    const charts = { web: chart('web', [10, 50]), api: chart('api', [10, 50]), db: chart('db') };
    expect(group({ chart_group: ['web', 'api', 'db'], canary_lockstep: true }, charts).lockstep).toBe(true);
    expect('lockstep' in group({ chart_group: ['web', 'api', 'db'] }, charts)).toBe(false);
  });

  it('refuses members whose step percentages differ, naming each member and its steps', () => {
    const charts = { web: chart('web', [10, 50]), api: chart('api', [20]), db: chart('db') };
    expect(problemOf(() => group({ chart_group: ['web', 'api', 'db'], canary_lockstep: true }, charts))).toBe(
      "ArmadaChartGroup apps: canary_lockstep members' step percentages differ: web [10, 50, 100], api [20, 100]",
    );
  });

  it('takes an explicit final 100 % as the implied one', () => {
    const charts = { web: chart('web', [10, 100]), api: chart('api', [10]) };
    expect(group({ chart_group: ['web', 'api'], canary_lockstep: true }, charts).lockstep).toBe(true);
  });

  it('refuses a sequenced group with two canary charts: the first would wait for the second forever', () => {
    const charts = { web: chart('web', [10]), api: chart('api', [10]) };
    expect(
      problemOf(() => group({ chart_group: ['web', 'api'], sequenced: true, canary_lockstep: true }, charts)),
    ).toMatch(/^ArmadaChartGroup apps: canary_lockstep needs sequenced: false; its members web, api/);
  });

  it("applies a manifest's canary_lockstep to each of its groups, checked group by group", () => {
    const docs = (charts: Record<string, ArmadaChartSpec>) => ({
      namespace: 'default',
      manifest: {
        name: 'm',
        spec: armadaManifestSpec.parse({
          release_prefix: 'm',
          chart_groups: ['one', 'two'],
          canary_lockstep: true,
        }),
      },
      groups: {
        one: armadaChartGroupSpec.parse({ chart_group: ['web', 'api'] }),
        two: armadaChartGroupSpec.parse({ chart_group: ['db'] }),
      },
      charts,
    });
    // Groups deploy one after another, so db's steps need not match web's.
    const plan = planManifest(
      docs({ web: chart('web', [10]), api: chart('api', [10]), db: chart('db', [50]) }),
    );
    expect(plan.groups.map((g) => g.lockstep)).toEqual([true, true]);
    expect(
      problemOf(() =>
        planManifest(docs({ web: chart('web', [10]), api: chart('api', [30]), db: chart('db') })),
      ),
    ).toMatch(
      /^ArmadaChartGroup one: canary_lockstep members' step percentages differ: web \[10, 100\], api \[30, 100\]/,
    );
  });

  it("names Deployers Deployer/<name> and refuses one whose steps differ from the charts'", () => {
    const charts = { web: chart('web', [10, 50]), api: chart('api', [10, 50]) };
    expect(
      problemOf(() =>
        group({ chart_group: ['web', 'api'], deployers: ['api'], canary_lockstep: true }, charts, {
          api: deployer('api', [20]),
        }),
      ),
    ).toBe(
      "ArmadaChartGroup apps: canary_lockstep members' step percentages differ: web [10, 50, 100], api [10, 50, 100], Deployer/api [20, 100]",
    );
  });

  it('counts Deployers as members of a sequenced set', () => {
    expect(
      problemOf(() =>
        group(
          { chart_group: ['web'], deployers: ['api'], sequenced: true, canary_lockstep: true },
          {
            web: chart('web', [10]),
          },
          { api: deployer('api', [10]) },
        ),
      ),
    ).toMatch(
      /^ArmadaChartGroup apps: canary_lockstep needs sequenced: false; its members web, Deployer\/api step/,
    );
  });

  it('signals a chart member at its canary workflow and a Deployer member at its own run', () => {
    const plan = group(
      { chart_group: ['web', 'db'], deployers: ['web'], canary_lockstep: true },
      { web: chart('web', [10]), db: chart('db') },
      { web: deployer('web', [10]) },
    );
    expect(lockstepMembers(plan, 'shop')).toEqual([
      { member: 'web', workflowId: 'ArmadaChart:shop/web/canary' },
      { member: 'Deployer/web', workflowId: 'Deployer:default/web' },
    ]);
  });

  it('is refused by the schema when not a boolean', () => {
    expect(armadaChartGroupSpec.safeParse({ chart_group: ['web'], canary_lockstep: 'yes' }).success).toBe(
      false,
    );
  });
});

const report = (member: string, seq: number, more: Partial<MemberReport> = {}): MemberReport => ({
  member,
  seq,
  phase: 'Progressing',
  step: 1,
  steps: 3,
  percent: 10,
  ...more,
});

describe('the coordinator’s step arithmetic', () => {
  const members = (entries: [string, Partial<MemberState>][]) =>
    new Map<string, MemberState>(entries.map(([name, m]) => [name, { passedBefore: -1, ...m }]));

  it('releases the lowest step every member still in the set has reached', () => {
    // web is ready for index 2, api for 1: both may run index 1; web waits on api to start index 2.
    const set = members([
      ['web', { passedBefore: 2 }],
      ['api', { passedBefore: 1 }],
    ]);
    expect(releasedStep(set)).toBe(1);
    expect(holdingBack(set, 2)).toEqual(['api']);
  });

  it('holds every member while one has not reported, and ignores members whose chart run ended', () => {
    expect(
      releasedStep(
        members([
          ['web', { passedBefore: 2 }],
          ['api', {}],
        ]),
      ),
    ).toBe(-1);
    expect(
      releasedStep(
        members([
          ['web', { passedBefore: 2 }],
          ['api', { ended: 'deployed' }],
        ]),
      ),
    ).toBe(2);
  });

  it('keeps the newest report, and the highest step a member was ready for', () => {
    const state: MemberState = { passedBefore: -1 };
    expect(takeReport(state, report('web', 5, { readyFor: 1 }))).toBe(true);
    expect(takeReport(state, report('web', 4, { readyFor: 0, step: 0 }))).toBe(false);
    expect(takeReport(state, report('web', 6, { step: 2 }))).toBe(true);
    expect(state).toMatchObject({ passedBefore: 1, report: { seq: 6, step: 2 } });
  });

  it('shows the set as one table, a member ahead waiting on the ones behind', () => {
    const set = members([
      ['web', { passedBefore: 2 }],
      ['api', { passedBefore: 1 }],
      ['db', {}],
    ]);
    set.get('web')!.report = report('web', 3, {
      step: 2,
      percent: 50,
      readyFor: 2,
      waitingOn: 'the lockstep set',
    });
    set.get('api')!.report = report('api', 2, { step: 2, percent: 50, waitingOn: 'hold' });
    const view = lockstepView('apps', set);
    expect(view.columns).toEqual(['member', 'step', 'percent', 'state', 'waiting on']);
    expect(view.rows.map((r) => r.cells)).toEqual([
      ['web', '2/3', '50 %', 'Progressing', 'api, db to pass step 2'],
      ['api', '2/3', '50 %', 'Progressing', 'hold'],
      ['db', '', '', 'not started', ''],
    ]);
  });
});

describe('armadactl validate checks the lockstep sets the files hold', () => {
  const object = (kind: string, name: string, spec: object) => ({
    apiVersion: 'armada.airshipit.org/v1alpha1',
    kind,
    metadata: { name },
    spec,
  });
  const canaryChart = (name: string, percents: number[]) =>
    object('ArmadaChart', name, {
      release: name,
      namespace: 'apps',
      source: { type: 'local', location: `charts/${name}` },
      canary: { steps: percents.map((percent) => ({ percent })) },
    });
  const validate = async (docs: object[]) => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'lockstep-')), 'shop.yaml');
    await writeFile(file, docs.map((d) => JSON.stringify(d)).join('\n---\n'));
    return (await validateFiles([file])).problems.map((p) => formatProblem({ ...p, file: 'shop.yaml' }));
  };

  it("names the group, its members and their steps when a manifest's lockstep set disagrees", async () => {
    expect(
      await validate([
        object('ArmadaManifest', 'm', { release_prefix: 'm', chart_groups: ['shop'], canary_lockstep: true }),
        object('ArmadaChartGroup', 'shop', { chart_group: ['web', 'api'] }),
        canaryChart('web', [10, 50]),
        canaryChart('api', [20]),
      ]),
    ).toEqual([
      "shop.yaml:2 ArmadaChartGroup/shop: ArmadaChartGroup shop: canary_lockstep members' step percentages differ: web [10, 50, 100], api [20, 100]",
    ]);
  });

  it('names a Deployer of the set whose steps differ, as Deployer/<name>', async () => {
    expect(
      await validate([
        object('ArmadaChartGroup', 'shop', {
          chart_group: ['web'],
          deployers: ['api'],
          canary_lockstep: true,
        }),
        canaryChart('web', [10, 50]),
        object('Deployer', 'api', {
          type: 'canary',
          deployment: {
            name: 'api',
            namespace: 'apps',
            image: 'registry.test/api',
            version: 'v2',
            replicas: 2,
          },
          steps: [{ percent: 20 }],
        }),
      ]),
    ).toEqual([
      "shop.yaml:1 ArmadaChartGroup/shop: ArmadaChartGroup shop: canary_lockstep members' step percentages differ: web [10, 50, 100], Deployer/api [20, 100]",
    ]);
  });

  it('passes a set whose steps agree, and a group without canary_lockstep', async () => {
    const charts = [canaryChart('web', [10]), canaryChart('api', [20])];
    expect(
      await validate([object('ArmadaChartGroup', 'shop', { chart_group: ['web', 'api'] }), ...charts]),
    ).toEqual([]);
    expect(
      await validate([
        object('ArmadaChartGroup', 'shop', { chart_group: ['web', 'api'], canary_lockstep: true }),
        canaryChart('web', [10]),
        canaryChart('api', [10]),
      ]),
    ).toEqual([]);
  });
});
