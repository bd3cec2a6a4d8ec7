import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { toolPath } from '../../activities/tools';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import { serveFiles } from '../helpers/chart-servers';
import { helm, helmHistory, sharedWorker, uniqueName } from '../helpers/env';
import { applyPolicy, installCrds, kubectl } from '../helpers/kube';
import { startBridge, type ProductProcess } from '../helpers/processes';

const repo = path.resolve(__dirname, '../..');
const examples = path.join(repo, 'examples/charts');
/** The operator charts' fixture: its host for .tgz sources and its namespace, both replaced here. */
const FIXTURE = path.join(repo, 'examples/armada-documents/operator-charts.yaml');
const FIXTURE_CHARTS = 'https://charts.example.com';
const FIXTURE_NAMESPACE = 'airship-demo';

/**
 * What `kubectl get armadacharts.v1.armada.airshipit.org -A -o yaml` prints of an operator's
 * cluster holding ArmadaChart `name` in `namespace`: a List, the object with what the API server
 * and the operator set on it (uid, resourceVersion, managedFields, the finalizer, status).
 */
const operatorExport = (name: string, namespace: string, charts: string) => `apiVersion: v1
kind: List
metadata:
  resourceVersion: ""
items:
- apiVersion: armada.airshipit.org/v1
  kind: ArmadaChart
  metadata:
    name: ${name}
    namespace: ${namespace}
    labels:
      team: web
    annotations:
      example.com/owner: team-web
      kubectl.kubernetes.io/last-applied-configuration: |
        {"apiVersion":"armada.airshipit.org/v1","kind":"ArmadaChart","metadata":{"name":"${name}","namespace":"${namespace}"}}
    creationTimestamp: "2026-01-05T10:00:00Z"
    finalizers:
    - finalizers.armada.airshipit.org
    generation: 1
    resourceVersion: "48213"
    uid: 6c1f0d9e-52a8-4d0b-9a57-0b8e2f1f4a10
    managedFields:
    - apiVersion: armada.airshipit.org/v1
      fieldsType: FieldsV1
      fieldsV1:
        f:metadata:
          f:finalizers:
            .: {}
            v:"finalizers.armada.airshipit.org": {}
      manager: armada-controller
      operation: Update
      time: "2026-01-05T10:00:01Z"
    - apiVersion: armada.airshipit.org/v1
      fieldsType: FieldsV1
      fieldsV1:
        f:status:
          f:helmStatus: {}
      manager: armada-controller
      operation: Update
      subresource: status
      time: "2026-01-05T10:01:00Z"
  data:
    chart_name: hello
    release: hello
    namespace: ${namespace}
    source:
      type: tar
      location: ${charts}/hello-0.1.0.tgz
    values:
      replicaCount: 2
    wait:
      timeout: 120
      labels:
        app.kubernetes.io/instance: ${name}
  status:
    helmStatus: deployed
    observedGeneration: 1
    waitCompleted: true
    tested: false
    conditions:
    - type: Ready
      status: "True"
      reason: ReconciliationSucceeded
      message: Release reconciliation succeeded
      lastTransitionTime: "2026-01-05T10:01:00Z"
`;

