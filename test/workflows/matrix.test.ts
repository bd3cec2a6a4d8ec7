import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { toolPath } from '../../activities/tools';
import type * as activities from '../../activities';
import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { armadaManifestSpec } from '../../api/manifest';
import { deployerSpec } from '../../api/deployer';
import { ControlRefused, control, firstRunning, type ControlCommand } from '../../runs/control';
import { placeOf, routeOf, type ObjectPlace, type Verb } from '../../runs/targets';
import { chartRun, startRun } from '../../runs/requests';
import { canaryWorkflow, deployerWorkflow, groupWorkflow, manifestWorkflow } from '../../workflows';
import { progressQuery } from '../../workflows/messages';
import type { Progress } from '../../core/progress';
import { canarySteps } from '../../core/plan/canary';
import { planGroup, planManifest } from '../../core/plan/manifest';
import { sharedWorker, uniqueName } from '../helpers/env';
import { eventually } from '../helpers/processes';
import { fakeHelm } from './fake-helm';

/**
 * Every kind × every verb on the real dev server, through the path armadactl and the bridge's
 * action annotation share (routeOf, then control()), and through the Temporal CLI: each cell is
 * either done (the run's answer) or refused with its reason; none is a silent no-op. Helm is
 * stubbed; the runs are the real workflows, held where an operator meets them (a manifest at its
 * gate, a group and a chart in a Helm call, a canary at its approval step, a Deployer in a hold).
 */
const fake = fakeHelm();
const kube: Partial<typeof activities> = {
  async scaleDeployment(req) {
    return req.replicas;
  },
  async waitForResources() {
    return { resources: [], summary: 'ready' };
  },
  async deleteDeployments() {},
  async observeOwnedDeployments() {
    return [{ deployment: 'nginx-1.25', version: '1.25', replicas: 4 }];
  },
  async createDeployerDeployment(req) {
    return `${req.name}-${req.version}`;
  },
};
const harness = sharedWorker({ activities: { ...fake.activities, ...kube } });

const ns = uniqueName('matrix');
const releases = uniqueName('rel');
const chart = (release: string, canary = false) =>
  armadaChartSpec.parse({
    release,
    namespace: releases,
    source: { type: 'local', location: 'x' },
    ...(canary && { canary: { steps: [{ percent: 20, approval: true }] } }),
  });
const specs = {
  web: chart('web', true),
  db: chart('db'),
  cache: chart('cache'),
  lone: chart('lone'),
  shop: chart('shop', true),
};
const listings = {
  manifests: [{ name: 'demo', spec: { chart_groups: ['platform', 'apps'], release_prefix: 'demo' } }],
  groups: [
    { name: 'platform', spec: { chart_group: ['db'] } },
    { name: 'apps', spec: { chart_group: ['web'] } },
    { name: 'solo', spec: { chart_group: ['cache'] } },
  ],
};
const place = (kind: ObjectPlace['kind'], name: string): ObjectPlace =>
  placeOf(kind, ns, name, specs[name as keyof typeof specs] ?? {}, listings);

