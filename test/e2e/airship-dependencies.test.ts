import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import { installCrds, kubectl } from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

const fixtures = path.resolve(__dirname, '../fixtures/airship');
/** The OpenStack-Helm style site's service charts, each built with helm-toolkit. */
const SERVICES = ['keystone', 'glance', 'nova'];
/** Their releases, as the site's release_prefix names them. */
const SERVICE_RELEASES = SERVICES.map((s) => `osh-${s}`);
const TOOLKIT_SNIPPET = path.join('charts', 'helm-toolkit', 'templates', '_snippets.tpl');
/** The site's own release namespace, which this test runs its copy of the site in a namespace of its own instead of. */
const SITE_NAMESPACE = 'namespace: openstack';

describe('airship documents with chart dependencies, as they are (real worker, helm, sandbox cluster)', () => {
  const harness = sharedWorker();
  const crs = uniqueName('airship-deps');
  /** Where the site's file-applied releases go, and the bridge's. */
  const releases = uniqueName('openstack');
  const bridgeReleases = uniqueName('osh-bridge');
  let root = '';
  let site = '';
  let bridge: ProductProcess | undefined;

  /** Each release's revision and what its ConfigMap says of the helm-toolkit it was built with. */
  const built = (namespace: string, releases: string[]) =>
    Promise.all(
      releases.map(async (release) => {
        const status = JSON.parse(
          await helm('status', release, '--namespace', namespace, '--output', 'json'),
        );
        const configMap = JSON.parse(
          await kubectl('get', 'configmap', release, '-n', namespace, '-o', 'json'),
        );
        return { release, revision: status.version as number, toolkit: configMap.data.toolkit as string };
      }),
    );
  const setToolkit = (release: string) =>
    writeFile(
      path.join(root, TOOLKIT_SNIPPET),
      `{{- define "helm-toolkit.snippets.release" -}}\n${release}\n{{- end -}}\n`,
    );
  const applyAndWait = (file: string) => armadactl('apply', '-f', file, '--wait', '-n', crs);

  beforeAll(async () => {
    // The documents' local sources (charts/...) resolve under a charts root of this test's own.
    root = await mkdtemp(path.join(tmpdir(), 'armada-airship-deps-'));
    await cp(path.join(fixtures, 'charts'), path.join(root, 'charts'), { recursive: true });
    process.env.ARMADA_CHARTS_ROOT = root;
    process.env.ARMADA_CHART_CACHE = path.join(root, '.cache');
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
    // The site as written but for its release namespace: one of this run's own.
    const written = await readFile(path.join(fixtures, 'osh-site.yaml'), 'utf8');
    if (!written.includes(SITE_NAMESPACE)) throw new Error(`osh-site.yaml has no "${SITE_NAMESPACE}"`);
    site = path.join(root, 'osh-site.yaml');
    await writeFile(site, written.replaceAll(SITE_NAMESPACE, `namespace: ${releases}`));
    await installCrds();
    await kubectl('create', 'namespace', crs);
  });

  afterAll(async () => {
    await bridge?.stop();
    for (const namespace of [crs, releases, bridgeReleases])
      await kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => '');
  });

  it("airship Armada's examples/simple.yaml, dependencies: [] and all, validates and deploys", async () => {
    const simple = path.join(fixtures, 'simple.yaml');
    const validated = await armadactl('validate', '-f', simple);
    expect(validated.out.trim()).toBe('4 valid, 0 invalid');
    const { code, out } = await applyAndWait(simple);
    expect(out).toContain('simple-armada: deployed');
    expect(code).toBe(0);
    const blog2 = JSON.parse(
      await kubectl('get', 'configmap', 'armada-blog-2', '-n', 'default', '-o', 'json'),
    );
    expect(JSON.parse(blog2.data.values)).toEqual({ some: 'value' });
  });

  it('an OpenStack-Helm style site builds helm-toolkit into every chart that lists it, and never installs it alone', async () => {
    expect((await armadactl('validate', '-f', site)).out.trim()).toBe('6 valid, 0 invalid');
    const { code, out } = await applyAndWait(site);
    expect(out).toContain('openstack-site: deployed');
    expect(code).toBe(0);
    // keystone's own vendored helm-toolkit ("vendored") is replaced, as Armada's chartbuilder does.
    expect(await built(releases, SERVICE_RELEASES)).toEqual(
      SERVICES.map((s) => ({ release: `osh-${s}`, revision: 1, toolkit: 'toolkit-1' })),
    );
    const toolkitAlone = await helm('status', 'osh-helm-toolkit', '--namespace', 'osh-infra').catch(
      (err: Error) => err.message,
    );
    expect(toolkitAlone).toContain('release: not found');
  });

  it('an unchanged apply upgrades nothing; a change to helm-toolkit upgrades the three charts', async () => {
    expect((await applyAndWait(site)).code).toBe(0);
    expect((await built(releases, SERVICE_RELEASES)).map((r) => r.revision)).toEqual([1, 1, 1]);

    await setToolkit('toolkit-2');
    expect((await applyAndWait(site)).code).toBe(0);
    expect(await built(releases, SERVICE_RELEASES)).toEqual(
      SERVICES.map((s) => ({ release: `osh-${s}`, revision: 2, toolkit: 'toolkit-2' })),
    );
  });

  it('converted and applied with kubectl, the bridge deploys them; a new helm-toolkit spec upgrades its dependents', async () => {
    // The same site for the bridge, into a namespace of its own (the file-applied releases stay).
    const converted = await armadactl('convert', '-f', site);
    expect(converted.code).toBe(0);
    const objects = path.join(root, 'objects.yaml');
    await writeFile(
      objects,
      converted.out.replaceAll(`namespace: ${releases}`, `namespace: ${bridgeReleases}`),
    );
    await kubectl('apply', '-n', crs, '-f', objects);
    bridge = startBridge(crs, { ARMADA_TASK_QUEUE: harness().taskQueue, ARMADA_RESYNC_SECONDS: '2' });
    const revisions = (revision: number, toolkit: string) =>
      eventually(
        `the three releases at revision ${revision}, built with ${toolkit}`,
        async () => {
          const now = await built(bridgeReleases, SERVICE_RELEASES);
          return now.every((r) => r.revision === revision && r.toolkit === toolkit) ? now : undefined;
        },
        { process: bridge, timeoutMs: 180_000 },
      );
    await revisions(1, 'toolkit-2');

    // Another helm-toolkit: a copy of this one, saying toolkit-3, under a location of its own.
    await cp(path.join(root, 'charts', 'helm-toolkit'), path.join(root, 'charts', 'helm-toolkit-3'), {
      recursive: true,
    });
    const snippet = path.join(root, 'charts', 'helm-toolkit-3', 'templates', '_snippets.tpl');
    await writeFile(snippet, (await readFile(snippet, 'utf8')).replace('toolkit-2', 'toolkit-3'));
    await kubectl(
      'patch',
      'armadachart',
      'helm-toolkit',
      '-n',
      crs,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { source: { location: 'charts/helm-toolkit-3' } } }),
    );
    await revisions(2, 'toolkit-3');
  });
});
