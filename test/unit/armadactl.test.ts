import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { parseAllDocuments } from 'yaml';
import { hostPort } from '../../runs/connect';
import { formatHistory, historyQuery, outcomeOf, type RunRecord } from '../../cli/history';
import { isUsageError, main } from '../../cli/main';
import { formatProgress } from '../../runs/progress';
import { resolveTarget, targetWorkflowId } from '../../runs/targets';
import { changedLines, describeOutcome, frame, watchLines } from '../../cli/watch';
import { listItems } from '../../cli/validate';
import type { ChartState, Progress } from '../../core/progress';
import { canaryAtStep2 } from '../helpers/canary-progress';
import { uniqueName } from '../helpers/env';

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    (line: string) => out.push(line),
    (line: string) => err.push(line),
  );
  return { code, out, err };
}

async function file(name: string, text: string): Promise<string> {
  const full = path.join(await mkdtemp(path.join(tmpdir(), 'armadactl-')), name);
  await writeFile(full, text);
  return full;
}

const validChart = `apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChart
metadata: {name: web}
spec: {release: web, namespace: apps, source: {type: local, location: charts/web}}
`;

describe('isUsageError', () => {
  it("takes parseArgs' errors for the caller's, and a gRPC error (a numeric code) for the run's", async () => {
    const { code, err } = await run('status', '--no-such-option');
    expect(code).toBe(2);
    expect(err[0]).toMatch(/^armadactl status: Unknown option '--no-such-option'/);
    // A query of a run with no progress handler fails with INVALID_ARGUMENT, code 3: it crashed
    // the error handling (`code.startsWith` of a number) before.
    expect(isUsageError(Object.assign(new Error('no handler for progress'), { code: 3 }))).toBe(false);
    expect(isUsageError(null)).toBe(false);
  });
});

describe('armadactl validate', () => {
  it('accepts every example and exits 0', async () => {
    const { code, out } = await run('validate', '-f', path.resolve(__dirname, '../../examples'));
    expect(out.at(-1)).toBe('18 valid, 0 invalid');
    expect(code).toBe(0);
  });

  it('prints file:doc kind/name: path: reason for each problem of a multi-document file and exits 1', async () => {
    const bad = validChart.replace('release: web', 'release: Web').replace('name: web', 'name: web2');
    const f = await file(
      'two.yaml',
      `${validChart}---\n${bad}---\napiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n`,
    );
    const { code, out } = await run('validate', '-f', f);
    expect(out).toEqual([
      `${f}:2 ArmadaChart/web2: spec.release: a Helm release name must be lower case letters, digits and '-', starting and ending with a letter or digit`,
      '1 valid, 1 invalid, 1 skipped (not armada.airshipit.org)',
    ]);
    expect(code).toBe(1);
  });

  it('reports YAML syntax errors with their document', async () => {
    const f = await file('broken.yaml', 'kind: [unclosed\n');
    const { code, out } = await run('validate', '-f', f);
    expect(out[0]).toMatch(new RegExp(`^${f}:1 \\?: not valid YAML: `));
    expect(code).toBe(1);
  });

  it('says how to use it when -f is missing, and exits 2', async () => {
    const { code, err } = await run('validate');
    expect(err[0]).toContain('name at least one file or directory with -f');
    expect(code).toBe(2);
  });

  it('names a missing file', async () => {
    const { code, err } = await run('validate', '-f', '/nonexistent/x.yaml');
    expect(err[0]).toContain('/nonexistent/x.yaml');
    expect(code).toBe(2);
  });
});

describe('armadactl', () => {
  it('refuses an unknown command with the usage', async () => {
    const { code, err } = await run('deploy');
    expect(err[0]).toMatch(/unknown command "deploy"[\s\S]*armadactl validate/);
    expect(code).toBe(2);
  });
});

