import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/**
 * Static checks that keep deploy/Dockerfile and docker-compose.yml in step with the repository
 * they package. Both also run for real with no Docker engine: the image through podman
 * (deploy/images/build.sh app), the compose file through Docker Compose on podman's API
 * (test/compose/compose.test.ts).
 */
const repo = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(repo, file), 'utf8');

/** Variables named in the tables of docs/reference/environment.md (first column, in backticks). */
function documentedVariables(): Set<string> {
  const table = read('docs/reference/environment.md');
  const names = new Set<string>();
  for (const row of table.split('\n').filter((l) => l.startsWith('| `'))) {
    for (const [, name] of row.split('|')[1].matchAll(/`([A-Z0-9_]+)`/g)) names.add(name);
  }
  // `ARMADA_<TOOL>`: a built tool's override, such as ARMADA_HELM.
  if (table.includes('`ARMADA_<TOOL>`')) names.add('ARMADA_HELM');
  return names;
}

/** What the runtime and its tools read, not the product's configuration. */
const PLATFORM_VARIABLES = ['HOME', 'NODE_ENV'];

describe('deploy/Dockerfile', () => {
  const dockerfile = read('deploy/Dockerfile');
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => /^[A-Z]+ /.test(l));
  const stages = instructions.filter((l) => l.startsWith('FROM '));

  it('builds from pinned base images, the last one a Node LTS runtime', () => {
    expect(stages.length).toBeGreaterThanOrEqual(3);
    for (const from of stages) expect(from).toMatch(/^FROM [\w./-]+:[\w.-]+( AS \w+)?$/);
    expect(stages.at(-1)).toMatch(/^FROM node:(22|24)-/);
  });

  it('copies only what exists in the build context (and .dockerignore keeps local state out)', () => {
    const ignored = read('.dockerignore');
    for (const copy of instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from='))) {
      const sources = copy.split(/\s+/).slice(1, -1);
      for (const source of sources) {
        if (source === '.') continue;
        expect({ source, exists: existsSync(path.join(repo, source)) }).toEqual({ source, exists: true });
      }
    }
    for (const local of ['node_modules', 'dist', '.tools', '.sandbox', '.data'])
      expect(ignored).toContain(local);
  });

  it('copies from the build stage only the product’s parts of dist/', () => {
    const fromBuild = instructions
      .filter((l) => l.includes('--from=build'))
      .map((l) => l.split(/\s+/)[2])
      .filter((source) => source.startsWith('/app/dist/'))
      .map((source) => path.basename(source))
      .sort();
    expect(fromBuild).toEqual([
      'activities',
      'api',
      'armadactl.js',
      'bridge',
      'cli',
      'core',
      'kube',
      'runs',
      'worker',
      'workflow-bundle.js',
      'workflows',
    ]);
  });

  it('builds with npm run build, and its worker runs the bundle the build made', () => {
    expect(instructions).toContain('RUN bash deploy/build.sh && npm prune --omit=dev');
    expect(instructions).toContain(
      'COPY --from=build /app/dist/workflow-bundle.js ./dist/workflow-bundle.js',
    );
    const env = instructions.find((l) => l.startsWith('ENV '));
    expect(env).toMatch(/ARMADA_WORKFLOW_BUNDLE=\/app\/dist\/workflow-bundle\.js/);
  });

  it('builds helm at the pinned version and runs as a user that is not root', () => {
    const pinned = /^HELM_VERSION=(\S+)$/m.exec(read('deploy/tools/versions.env'))![1];
    expect(dockerfile).toContain('COPY deploy/tools/versions.env');
    expect(dockerfile).toContain('helm.sh/helm/v4/cmd/helm@${HELM_VERSION}');
    expect(pinned).toMatch(/^v4\./);
    const users = instructions.filter((l) => l.startsWith('USER '));
    expect(users.at(-1)).toBe('USER node');
    // The USER line comes after the last package installation of the runtime stage.
    const runtime = instructions.slice(instructions.lastIndexOf(stages.at(-1)!));
    expect(runtime.findIndex((l) => l.startsWith('USER '))).toBeGreaterThan(
      runtime.findIndex((l) => l.startsWith('RUN ')),
    );
  });

  it('sets only documented variables', () => {
    const documented = documentedVariables();
    const set = instructions
      .filter((l) => l.startsWith('ENV '))
      .flatMap((l) => [...l.matchAll(/(\w+)=/g)].map((m) => m[1]));
    expect(set.length).toBeGreaterThan(0);
    for (const name of set)
      expect({ name, documented: documented.has(name) || PLATFORM_VARIABLES.includes(name) }).toEqual({
        name,
        documented: true,
      });
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as {
    services: Record<
      string,
      {
        image?: string;
        build?: { context: string; dockerfile: string };
        command?: string[] | string;
        environment?: Record<string, string>;
        depends_on?: Record<string, { condition: string }>;
      }
    >;
  };
  const services = compose.services;

  it('runs PostgreSQL, the Temporal server and UI, the worker and the bridge, on pinned images', () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(['postgresql', 'temporal', 'temporal-ui', 'worker', 'bridge']),
    );
    for (const [name, service] of Object.entries(services))
      expect({ name, image: service.image }).toEqual({
        name,
        image: expect.stringMatching(/^[\w./-]+:[\w.-]+$/),
      });
  });

  it('depends only on services it defines, with conditions compose knows', () => {
    for (const service of Object.values(services)) {
      for (const [name, dependency] of Object.entries(service.depends_on ?? {})) {
        expect(Object.keys(services)).toContain(name);
        expect(['service_started', 'service_healthy', 'service_completed_successfully']).toContain(
          dependency.condition,
        );
        if (dependency.condition === 'service_healthy') expect(services[name]).toHaveProperty('healthcheck');
      }
    }
  });

  it('builds the worker and the bridge from deploy/Dockerfile and runs their compiled entry points', () => {
    for (const [name, entry] of [
      ['worker', 'dist/worker/main.js'],
      ['bridge', 'dist/bridge/main.js'],
    ]) {
      const service = services[name];
      expect(service.build).toEqual({ context: '.', dockerfile: 'deploy/Dockerfile' });
      expect(service.command).toEqual(['node', entry]);
      expect(existsSync(path.join(repo, entry.replace('dist/', '').replace(/\.js$/, '.ts')))).toBe(true);
    }
  });

  it('gives the worker and the bridge only documented variables', () => {
    const documented = documentedVariables();
    for (const name of ['worker', 'bridge']) {
      const variables = Object.keys(services[name].environment ?? {});
      expect(variables).toContain('TEMPORAL_ADDRESS');
      for (const variable of variables)
        expect({ variable, documented: documented.has(variable) }).toEqual({ variable, documented: true });
    }
  });
});
