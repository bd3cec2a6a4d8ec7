import type { Server } from 'node:http';
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { objectWorkflowId } from '../../core/plan/names';
import { manifestWorkflowId } from '../../runs/targets';
import { releaseStepsOf } from '../helpers/release-steps';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import { serveFiles } from '../helpers/chart-servers';
import { helm, sharedWorker } from '../helpers/env';
import { installCrds, kubectl } from '../helpers/kube';

const documents = path.resolve(__dirname, '../../examples/armada-documents');
const site = path.join(documents, 'site.yaml');
const SITE_RELEASES = ['airship-settings', 'airship-backend', 'airship-web'];
const examples = path.resolve(__dirname, '../../examples/charts');
/** Where the documents' releases go (their own `namespace`), and where their objects are named. */
const RELEASES = 'airship-demo';
const CR_NAMESPACE = 'airship-e2e';
/** The host the operator charts' fixture names for its .tgz sources, replaced by a server of ours. */
const FIXTURE_CHARTS = 'https://charts.example.com';

describe('armadactl apply of airship Armada documents as they are (real worker, helm, sandbox cluster)', () => {
  const harness = sharedWorker();
  let work = '';
  let server: Server | undefined;
  let operatorCharts = '';

  /**
   * When a release's steps started and ended, and how often it ran helm test: a manifest's
   * chart in its manifest's run, a standalone chart (named as its release, in the namespace its
   * document names) in its own (releaseStepsOf).
   */
  async function chartRun(release: string, manifest?: string) {
    const client = harness().client;
    const workflowId = manifest
      ? manifestWorkflowId(CR_NAMESPACE, manifest)
      : objectWorkflowId('ArmadaChart', RELEASES, release);
    const { started, closed, types } = await releaseStepsOf(client, workflowId, release);
    return { started, closed, tests: types.filter((t) => t === 'helmTest').length };
  }

  /** Each release's Helm status and revision. */
  const releaseStatuses = (releases: string[]) =>
    Promise.all(
      releases.map(async (release) => {
        const status = JSON.parse(await helm('status', release, '--namespace', RELEASES, '--output', 'json'));
        return { release, status: status.info.status as string, revision: status.version as number };
      }),
    );
  const applyAndWait = (file: string) => armadactl('apply', '-f', file, '--wait', '-n', CR_NAMESPACE);

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'armada-airship-'));
    // The site's local sources (examples/charts/...) resolve under a charts root of this test's own.
    await cp(examples, path.join(work, 'root', 'examples', 'charts'), { recursive: true });
    process.env.ARMADA_CHARTS_ROOT = path.join(work, 'root');
    process.env.ARMADA_CHART_CACHE = path.join(work, 'cache');
    // The operator charts' .tgz sources: the example charts packaged, served over HTTP.
    const www = path.join(work, 'www');
    for (const chart of ['hello', 'backend'])
      await helm('package', path.join(examples, chart), '--destination', www);
    let url: string;
    ({ server, url } = await serveFiles(www));
    operatorCharts = path.join(work, 'operator-charts.yaml');
    const fixture = await readFile(path.join(documents, 'operator-charts.yaml'), 'utf8');
    if (!fixture.includes(FIXTURE_CHARTS)) throw new Error(`operator-charts.yaml names no ${FIXTURE_CHARTS}`);
    await writeFile(operatorCharts, fixture.replaceAll(FIXTURE_CHARTS, url));
    // The ownership check asks the cluster; the dry run below needs the kinds and a namespace.
    await installCrds();
    await kubectl('create', 'namespace', CR_NAMESPACE);
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it('deploys the site: its groups in order, platform one chart after the other, tests as Armada runs them', async () => {
    const { code, out } = await applyAndWait(site);
    expect(out).toContain('airship-site: deployed');
    expect(code).toBe(0);
    expect(await releaseStatuses(SITE_RELEASES)).toEqual(
      SITE_RELEASES.map((release) => ({ release, status: 'deployed', revision: 1 })),
    );

    const [settings, backend, web] = await Promise.all(SITE_RELEASES.map((r) => chartRun(r, 'airship-site')));
    // platform is sequenced: backend starts once settings is done (installed, waited for, tested);
    // apps starts once platform is done.
    expect(backend.started).toBeGreaterThanOrEqual(settings.closed);
    expect(web.started).toBeGreaterThanOrEqual(backend.closed);
    // Armada tests a chart unless told not to: web's v1 group says test_charts: false.
    expect([settings.tests, backend.tests, web.tests]).toEqual([1, 1, 0]);
  });

  it('a second apply of the same documents changes nothing', async () => {
    expect((await applyAndWait(site)).code).toBe(0);
    expect(await releaseStatuses(SITE_RELEASES)).toEqual(
      SITE_RELEASES.map((release) => ({ release, status: 'deployed', revision: 1 })),
    );
  });

  it("deploys the operator's ArmadaCharts from their .tgz sources, each release named after its object", async () => {
    const { code, out } = await applyAndWait(operatorCharts);
    expect(out).toContain('operator-hello: installed, revision 1');
    expect(out).toContain('operator-backend: installed, revision 1');
    expect(code).toBe(0);
    expect(await releaseStatuses(['operator-hello', 'operator-backend'])).toEqual(
      ['operator-hello', 'operator-backend'].map((release) => ({ release, status: 'deployed', revision: 1 })),
    );
    // The wait on wait.labels passed: the Deployment has the replicas its values ask for.
    const deployment = JSON.parse(
      await kubectl('get', 'deployment', 'operator-hello', '-n', RELEASES, '-o', 'json'),
    );
    expect(deployment.status.availableReplicas).toBe(2);
    expect((await chartRun('operator-backend')).tests).toBe(1);
    expect((await chartRun('operator-hello')).tests).toBe(0);
  });

  it('convert prints objects the API server takes', async () => {
    const converted = path.join(work, 'converted.yaml');
    const outputs = await Promise.all([site, operatorCharts].map((f) => armadactl('convert', '-f', f)));
    expect(outputs.map((o) => o.code)).toEqual([0, 0]);
    await writeFile(converted, outputs.map((o) => o.out).join('\n---\n'));
    // The site's objects name no namespace (kubectl's default takes them); the operator's name theirs.
    const applied = await kubectl('apply', '--dry-run=server', '-f', converted);
    expect(applied.trim().split('\n')).toEqual([
      'armadamanifest.armada.airshipit.org/airship-site created (server dry run)',
      'armadachartgroup.armada.airshipit.org/platform created (server dry run)',
      'armadachartgroup.armada.airshipit.org/apps created (server dry run)',
      'armadachart.armada.airshipit.org/settings created (server dry run)',
      'armadachart.armada.airshipit.org/backend created (server dry run)',
      'armadachart.armada.airshipit.org/web created (server dry run)',
      'armadachart.armada.airshipit.org/operator-hello created (server dry run)',
      'armadachart.armada.airshipit.org/operator-backend created (server dry run)',
    ]);
  });
});