describe('armadactl targets and canary status', () => {
  it.each([
    ['demo', 'ArmadaManifest:ops/demo'],
    ['amf/demo', 'ArmadaManifest:ops/demo'],
    ['ArmadaManifest/demo', 'ArmadaManifest:ops/demo'],
    ['dpl/nginx', 'Deployer:ops/nginx'],
    ['deployers/nginx', 'Deployer:ops/nginx'],
    ['act/shop', 'ArmadaChart:ops/shop/canary'],
    ['armadachart/shop', 'ArmadaChart:ops/shop/canary'],
    ['acg/platform', 'ArmadaChartGroup:ops/platform'],
  ])('%s → workflow %s', (target, workflowId) => {
    expect(targetWorkflowId(target, 'ops')).toBe(workflowId);
  });

  it('refuses an unknown kind with what to name instead', () => {
    expect(() => targetWorkflowId('pod/x', 'ops')).toThrow(
      /unknown kind "pod" in pod\/x; use amf\/NAME, acg\/NAME, act\/NAME or dpl\/NAME/,
    );
  });

  it('prints a canary as its step and one line per step with split and times', () => {
    const lines = formatProgress({
      ...canaryAtStep2,
      paused: { by: 'ops', reason: 'dashboards', since: '2026-11-22T07:40:00.000Z', remainingSeconds: 20 },
    });
    expect(lines).toEqual([
      'blog-2: Paused, step 2/3 at 30 % — waiting on approval — paused by ops (dashboards) since 2026-11-22 07:40:00 UTC, 20s of the hold left',
      '  step  percent  new/old  hold      started   ready     ended',
      '  1     10 %     1/9      1m        07:38:41  07:38:42  07:39:42 held',
      '▶ 2     30 %     3/7      approval  07:39:42',
      '  3     100 %    10/0     -',
    ]);
  });

  it('status of a target without a run says so and how to start one', async () => {
    // A name of its own: the suite's dev server keeps the runs of other files (the getting-started
    // tutorial deploys and deletes group default/platform).
    const group = uniqueName('group');
    const { code, err } = await run('status', `acg/${group}`);
    expect(code).toBe(1);
    expect(err.join('\n')).toContain(
      `no run of ArmadaChartGroup:default/${group}; start one with \`armadactl apply\``,
    );
  });
});

describe('armadactl help and options', () => {
  it.each([
    'validate',
    'apply',
    'convert',
    'status',
    'watch',
    'history',
    'pause',
    'resume',
    'approve',
    'promote',
    'rollback',
  ])('%s --help prints its usage and exits 0', async (command) => {
    const { code, out } = await run(command, '--help');
    expect(out[0]).toMatch(new RegExp(`^armadactl ${command} `));
    expect(code).toBe(0);
  });

  it('--help lists each argument and option with its meaning and default', async () => {
    const { code, out } = await run('delete', '--help');
    expect(out[0]).toMatch(/\nArguments:\n {2}TARGET +an ArmadaManifest NAME/);
    expect(out[0]).toMatch(/\n {2}-w, --wait +follow until the object is gone/);
    expect(out[0]).toMatch(/\n {2}--timeout SECONDS +with --wait: how long to follow \(default 600\)/);
    expect(out[0]).toMatch(/\n {2}-n, --namespace NAMESPACE +namespace of the object .*\(default default\)/);
    expect(out[0]).toMatch(/\n {2}-h, --help +print this help$/);
    expect(code).toBe(0);
  });

  it('import, the former name of convert, prints its usage', async () => {
    const { code, out } = await run('import', '--help');
    expect(out[0]).toMatch(/^armadactl convert -f FILE\|- /);
    expect(code).toBe(0);
  });

  it('lists every command in the overall usage', async () => {
    const { code, out } = await run('--help');
    for (const command of ['watch TARGET', 'history TARGET', 'status TARGET'])
      expect(out[0]).toContain(`armadactl ${command}`);
    expect(code).toBe(0);
  });

  it.each([
    [['status', 'demo', '-o', 'yaml'], '--output must be json or text, not "yaml"'],
    [['import', '-f', 'x.yaml', '-o', 'text'], '--output must be json or yaml, not "text"'],
    [['convert'], 'name the file with -f (- for standard input)'],
    [['history', 'demo', '--limit', '0'], '--limit must be a whole number from 1, not "0"'],
    [['watch'], 'name one run'],
  ])('%j is a usage error: %s', async (argv, message) => {
    const { code, err } = await run(...argv);
    expect(err[0]).toContain(message);
    expect(code).toBe(2);
  });

  it('validate --output json prints counts and located problems', async () => {
    const bad = validChart.replace('release: web', 'release: Web');
    const f = await file('one.yaml', `${validChart}---\n${bad}`);
    const { code, out } = await run('validate', '-f', f, '-o', 'json');
    expect(JSON.parse(out.join('\n'))).toEqual({
      valid: 1,
      invalid: 1,
      skipped: 0,
      problems: [
        { file: f, doc: 2, object: 'ArmadaChart/web', path: 'spec.release', message: expect.any(String) },
      ],
    });
    expect(code).toBe(1);
  });
});