/** Starts each object's run where routeOf looks for it, and holds it where an operator meets it. */
async function startRuns(client: Client, taskQueue: string): Promise<void> {
  const startManifest = (name: string) =>
    client.workflow.start(manifestWorkflow, {
      taskQueue,
      workflowId: `ArmadaManifest:${ns}/${name}`,
      args: [
        {
          plan: planManifest({
            namespace: ns,
            manifest: {
              name: 'demo',
              spec: armadaManifestSpec.parse({
                release_prefix: name,
                chart_groups: ['platform', 'apps'],
                approval: { before: ['apps'] },
              }),
            },
            groups: {
              platform: armadaChartGroupSpec.parse({ chart_group: ['db'] }),
              apps: armadaChartGroupSpec.parse({ chart_group: ['web'] }),
            },
            charts: { db: specs.db, web: specs.web },
          }),
        },
      ],
    });
  for (const manifest of [await startManifest('demo'), await startManifest('cli')])
    await eventually('the manifest at its gate', async () =>
      (await manifest.query(progressQuery)).gate ? true : undefined,
    );
  fake.close(); // from here on, helm holds every write
  await client.workflow.start(groupWorkflow, {
    taskQueue,
    workflowId: `ArmadaChartGroup:${ns}/solo`,
    args: [
      {
        namespace: ns,
        group: planGroup({
          namespace: ns,
          name: 'solo',
          spec: armadaChartGroupSpec.parse({ chart_group: ['cache'] }),
          charts: { cache: specs.cache },
        }),
      },
    ],
  });
  // A chart on its own runs as this build starts it: deployRun over its plan of one.
  await startRun(
    client,
    taskQueue,
    chartRun({ kind: 'ArmadaChart', name: 'lone', namespace: ns, spec: specs.lone }),
  );
  await client.workflow.start(canaryWorkflow, {
    taskQueue,
    workflowId: `ArmadaChart:${ns}/shop/canary`,
    args: [
      {
        title: 'shop',
        namespace: releases,
        pairs: [{ canary: 'shop-canary', stable: 'shop', replicas: 4, stableReplicas: 4 }],
        steps: canarySteps([{ percent: 20, approval: true }]),
      },
    ],
  });
  const deployer = await client.workflow.start(deployerWorkflow, {
    taskQueue,
    workflowId: `Deployer:${ns}/nginx`,
    args: [
      {
        name: 'nginx',
        namespace: ns,
        spec: deployerSpec.parse({
          type: 'canary',
          deployment: { name: 'nginx', namespace: releases, image: 'nginx', version: '1.26', replicas: 4 },
          steps: [{ percent: 50, sleep: '1h' }],
        }),
      },
    ],
  });
  await eventually('the Deployer holding', async () =>
    ((await deployer.query(progressQuery)) as unknown as { waitingOn?: string }).waitingOn === 'hold'
      ? true
      : undefined,
  );
}

/** One cell: what the verb did (the run's answer, or what the progress query says) or why it was refused. */
async function cell(client: Client, p: ObjectPlace, verb: Verb, gate?: string): Promise<string> {
  const route = routeOf(p, verb);
  try {
    if (verb === 'progress') {
      if ('refused' in route) return `refused: ${route.refused}`;
      const id = await firstRunning(client, route.workflowIds, verb);
      const progress = (await client.workflow.getHandle(id).query(progressQuery)) as Progress & {
        kind?: string;
      };
      return `${id} answers ${progress.phase}`;
    }
    const done = await control(client, route, verb as ControlCommand, { by: 'matrix', gate });
    return `${done.workflowId}: ${done.answer}`;
  } catch (err) {
    if (err instanceof ControlRefused) return `refused: ${err.message}`;
    throw err;
  }
}