describe('moving from the armada-operator: armadactl convert, kubectl apply, the bridge deploys (bridge process, real worker, helm, sandbox)', () => {
  /** Where the objects and their releases are, as the operator keeps them: one namespace. */
  const namespace = uniqueName('operator-move');
  const policy = `adopt-${namespace}`;
  const harness = sharedWorker();
  let work = '';
  let charts = '';
  let server: Server | undefined;
  let bridge: ProductProcess | undefined;

  const ready = (...resources: string[]) =>
    kubectl('wait', '--for=condition=Ready', '--timeout=120s', '-n', namespace, ...resources);
  const history = async (release: string) =>
    (await helmHistory(release, namespace)).map((r) => `${r.revision} ${r.status}`);

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'armada-operator-move-'));
    // The operator's .tgz sources: the example charts packaged, served over HTTP.
    const www = path.join(work, 'www');
    for (const chart of ['hello', 'backend'])
      await helm('package', path.join(examples, chart), '--destination', www);
    ({ server, url: charts } = await serveFiles(www));
    await installCrds();
    await kubectl('create', 'namespace', namespace);
    // Its charts may take over the releases the operator installed (convert --adopt asks to).
    await applyPolicy(policy, { namespaces: [namespace], allow_adoption: true });
    bridge = startBridge(namespace, { ARMADA_TASK_QUEUE: harness().taskQueue });
  });

  afterAll(async () => {
    await bridge?.stop();
    await new Promise((resolve) => server?.close(resolve));
    await kubectl('delete', 'armadapolicy', policy, '--ignore-not-found');
    await kubectl('delete', 'namespace', namespace, '--wait=false');
  });

  it('the example operator ArmadaCharts, converted and applied with kubectl, are deployed by the bridge, each release named after its object', async () => {
    const fixture = await readFile(FIXTURE, 'utf8');
    const operatorCharts = path.join(work, 'operator-charts.yaml');
    await writeFile(
      operatorCharts,
      fixture.replaceAll(FIXTURE_CHARTS, charts).replaceAll(FIXTURE_NAMESPACE, namespace),
    );
    const converted = await armadactl('convert', '-f', operatorCharts);
    expect({ code: converted.code, err: converted.err }).toEqual({ code: 0, err: '2 converted' });
    const file = path.join(work, 'converted.yaml');
    await writeFile(file, converted.out);

    expect((await kubectl('apply', '-f', file)).trim().split('\n')).toEqual([
      'armadachart.armada.airshipit.org/operator-hello created',
      'armadachart.armada.airshipit.org/operator-backend created',
    ]);
    await ready('act/operator-hello', 'act/operator-backend');
    expect(await history('operator-hello')).toEqual(['1 deployed']);
    expect(await history('operator-backend')).toEqual(['1 deployed']);
  });

  it('an export piped through convert --adopt into kubectl apply takes over the release the operator installed: upgraded in place, revision 2', async () => {
    const name = 'exported-web';
    // The release as the operator left it: named after its object, in the object's namespace.
    await helm('install', name, path.join(work, 'www', 'hello-0.1.0.tgz'), '-n', namespace, '--wait');
    const deploymentUid = () =>
      kubectl('get', 'deployment', name, '-n', namespace, '-o', 'jsonpath={.metadata.uid}');
    const before = await deploymentUid();
    const exported = path.join(work, 'export.yaml');
    await writeFile(exported, operatorExport(name, namespace, charts));

    // As docs/tutorials/from-airship.md's steps run it: kubectl get ... -o yaml | armadactl convert -f - | kubectl apply -f -
    const { stdout, stderr } = await promisify(execFile)(
      'bash',
      [
        '-c',
        'set -o pipefail; node bin/armadactl.js convert -f - --adopt < "$EXPORT" | "$KUBECTL" apply -f -',
      ],
      { cwd: repo, env: { ...process.env, EXPORT: exported, KUBECTL: toolPath('kubectl') } },
    );
    expect({ stdout: stdout.trim(), stderr: stderr.trim() }).toEqual({
      stdout: `armadachart.armada.airshipit.org/${name} created`,
      stderr: '1 converted',
    });
    await ready(`act/${name}`);

    // Upgraded in place: the release's next revision, its Deployment the same object.
    expect(await history(name)).toEqual(['1 superseded', '2 deployed']);
    expect(await deploymentUid()).toBe(before);
    const values = JSON.parse(await helm('get', 'values', name, '-n', namespace, '-o', 'json'));
    expect(values).toEqual({ replicaCount: 2 });
    const object = JSON.parse(await kubectl('get', `act/${name}`, '-n', namespace, '-o', 'json'));
    // Labels and annotations carried over; the operator's finalizer and the old last-applied not.
    expect(object.metadata.labels).toEqual({ team: 'web' });
    expect(object.metadata.annotations['example.com/owner']).toBe('team-web');
    expect(object.metadata.finalizers).not.toContain('finalizers.armada.airshipit.org');
    expect(
      JSON.parse(object.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']),
    ).toMatchObject({ apiVersion: 'armada.airshipit.org/v1alpha1', spec: { adopt: true } });
  });
});
