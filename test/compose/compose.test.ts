import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { parse } from 'yaml';
import { toolPath } from '../../activities/tools';
import { uniqueName } from '../helpers/env';
import { eventually } from '../helpers/processes';

/**
 * docker-compose.yml as it is, run for real: Docker Compose v2 (deploy/tools/build.sh compose)
 * against podman's Docker API (deploy/compose.sh), with the images it names built here from pinned
 * sources (deploy/compose.sh images; test/run.sh prepares both, this file builds and downloads
 * nothing). PostgreSQL, the schema job, the Temporal server, the namespace job, the UI, the worker
 * and the bridge come up in the order of the file's depends_on conditions (`up --wait`); the
 * example manifest applied with kubectl is deployed by them until Ready; the UI answers on its
 * published port, lists the run through its API and shows its page in Chromium; `down -v` leaves
 * no container, volume or network behind.
 *
 * The cluster is one of this file's own (a sandbox of deploy/sandbox/cluster.sh), not the suite's:
 * the file's bridge watches every namespace (it sets no ARMADA_NAMESPACES) and would reconcile
 * the objects of every other test file running beside this one. Its ports are the file's own:
 * Temporal's 7233, the UI's 8080, and on the host network the bridge's 9464 and the worker's
 * 9465 metrics. The suite's servers never take them (the dev server and the product processes
 * use ports the OS hands out, the cluster lane's are in 10000-32767); an `npm start` running on
 * this machine does (7233), and the test then fails at once, saying so.
 */