/** Rows in the order they run: a verb that ends a run (approve, promote, rollback) comes last for it. */
const rows: [string, () => ObjectPlace, Verb, RegExp, string?][] = [
  // a manifest at its gate
  ['manifest', () => place('ArmadaManifest', 'demo'), 'progress', /answers WaitingApproval$/],
  ['manifest', () => place('ArmadaManifest', 'demo'), 'pause', /: pausing at the next safe point$/],
  [
    'manifest',
    () => place('ArmadaManifest', 'demo'),
    'pause',
    /^refused: pause refused by .*: paused already since/,
  ],
  ['manifest', () => place('ArmadaManifest', 'demo'), 'resume', /: resumed$/],
  [
    'manifest',
    () => place('ArmadaManifest', 'demo'),
    'resume',
    /^refused: resume refused by .*: it is not paused$/,
  ],
  [
    'manifest',
    () => place('ArmadaManifest', 'demo'),
    'promote',
    /^refused: promote refused by .*: promote steers a canary/,
  ],
  // its groups and charts, steered through it
  [
    'group in a manifest',
    () => place('ArmadaChartGroup', 'platform'),
    'progress',
    /^ArmadaManifest:.* answers/,
  ],
  [
    'group in a manifest',
    () => place('ArmadaChartGroup', 'platform'),
    'approve',
    /^refused: approve refused by ArmadaManifest:.*: the gate waiting is "before group apps", not "before group platform"$/,
  ],
  [
    'group in a manifest',
    () => place('ArmadaChartGroup', 'platform'),
    'promote',
    /^refused: .*promote steers a canary/,
  ],
  // named as the message's target (the old build's manifestWorkflow takes it as its own), as a whole
  [
    'chart in a manifest',
    () => place('ArmadaChart', 'db'),
    'pause',
    /^ArmadaManifest:.*: pausing at the next safe point; ArmadaChart .*\/db has no canary running: ArmadaManifest:.* takes the pause as a whole, for every chart it deploys$/,
  ],
  [
    'chart in a manifest',
    () => place('ArmadaChart', 'db'),
    'resume',
    /^ArmadaManifest:.*: resumed; ArmadaChart .*\/db has no canary running: ArmadaManifest:.* takes the resume as a whole/,
  ],
  [
    'chart in a manifest',
    () => place('ArmadaChart', 'db'),
    'approve',
    /^refused: ArmadaChart .*\/db has no canary steps: nothing to approve$/,
  ],
  [
    'chart in a manifest',
    () => place('ArmadaChart', 'db'),
    'promote',
    /^refused: ArmadaChart .*\/db has no canary steps: nothing to promote$/,
  ],
  [
    'canary chart in a manifest, canary not started',
    () => place('ArmadaChart', 'web'),
    'approve',
    /^refused: nothing to approve: ArmadaChart:.*\/web\/canary has never run$/,
  ],
  [
    'canary chart in a manifest, canary not started',
    () => place('ArmadaChart', 'web'),
    'progress',
    /^ArmadaManifest:.* answers/,
  ],
  [
    'group in a manifest',
    () => place('ArmadaChartGroup', 'apps'),
    'approve',
    /^ArmadaManifest:.*: approved before group apps$/,
  ],
  [
    'manifest',
    () => place('ArmadaManifest', 'demo'),
    'approve',
    /^refused: approve refused by .*: no approval gate is waiting/,
  ],
  ['manifest', () => place('ArmadaManifest', 'demo'), 'rollback', /: rolling back/],
  // a group on its own, holding in helm
  [
    'group on its own',
    () => place('ArmadaChartGroup', 'solo'),
    'progress',
    /^ArmadaChartGroup:.* answers running$/,
  ],
  ['group on its own', () => place('ArmadaChartGroup', 'solo'), 'pause', /: pausing/],
  ['group on its own', () => place('ArmadaChartGroup', 'solo'), 'resume', /: resumed$/],
  [
    'group on its own',
    () => place('ArmadaChartGroup', 'solo'),
    'approve',
    /^refused: .*a group has no approval gates/,
  ],
  [
    'group on its own',
    () => place('ArmadaChartGroup', 'solo'),
    'promote',
    /^refused: .*promote steers a canary/,
  ],
  [
    'chart of a group on its own',
    () => place('ArmadaChart', 'cache'),
    'pause',
    /^ArmadaChartGroup:.*\/solo: pausing/,
  ],
  [
    'chart of a group on its own',
    () => place('ArmadaChart', 'cache'),
    'resume',
    /^ArmadaChartGroup:.*\/solo: resumed$/,
  ],
  ['group on its own', () => place('ArmadaChartGroup', 'solo'), 'rollback', /: rolling back/],
  // a chart on its own, holding in helm
  [
    'chart on its own',
    () => place('ArmadaChart', 'lone'),
    'progress',
    /^ArmadaChart:.*\/lone answers Running$/,
  ],
  ['chart on its own', () => place('ArmadaChart', 'lone'), 'pause', /^ArmadaChart:.*\/lone: pausing/],
  ['chart on its own', () => place('ArmadaChart', 'lone'), 'resume', /: resumed$/],
  [
    'chart on its own',
    () => place('ArmadaChart', 'lone'),
    'approve',
    /^refused: .*has no canary steps: nothing to approve$/,
  ],
  [
    'chart on its own',
    () => place('ArmadaChart', 'lone'),
    'promote',
    /^refused: .*has no canary steps: nothing to promote$/,
  ],
  ['chart on its own', () => place('ArmadaChart', 'lone'), 'rollback', /: rolling back/],
  // a chart's canary at its approval step
  [
    'canary chart',
    () => place('ArmadaChart', 'shop'),
    'progress',
    /^ArmadaChart:.*\/shop\/canary answers Progressing$/,
  ],
  ['canary chart', () => place('ArmadaChart', 'shop'), 'pause', /\/canary: pausing/],
  ['canary chart', () => place('ArmadaChart', 'shop'), 'resume', /\/canary: resumed$/],
  [
    'canary chart',
    () => place('ArmadaChart', 'shop'),
    'approve',
    /^refused: .*the gate waiting is "step 1 \(20 %\)", not "step 2 \(100 %\)"$/,
    'step 2 (100 %)',
  ],
  [
    'canary chart',
    () => place('ArmadaChart', 'shop'),
    'approve',
    /\/canary: approved step 1 \(20 %\)$/,
    'step 1 (20 %)',
  ],
  // a Deployer in a timed hold
  ['Deployer', () => place('Deployer', 'nginx'), 'progress', /^Deployer:.* answers Progressing$/],
  ['Deployer', () => place('Deployer', 'nginx'), 'pause', /: pausing/],
  ['Deployer', () => place('Deployer', 'nginx'), 'resume', /: resumed$/],
  ['Deployer', () => place('Deployer', 'nginx'), 'approve', /^refused: .*no approval gate is waiting/],
  ['Deployer', () => place('Deployer', 'nginx'), 'promote', /: promoting: the remaining steps are skipped$/],
  ['Deployer', () => place('Deployer', 'nginx'), 'promote', /^refused: /],
];