describe('airship Armada documents in validate, convert and apply', () => {
  const examples = path.resolve(__dirname, '../../examples/armada-documents');
  const site = path.join(examples, 'site.yaml');
  /** A v2 Armada chart named web, with `data` lines added (a source line replaces its own). */
  const airshipChart = (...data: string[]) =>
    [
      'schema: armada/Chart/v2',
      'metadata: {schema: metadata/Document/v1, name: web}',
      'data:',
      ...[
        'release: web',
        'namespace: apps',
        ...(data.some((line) => line.startsWith('source:'))
          ? []
          : ['source: {type: local, location: charts/web}']),
        ...data,
      ].map((line) => `  ${line}`),
      '',
    ].join('\n');

  it('validate accepts the example documents, v1, v2 and the operator’s', async () => {
    const { code, out } = await run('validate', '-f', examples);
    expect(out).toEqual(['8 valid, 0 invalid']);
    expect(code).toBe(0);
  });

  it('validate names a refused field as the document wrote it, and what our schemas find at its own path', async () => {
    const f = await file(
      'site.yaml',
      [
        airshipChart('source: {type: git, location: "https://g/c.git", auth_method: token}'),
        airshipChart('wait: {labels: {"-bad": x}, resources: {job: false, deployment: {}}}').replace(
          'web',
          'api',
        ),
        `apiVersion: armada.airshipit.org/v1\nkind: ArmadaChart\nmetadata: {name: ${'x'.repeat(60)}}\ndata: {namespace: apps, source: {location: "https://c/x.tgz"}}\n`,
      ].join('---\n'),
    );
    const { code, out } = await run('validate', '-f', f);
    expect(out).toEqual([
      `${f}:1 armada/Chart/v2 web: data.source.auth_method: not supported: Armada authenticates to git with SSH only, not "token"`,
      // wait.labels go into every wait entry: said once for the defaults, once for the override.
      `${f}:2 armada/Chart/v2 api: data.wait.labels.-bad: "-bad" is not a Kubernetes label key`,
      `${f}:2 armada/Chart/v2 api: data.wait.resources.deployment.labels.-bad: "-bad" is not a Kubernetes label key`,
      `${f}:3 armada.airshipit.org/v1 ArmadaChart ${'x'.repeat(60)}: metadata.name: a Helm release name must be at most 53 characters`,
      '0 valid, 3 invalid',
    ]);
    expect(code).toBe(1);
  });

  it('convert prints the custom resources kubectl apply takes, each after where it came from', async () => {
    const { code, out, err } = await run('convert', '-f', site);
    expect({ code, err }).toEqual({ code: 0, err: ['6 converted'] });
    const text = out.join('\n');
    expect(text.split('\n').filter((l) => l.startsWith('# '))).toEqual([
      `# ${site}:1 armada/Manifest/v1 airship-site`,
      `# ${site}:2 armada/ChartGroup/v2 platform`,
      `# ${site}:3 armada/ChartGroup/v1 apps`,
      `# ${site}:4 armada/Chart/v1 settings`,
      `# ${site}:5 armada/Chart/v2 backend`,
      `# ${site}:6 armada/Chart/v2 web`,
    ]);
    const objects = parseAllDocuments(text).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string } },
    );
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ArmadaManifest/airship-site',
      'ArmadaChartGroup/platform',
      'ArmadaChartGroup/apps',
      'ArmadaChart/settings',
      'ArmadaChart/backend',
      'ArmadaChart/web',
    ]);
    expect(objects[4]).toEqual({
      apiVersion: 'armada.airshipit.org/v1alpha1',
      kind: 'ArmadaChart',
      metadata: { name: 'backend' },
      spec: {
        release: 'backend',
        namespace: 'airship-demo',
        source: { type: 'local', location: 'examples/charts/backend' },
        values: { replicaCount: 2 },
        wait: {
          timeout: 120,
          labels: { 'app.kubernetes.io/instance': 'airship-backend' },
          resources: ['daemonset', 'statefulset', 'deployment', 'pod'].map((type) => ({
            type,
            labels: { 'app.kubernetes.io/instance': 'airship-backend' },
            // The document's min_ready, carried as written: Armada's meaning is ours.
            ...(type === 'deployment' && { min_ready: '100%' }),
          })),
        },
        test: { enabled: true, timeout: 60 },
        upgrade: {
          pre: { delete: [{ type: 'job', labels: { 'app.kubernetes.io/instance': 'airship-backend' } }] },
        },
      },
    });
    // What convert prints is what validate accepts: one reading of the documents.
    const again = await run('validate', '-f', await file('converted.yaml', text));
    expect(again.out).toEqual(['6 valid, 0 invalid']);
  });

  it('convert --output json prints one List; objects already ours pass as written, other kinds are skipped', async () => {
    const f = await file(
      'mixed.yaml',
      `${airshipChart()}---\n${validChart.replace('name: web', 'name: native')}---\napiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n`,
    );
    const { code, out, err } = await run('convert', '-f', f, '-o', 'json');
    expect(code).toBe(0);
    expect(err).toEqual(["2 converted, 1 skipped (not armada's)"]);
    const list = JSON.parse(out.join('\n'));
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(list.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(['web', 'native']);
    expect(list.items[1]).toEqual(
      parseAllDocuments(validChart.replace('name: web', 'name: native'))[0].toJS(),
    );
  });

  it('import, its former name, says when a file has nothing of armada in it, and exits 1', async () => {
    const f = await file('ns.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n');
    const { code, out, err } = await run('import', '-f', f);
    expect({ code, out }).toEqual({ code: 1, out: [] });
    expect(err.at(-1)).toBe(`armadactl import: ${f} has no armada or airship Armada document to convert`);
  });

  it('convert prints the documents it converted, not one it could not carry in full: that one is reported, exit 1', async () => {
    const f = await file(
      'recreate.yaml',
      `${airshipChart('upgrade: {options: {recreate_pods: true}}')}---\n${airshipChart().replace('name: web', 'name: api')}`,
    );
    const { code, out, err } = await run('convert', '-f', f);
    const objects = parseAllDocuments(out.join('\n')).map((d) => d.toJS() as { metadata: object });
    expect(out.join('\n')).toMatch(new RegExp(`^# ${f}:2 armada/Chart/v2 api\n`));
    expect(objects.map((o) => o.metadata)).toEqual([{ name: 'api' }]);
    expect(err).toEqual([
      expect.stringMatching(
        new RegExp(`^${f}:1 armada/Chart/v2 web: data.upgrade.options.recreate_pods: not supported: `),
      ),
      '1 converted, 1 not converted and not printed',
    ]);
    expect(code).toBe(1);
  });

  /** What `kubectl get armadacharts.v1.armada.airshipit.org -A -o yaml` prints of an operator's cluster. */
  const exported = `apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- apiVersion: armada.airshipit.org/v1
  kind: ArmadaChart
  metadata:
    name: web
    namespace: apps
    labels: {team: web}
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"armada.airshipit.org/v1","kind":"ArmadaChart"}'
      example.com/owner: team-web
    uid: 6c1f0d9e-52a8-4d0b-9a57-0b8e2f1f4a10
    resourceVersion: "1043"
    generation: 2
    creationTimestamp: "2026-01-05T10:00:00Z"
    finalizers: [finalizers.armada.airshipit.org]
    managedFields:
    - {manager: kubectl-client-side-apply, operation: Update, apiVersion: armada.airshipit.org/v1, fieldsType: FieldsV1}
  data:
    namespace: apps
    source: {type: tar, location: "https://charts.example.com/hello-0.1.0.tgz"}
    wait: {timeout: 120}
  status: {observedGeneration: 2, helmStatus: deployed, waitCompleted: true}
- apiVersion: armada.airshipit.org/v1
  kind: ArmadaChart
  metadata: {name: api, namespace: apps, uid: 0d0e, resourceVersion: "1044"}
  data:
    namespace: apps
    source: {location: "https://charts.example.com/api-0.1.0.tgz"}
    wait: {resources: [{type: deployment, condition: Available}]}
`;

  /** convert reading `text` from standard input. */
  async function convertStdin(text: string, ...args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(
      ['convert', '-f', '-', ...args],
      (line) => out.push(line),
      (line) => err.push(line),
      undefined,
      Readable.from([text]),
    );
    return { code, out, err };
  }

  it('convert -f - reads an export from standard input: each item of the List, its server metadata dropped', async () => {
    const { code, out, err } = await convertStdin(exported);
    expect(out.join('\n')).toBe(
      [
        '# stdin:1 items[0] armada.airshipit.org/v1 ArmadaChart web',
        'apiVersion: armada.airshipit.org/v1alpha1',
        'kind: ArmadaChart',
        'metadata:',
        '  name: web',
        '  namespace: apps',
        '  labels:',
        '    team: web',
        '  annotations:',
        '    example.com/owner: team-web',
        'spec:',
        '  release: web',
        '  namespace: apps',
        '  source:',
        '    type: tar',
        '    location: https://charts.example.com/hello-0.1.0.tgz',
        '  wait:',
        '    timeout: 120',
      ].join('\n'),
    );
    expect(err).toEqual([
      'stdin:1 items[1] armada.airshipit.org/v1 ArmadaChart api: data.wait.resources[0].condition: not supported: armada-temporal waits for readiness as kubectl rollout status judges it, not for a condition',
      '1 converted, 1 not converted and not printed',
    ]);
    expect(code).toBe(1);
  });

  it('convert --adopt has every ArmadaChart take over the release of its name', async () => {
    const list = exported.slice(0, exported.indexOf('- apiVersion', exported.indexOf('items:') + 10));
    const { code, out } = await convertStdin(list, '--adopt', '-o', 'json');
    expect(code).toBe(0);
    expect(JSON.parse(out.join('\n')).items.map((o: { spec: { adopt?: boolean } }) => o.spec.adopt)).toEqual([
      true,
    ]);
  });

  it('validate reads a List item by item, and names each item it finds wrong', async () => {
    const f = await file('export.yaml', exported);
    const { code, out } = await run('validate', '-f', f);
    expect(out).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${f}:1 items\\[1\\] armada.airshipit.org/v1 ArmadaChart api: data.wait.resources\\[0\\].condition: `,
        ),
      ),
      '1 valid, 1 invalid',
    ]);
    expect(code).toBe(1);
  });

  it('apply refuses a refused document before it reaches Temporal', async () => {
    const f = await file('hooks.yaml', airshipChart('upgrade: {options: {no_hooks: true}}'));
    const { code, out } = await run('apply', '-f', f);
    expect(out).toEqual([
      expect.stringContaining(`${f}:1 armada/Chart/v2 web: data.upgrade.options.no_hooks: not supported: `),
      'not applied: 1 invalid document(s)',
    ]);
    expect(code).toBe(1);
  });
});

describe('hostPort', () => {
  it.each([
    ['localhost:7233', 'localhost', 7233],
    ['temporal.example.com', 'temporal.example.com', 7233],
    ['[::1]:7244', '::1', 7244],
  ])('%s → host %s, port %d', (address, host, port) => {
    expect(hostPort(address)).toEqual({ host, port });
  });
});

/** A manifest's progress: group platform done, apps running with web deploying. */
const manifestProgress = (web: ChartState, api: ChartState = 'pending'): Progress => ({
  phase: 'Running',
  group: 'apps',
  groups: [
    {
      name: 'platform',
      sequenced: true,
      state: 'done',
      charts: [{ chart: 'db', release: 'demo-db', namespace: 'demo', state: 'deployed', revision: 3 }],
    },
    {
      name: 'apps',
      sequenced: false,
      state: 'running',
      charts: [
        { chart: 'web', release: 'demo-web', namespace: 'demo', state: web },
        { chart: 'api', release: 'demo-api', namespace: 'demo', state: api },
      ],
    },
  ],
});

describe('watch lines', () => {
  it('a manifest: the run, its title, one line per group naming each chart past pending', () => {
    expect(
      watchLines({
        runId: '01a202f3-f33e-7201-a373-e361ae6e99a7',
        specs: 'ArmadaManifest/demo@3',
        progress: manifestProgress('deploying'),
      }),
    ).toEqual([
      'run 01a202f3-f33e-7201-a373-e361ae6e99a7: ArmadaManifest/demo@3',
      'Running',
      'group platform: done — db deployed rev 3',
      'group apps: running — web deploying',
    ]);
  });

  it('a paused run waiting on an approval says so on its title line', () => {
    const p = {
      ...manifestProgress('pending'),
      phase: 'WaitingApproval',
      waitingOn: 'approve before group apps',
      paused: { by: 'alice', reason: 'lunch', since: '2026-11-22T07:40:00.000Z' },
    };
    expect(watchLines({ runId: 'r', progress: p })[1]).toBe(
      'Paused — waiting on approve before group apps — paused by alice (lunch) since 2026-11-22 07:40:00 UTC',
    );
  });

  it('a canary: its state, then one line per step that started', () => {
    expect(watchLines({ runId: 'r', progress: canaryAtStep2 })).toEqual([
      'run r',
      'blog-2: Progressing, step 2/3 at 30 % — waiting on approval',
      'step 1 (10 %, 1/9): started 07:38:41, ready 07:38:42, ended 07:39:42 held',
      'step 2 (30 %, 3/7): started 07:39:42',
    ]);
  });

  it('before the first answer of the progress query, only the run', () => {
    expect(watchLines({ runId: 'r' })).toEqual(['run r']);
  });

  it.each([
    ['the first look prints everything', [], ['run r', 'phase: Running'], ['run r', 'phase: Running']],
    ['an unchanged look prints nothing', ['run r', 'phase: Running'], ['run r', 'phase: Running'], []],
    [
      'a chart that moves on prints its group line only',
      watchLines({ runId: 'r', progress: manifestProgress('deploying') }),
      watchLines({ runId: 'r', progress: manifestProgress('deployed', 'deploying') }),
      ['group apps: running — web deployed, api deploying'],
    ],
    [
      'a continue-as-new prints the new run line',
      ['run aaaaaaaa: ArmadaManifest/demo@1', 'phase: WaitingApproval'],
      ['run bbbbbbbb: ArmadaManifest/demo@2', 'phase: WaitingApproval'],
      ['run bbbbbbbb: ArmadaManifest/demo@2'],
    ],
    [
      'a line that comes back after a change prints again',
      ['phase: Paused'],
      ['phase: Running'],
      ['phase: Running'],
    ],
  ])('%s', (_name, previous, next, printed) => {
    expect(changedLines(previous, next)).toEqual(printed);
  });

  it('a terminal redraw moves up over the last frame, clears it, and cuts lines to the width', () => {
    expect(frame(['phase: Running', 'group apps: running — web deploying'], 0, 80)).toBe(
      'phase: Running\ngroup apps: running — web deploying',
    );
    expect(frame(['phase: Deployed', 'group apps: done — web deployed rev 1'], 2, 20)).toBe(
      '\x1b[2A\x1b[Jphase: Deployed\ngroup apps: done — ',
    );
  });

  it.each([
    ['a deployed manifest', { value: { manifest: 'demo', state: 'deployed' } }, 'deployed', true],
    ['a rolled-back manifest', { value: { manifest: 'demo', state: 'rolled-back' } }, 'rolled-back', false],
    ['a stopped manifest', { value: { manifest: 'demo', state: 'stopped' } }, 'stopped', false],
    ['a promoted canary', { value: { result: 'promoted', steps: [] } }, 'promoted', true],
    [
      'a rolled-back canary',
      { value: { result: 'rolled-back', reason: 'analysis failed', steps: [] } },
      'rolled-back (analysis failed)',
      false,
    ],
    [
      'an upgraded chart',
      { value: { chart: 'web', action: 'upgraded', revision: 4 } },
      'upgraded, revision 4',
      true,
    ],
    [
      'a group with a failed chart',
      { value: { group: 'apps', outcomes: [], failed: [{ chart: 'web', error: 'x' }], stopped: false } },
      'failed: web',
      false,
    ],
    [
      'a failed run',
      { error: new Error('group apps failed', { cause: new Error('helm: boom') }) },
      'failed: helm: boom',
      false,
    ],
  ])('the outcome of %s is its text and whether it succeeded', (_name, ended, text, ok) => {
    expect(describeOutcome(ended)).toEqual({ text, ok });
  });
});

const record = (r: Partial<RunRecord>): RunRecord => ({
  workflowId: 'ArmadaManifest:default/demo',
  runId: '0a1b2c3d-4e5f',
  type: 'manifestWorkflow',
  status: 'COMPLETED',
  phase: 'Deployed',
  outcome: 'deployed',
  startTime: '2026-11-22T07:38:41.000Z',
  closeTime: '2026-11-22T07:38:44.200Z',
  durationSeconds: 3.2,
  specs: 'ArmadaManifest/demo@2',
  mode: 'deploy',
  approvals: null,
  ...r,
});

describe('history', () => {
  it.each([
    ['COMPLETED', 'Deployed', 'deployed'],
    ['COMPLETED', 'RolledBack', 'rolled-back'],
    ['COMPLETED', null, 'completed'],
    ['COMPLETED', 'Pending', 'completed'],
    ['CONTINUED_AS_NEW', 'WaitingApproval', 're-planned'],
    ['RUNNING', 'Running', 'running'],
    ['FAILED', 'Failed', 'failed'],
    ['TIMED_OUT', null, 'timed-out'],
    ['CANCELLED', 'RollingBack', 'cancelled'],
  ])('a run %s in phase %s is %s', (status, phase, outcome) => {
    expect(outcomeOf(status, phase)).toBe(outcome);
  });

  it('a table, newest first as given: start, outcome, duration, run, specs', () => {
    const lines = formatHistory([
      record({
        runId: 'ffff0000-1',
        startTime: '2026-11-22T08:00:00.000Z',
        closeTime: null,
        durationSeconds: 75,
        outcome: 'running',
        specs: 'ArmadaManifest/demo@3',
      }),
      record({}),
      record({ runId: '99990000-1', specs: null, outcome: 'failed', durationSeconds: 42.4 }),
    ]);
    expect(lines).toEqual([
      'started (UTC)        outcome   duration      run            specs',
      '2026-11-22 08:00:00  running   1m15s so far  ffff0000-1     ArmadaManifest/demo@3',
      '2026-11-22 07:38:41  deployed  3.2s          0a1b2c3d-4e5f  ArmadaManifest/demo@2',
      '2026-11-22 07:38:41  failed    42s           99990000-1     -',
    ]);
  });

  it('names who approved each gate of a run, as the run recorded them, when any run had one approved', () => {
    const lines = formatHistory([
      record({ approvals: [{ gate: 'before group apps', by: 'system:serviceaccount:team-b:dev' }] }),
      record({ runId: '99990000-1', approvals: [] }),
    ]);
    expect(lines).toEqual([
      'started (UTC)        outcome   duration  run            approved by                                           specs',
      '2026-11-22 07:38:41  deployed  3.2s      0a1b2c3d-4e5f  system:serviceaccount:team-b:dev (before group apps)  ArmadaManifest/demo@2',
      '2026-11-22 07:38:41  deployed  3.2s      99990000-1     -                                                     ArmadaManifest/demo@2',
    ]);
  });

  it('names the workflow of each run when they come from more than one (an ArmadaChart)', () => {
    const lines = formatHistory([
      record({ workflowId: 'ArmadaChart:default/shop/canary', outcome: 'promoted' }),
      record({ workflowId: 'helm:apps/shop', outcome: 'failed' }),
    ]);
    expect(lines[0]).toBe(
      'started (UTC)        outcome   duration  run            workflow                         specs',
    );
    expect(lines[2]).toBe(
      '2026-11-22 07:38:41  failed    3.2s      0a1b2c3d-4e5f  helm:apps/shop                   ArmadaManifest/demo@2',
    );
  });

  it.each([
    ['demo', `WorkflowId = 'ArmadaManifest:ops/demo'`],
    ['dpl/nginx', `WorkflowId = 'Deployer:ops/nginx' OR ArmadaObjects = 'Deployer/ops/nginx'`],
    ['acg/apps', `WorkflowId = 'ArmadaChartGroup:ops/apps' OR ArmadaObjects = 'ArmadaChartGroup/ops/apps'`],
    [
      'act/shop',
      `WorkflowId = 'ArmadaChart:ops/shop/canary' OR (ArmadaKind = 'ArmadaChart' AND ArmadaName = 'shop' AND ArmadaNamespace = 'ops') OR ArmadaObjects = 'ArmadaChart/ops/shop'`,
    ],
  ])('the runs of %s are found by %s', (target, query) => {
    expect(historyQuery(resolveTarget(target, 'ops'))).toBe(query);
  });
});

describe('listItems: the objects a list holds, as kubectl get -o yaml and the API server print them', () => {
  const items = [{ kind: 'ArmadaChart' }];
  it.each([
    ['kubectl get -o yaml: a List', { apiVersion: 'v1', kind: 'List', items }, items],
    [
      "the API server's ArmadaChartList",
      { apiVersion: 'armada.airshipit.org/v1', kind: 'ArmadaChartList', items },
      items,
    ],
    ['an object that is no list', { apiVersion: 'armada.airshipit.org/v1', kind: 'ArmadaChart' }, undefined],
    ['a List without items', { apiVersion: 'v1', kind: 'List', items: 'none' }, undefined],
    ["another group's list", { apiVersion: 'apps/v1', kind: 'DeploymentList', items }, undefined],
  ])('%s', (_, value, expected) => {
    expect(listItems(value)).toEqual(expected);
  });
});