const repo = path.resolve(__dirname, '../..');
const run = promisify(execFile);
/** The images docker-compose.yml names, as it names them. */
async function composeImages(): Promise<string[]> {
  const file = parse(await readFile(path.join(repo, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { image?: string }>;
  };
  return [...new Set(Object.values(file.services).flatMap((s) => (s.image ? [s.image] : [])))];
}
const PORTS = [7233, 8080, 9464, 9465];
const UI = 'http://127.0.0.1:8080';
/** The UI's address as the file gives it (TEMPORAL_CORS_ORIGINS), for the browser. */
const UI_ORIGIN = 'http://localhost:8080';
/** Debian's Chromium (test/run.sh installs it), unless ARMADA_CHROMIUM names another build. */
const CHROMIUM = process.env.ARMADA_CHROMIUM || '/usr/bin/chromium';
/** Up, down and the deploy on a busy 2-core machine. */
const LONG = 600_000;

const project = uniqueName('armada-compose');
const namespace = uniqueName('compose');
const sandboxDir = path.join(repo, '.sandbox', project);
const stateDir = path.join(repo, '.compose', project);
let work = '';
let kubeconfig = '';
let up = false;
/** What `up` printed: a line per container and step, in the order Compose took them. */
let upOutput = '';

function since(started: number): string {
  return `${((Date.now() - started) / 1000).toFixed(1)} s`;
}

/** deploy/compose.sh with this run's project, state dir and kubeconfig. */
async function compose(...args: string[]): Promise<string> {
  const { stdout, stderr } = await run('bash', ['deploy/compose.sh', ...args], {
    cwd: repo,
    env: { ...process.env, KUBECONFIG: kubeconfig, COMPOSE_STATE_DIR: stateDir },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout + stderr;
}

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(toolPath('kubectl'), ['--kubeconfig', kubeconfig, ...args], { cwd: repo });
  return stdout;
}

async function podman(...args: string[]): Promise<string> {
  const { stdout } = await run('podman', args, {
    env: { ...process.env, CONTAINERS_CONF: path.join(repo, 'deploy/images/containers.conf') },
  });
  return stdout;
}

/** What of the project podman still holds, by the label Compose puts on everything it creates. */
async function leftovers(): Promise<Record<string, string[]>> {
  const filter = `label=com.docker.compose.project=${project}`;
  const list = async (...cmd: string[]) =>
    (await podman(...cmd, '-q', '--filter', filter)).split('\n').filter(Boolean);
  return {
    containers: await list('ps', '-a'),
    volumes: await list('volume', 'ls'),
    networks: await list('network', 'ls'),
  };
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
      .once('error', () => resolve(false))
      .listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

describe('docker-compose.yml on podman: PostgreSQL, Temporal, its UI, the worker and the bridge', () => {
  beforeAll(async () => {
    const missing = [];
    const images = await composeImages();
    expect(images).toHaveLength(5);
    for (const image of images) {
      if (
        !(await podman('image', 'exists', image).then(
          () => true,
          () => false,
        ))
      )
        missing.push(image);
    }
    if (missing.length)
      throw new Error(
        `not in podman's storage: ${missing.join(', ')}; test/run.sh prepares them (bash deploy/compose.sh images)`,
      );
    for (const port of PORTS) {
      if (!(await portFree(port)))
        throw new Error(
          `port ${port}, which docker-compose.yml uses, is taken (an \`npm start\` on this machine?)`,
        );
    }

    let started = Date.now();
    work = await mkdtemp(path.join(tmpdir(), 'armada-compose-'));
    await run('bash', ['deploy/sandbox/cluster.sh', 'up'], {
      cwd: repo,
      env: { ...process.env, SANDBOX_DIR: sandboxDir, SANDBOX_REAL_NODE: '' },
    });
    // The worker and bridge run as the image's `node` user (uid 1000): their mounted kubeconfig
    // must be readable by it, which the sandbox's (0600, root's) is not.
    kubeconfig = path.join(work, 'kubeconfig');
    await copyFile(path.join(sandboxDir, 'kubeconfig'), kubeconfig);
    await chmod(kubeconfig, 0o644);
    await kubectl('apply', '--server-side', '--force-conflicts', '-f', 'deploy/crds/');
    await kubectl('wait', '--for=condition=Established', '--timeout=60s', '-f', 'deploy/crds/');
    await kubectl('apply', '--server-side', '--force-conflicts', '-f', 'deploy/admission/');
    await kubectl('create', 'namespace', namespace);
    console.log(`sandbox ${sandboxDir} ready in ${since(started)}`);

    started = Date.now();
    up = true;
    upOutput = await compose('-p', project, 'up', '-d', '--wait', '--wait-timeout', '300');
    console.log(`docker compose up -d --wait: ${since(started)}`);
  }, LONG);

  afterAll(async () => {
    if (up) {
      console.log(await compose('-p', project, 'ps', '-a').catch((e: Error) => e.message));
      console.log(await compose('-p', project, 'logs', '--tail', '30').catch((e: Error) => e.message));
      await compose('-p', project, 'down', '-v').catch((e: Error) => console.log(e.message));
    }
    await compose('stop').catch((e: Error) => console.log(e.message));
    await run('bash', ['deploy/sandbox/cluster.sh', 'down'], {
      cwd: repo,
      env: { ...process.env, SANDBOX_DIR: sandboxDir },
    }).catch((e: Error) => console.log(e.message));
    await rm(sandboxDir, { recursive: true, force: true });
    await rm(stateDir, { recursive: true, force: true });
    if (work) await rm(work, { recursive: true, force: true });
  }, LONG);

  it('starts each service only once what it depends on is healthy or done (the file relies on that order)', () => {
    const at = (service: string, step: string) => {
      const match = new RegExp(`Container ${project}-${service}-1\\s+${step}\\b`).exec(upOutput);
      if (!match) throw new Error(`compose up printed no "${service} ${step}":\n${upOutput}`);
      return match.index;
    };
    expect(at('postgresql', 'Healthy')).toBeLessThan(at('temporal-schema', 'Starting'));
    expect(at('temporal-schema', 'Exited')).toBeLessThan(at('temporal', 'Starting'));
    expect(at('temporal', 'Healthy')).toBeLessThan(at('temporal-setup', 'Starting'));
    expect(at('temporal', 'Healthy')).toBeLessThan(at('temporal-ui', 'Starting'));
    expect(at('temporal-setup', 'Exited')).toBeLessThan(at('worker', 'Starting'));
    expect(at('worker', 'Started')).toBeLessThan(at('bridge', 'Starting'));
  });

  it('runs every service, the two set-up jobs done', async () => {
    const states = Object.fromEntries(
      (await compose('-p', project, 'ps', '-a', '--format', '{{.Service}} {{.State}} {{.ExitCode}}'))
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [service, state, code] = line.split(' ');
          return [service, state === 'exited' ? `exited ${code}` : state];
        }),
    );
    expect(states).toEqual({
      postgresql: 'running',
      'temporal-schema': 'exited 0',
      temporal: 'running',
      'temporal-setup': 'exited 0',
      'temporal-ui': 'running',
      worker: 'running',
      bridge: 'running',
    });
  });

  it(
    'deploys the example manifest applied with kubectl until it is Ready, and the UI on its published port lists the run and shows its page',
    async () => {
      // The example, in a namespace of its own: its charts deploy into their object's namespace
      // (the tenancy rule), here the test's rather than `demo`.
      const text = await readFile(path.join(repo, 'examples/sequenced-manifest.yaml'), 'utf8');
      const manifest = text.replace(/^(\s+namespace:) demo$/gm, `$1 ${namespace}`);
      expect(manifest.split(`namespace: ${namespace}`)).toHaveLength(5);
      const file = path.join(work, 'manifest.yaml');
      await writeFile(file, manifest);

      const started = Date.now();
      await kubectl('apply', '-n', namespace, '-f', file);
      await kubectl(
        'wait',
        '--for=condition=Ready',
        'armadamanifest/demo',
        '-n',
        namespace,
        '--timeout=300s',
      );
      console.log(`example manifest Ready ${since(started)} after kubectl apply`);
      const { stdout } = await run(
        toolPath('helm'),
        ['list', '--kubeconfig', kubeconfig, '--namespace', namespace, '--output', 'json'],
        { cwd: repo },
      );
      const releases = (JSON.parse(stdout) as { name: string; status: string }[])
        .map((r) => `${r.name} ${r.status}`)
        .sort();
      expect(releases).toEqual([
        'demo-admin deployed',
        'demo-backend deployed',
        'demo-settings deployed',
        'demo-web deployed',
      ]);

      const page = await fetch(`${UI}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/^<!doctype html>/i);
      // What the UI's workflow list asks its server for (the same API, the same search).
      const workflowId = `ArmadaManifest:${namespace}/demo`;
      const query = encodeURIComponent(`WorkflowId="${workflowId}"`);
      const listed = await eventually(
        'the run in the UI',
        async () => {
          const res = await fetch(`${UI}/api/v1/namespaces/default/workflows?query=${query}`);
          if (res.status !== 200) return undefined;
          const body = (await res.json()) as {
            executions?: { execution: { workflowId: string }; type: { name: string }; status: string }[];
          };
          return body.executions?.length ? body.executions : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(listed.map((e) => [e.execution.workflowId, e.type.name, e.status])).toEqual([
        [workflowId, 'deployRun', 'WORKFLOW_EXECUTION_STATUS_COMPLETED'],
      ]);

      // And as a user sees it: the workflow list in Chromium, then the run's own page.
      const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
      try {
        const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
        page.setDefaultTimeout(60_000);
        await page.goto(`${UI_ORIGIN}/namespaces/default/workflows?query=${query}`);
        await page.getByRole('link', { name: workflowId, exact: true }).click();
        await page.getByTestId('workflow-id-heading').getByText(workflowId).waitFor();
      } finally {
        await browser.close();
      }
    },
    LONG,
  );

  it(
    'leaves no container, volume or network behind after down -v',
    async () => {
      expect((await leftovers()).containers.length).toBeGreaterThan(0);
      const started = Date.now();
      await compose('-p', project, 'down', '-v');
      up = false;
      console.log(`docker compose down -v: ${since(started)}`);
      expect(await leftovers()).toEqual({ containers: [], volumes: [], networks: [] });
    },
    LONG,
  );
});