describe('run control matrix: every kind × every verb (real dev server, stubbed helm)', () => {
  beforeAll(() => startRuns(harness().client, harness().taskQueue));

  it.each(rows.map(([what, p, verb, expected, gate], i) => [i + 1, what, verb, p, expected, gate] as const))(
    '%i: %s, %s',
    async (_i, _what, verb, p, expected, gate) => {
      expect(await cell(harness().client, p(), verb, gate)).toMatch(expected);
    },
  );

  it('the Temporal CLI reaches the same handlers: a refused signal is listed, an Update answers', async () => {
    const workflowId = `ArmadaManifest:${ns}/cli`;
    const temporal = (...args: string[]) =>
      promisify(execFile)(toolPath('temporal'), [
        'workflow',
        ...args,
        '--workflow-id',
        workflowId,
        '--address',
        process.env.TEMPORAL_ADDRESS!,
      ]);
    await temporal('signal', '--name', 'approve', '--input', '{"by":"cli","gate":"before group platform"}');
    const manifest = harness().client.workflow.getHandle(workflowId);
    const refused = await eventually(
      'the signal listed as refused',
      async () => (await manifest.query(progressQuery)).refused?.[0],
    );
    expect(refused).toMatchObject({
      verb: 'approve',
      by: 'cli',
      why: expect.stringMatching(/not "before group platform"/),
    });
    const { stdout } = await temporal(
      'update',
      'execute',
      '--name',
      'approve',
      '--input',
      '{"by":"cli","gate":"before group apps"}',
    );
    expect(stdout).toContain('approved before group apps');
    expect((await manifest.query(progressQuery)).approvals).toEqual([
      expect.objectContaining({ by: 'cli', gate: 'before group apps' }),
    ]);
    fake.open(); // let every held helm call finish, so the runs end
  });
});
