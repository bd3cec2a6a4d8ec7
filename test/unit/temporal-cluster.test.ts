import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ArmadaObjects, registeredType, searchAttributes } from '../../workflows/search-attributes';

/**
 * docker-compose.yml cannot run here (no Docker engine): these checks keep its Temporal services
 * in step with the lane of `npm run temporal:up` (deploy/temporal-cluster), which does run here.
 */
const repo = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(repo, file), 'utf8');

const versions = Object.fromEntries(
  [...read('deploy/tools/versions.env').matchAll(/^(\w+)=(\S+)$/gm)].map(([, name, value]) => [name, value]),
);
const clusterScript = read('deploy/temporal-cluster/cluster.sh');
const setupScript = read('deploy/temporal-cluster/setup.sh');
const serverConfig = read('deploy/temporal-cluster/config/cluster.yaml');
const uiConfig = read('deploy/temporal-cluster/ui/cluster.yaml');

interface ComposeService {
  image: string;
  environment?: Record<string, string>;
  volumes?: string[];
  working_dir?: string;
  entrypoint?: string[];
  command?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
}
const services = (
  parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, ComposeService> }
).services;

interface SqlStore {
  pluginName: string;
  databaseName: string;
  connectAddr: string;
}
interface Rpc {
  grpcPort: number;
  httpPort?: number;
  membershipPort: number;
  bindOnIP: string;
}
interface ServerConfig {
  persistence: { datastores: Record<string, { sql: SqlStore }> };
  services: Record<'frontend' | 'history' | 'matching' | 'worker', { rpc: Rpc }>;
}

/** The variables a config template reads, with the default each falls back on (if any). */
function templateVariables(template: string): Map<string, string | undefined> {
  const found = template.matchAll(/env "(\w+)"(?: \| default "([^"]*)")?/g);
  return new Map([...found].map(([, name, fallback]) => [name, fallback]));
}

/**
 * config/cluster.yaml rendered as the server renders it (a Go template with sprig's functions),
 * for the forms it uses: `{{- $name := EXPR }}` and `{{ EXPR }}`, EXPR being `$name`,
 * `env "NAME"` or `env "NAME" | default "VALUE"`. Any other form throws, so the config cannot
 * outgrow these checks unnoticed.
 */
function renderServerConfig(env: Record<string, string>): ServerConfig {
  const variables = new Map<string, string>();
  const evaluate = (expression: string): string => {
    const variable = /^\$(\w+)$/.exec(expression);
    if (variable && variables.has(variable[1])) return variables.get(variable[1])!;
    const lookup = /^env "(\w+)"(?: \| default "([^"]*)")?$/.exec(expression);
    if (lookup) return env[lookup[1]] || (lookup[2] ?? '');
    throw new Error(`config/cluster.yaml: a template expression this test cannot render: ${expression}`);
  };
  const text = serverConfig
    .replace(/\{\{-? *\$(\w+) := (.+?) *\}\}/g, (_, name: string, expression: string) => {
      variables.set(name, evaluate(expression));
      return '';
    })
    .replace(/\{\{-? *(.+?) *\}\}/g, (_, expression: string) => evaluate(expression));
  return parse(text) as ServerConfig;
}

/** What cluster.sh exports for the server: the database account and a free port per port_names. */
function laneEnvironment(): Record<string, string> {
  const exported = /^export (SQL_.*)$/m.exec(clusterScript)![1];
  const account = Object.fromEntries(exported.split(' ').map((pair) => pair.split('=')));
  const ports = lanePortNames().map((name, i) => [name, String(20000 + i)]);
  return { ...account, ...Object.fromEntries(ports) };
}

function lanePortNames(): string[] {
  return /^port_names=\(([^)]*)\)/m.exec(clusterScript)![1].split(/\s+/).filter(Boolean);
}

/** The arguments cluster.sh starts a binary of .tools/bin with. */
function laneArguments(binary: string): string[] {
  return new RegExp(`^\\s*start_detached ${binary} (.+)$`, 'm').exec(clusterScript)![1].split(' ');
}

const stores = (config: ServerConfig) =>
  Object.values(config.persistence.datastores).map((store) => store.sql);
const portOf = (address: string) => Number(address.split(':').at(-1));
const release = (version: string) => version.replace(/^v/, '');

describe('the Temporal cluster: docker-compose.yml and `npm run temporal:up` (deploy/temporal-cluster)', () => {
  it('run the releases versions.env pins: the server, admin tools and UI the CLI embeds, PostgreSQL’s major version', () => {
    const server = release(versions.TEMPORAL_SERVER_VERSION);
    expect(services.temporal.image).toBe(`temporalio/server:${server}`);
    expect(services['temporal-schema'].image).toBe(`temporalio/admin-tools:${server}`);
    expect(services['temporal-setup'].image).toBe(`temporalio/admin-tools:${server}`);
    expect(services['temporal-ui'].image).toBe(`temporalio/ui:${release(versions.TEMPORAL_UI_VERSION)}`);
    expect(services.postgresql.image).toMatch(new RegExp(`^postgres:${versions.POSTGRESQL_MAJOR}(\\.|$)`));
    expect(clusterScript).toContain('pg_bin=/usr/lib/postgresql/$POSTGRESQL_MAJOR/bin');
    expect(clusterScript).toContain('install_debian_packages "postgresql-$POSTGRESQL_MAJOR"');
  });

  it('start the server with the same arguments, from the folder of its config files', () => {
    const temporal = services.temporal;
    expect(temporal.entrypoint).toEqual(['temporal-server', ...laneArguments('temporal-server')]);
    expect(temporal.volumes).toContain(`./deploy/temporal-cluster:${temporal.working_dir}:ro`);
    expect(clusterScript).toContain('(cd "$here" && exec setsid "$bin/$name" "$@")');
  });

  it('give the server every variable its config has no default for, the schema set-up the same database', () => {
    const needed = [...templateVariables(serverConfig)].filter(([, fallback]) => fallback === undefined);
    expect(needed.map(([name]) => name).sort()).toEqual(['SQL_HOST', 'SQL_PASSWORD', 'SQL_PORT', 'SQL_USER']);
    const lane = laneEnvironment();
    for (const [name] of needed) {
      expect({ name, compose: services.temporal.environment?.[name] }).toEqual({
        name,
        compose: expect.any(String),
      });
      expect(services['temporal-schema'].environment?.[name]).toBe(services.temporal.environment?.[name]);
      expect({ name, lane: lane[name] }).toEqual({ name, lane: expect.any(String) });
    }
    for (const name of Object.keys(services.temporal.environment ?? {}))
      expect({ name, read: templateVariables(serverConfig).has(name) }).toEqual({ name, read: true });
  });

  it('give every port of the configs a free port of its own in the lane, never a default one', () => {
    const variables = new Set([
      ...templateVariables(serverConfig).keys(),
      ...templateVariables(uiConfig).keys(),
    ]);
    const ports = [...variables].filter((name) => name.endsWith('_PORT'));
    expect(lanePortNames().sort()).toEqual(ports.sort());
    const rpc = Object.values(renderServerConfig(laneEnvironment()).services).map((service) => service.rpc);
    const rendered = rpc.flatMap((r) => [r.grpcPort, r.membershipPort, r.httpPort ?? []]).flat();
    expect(new Set(rendered).size).toBe(rendered.length);
  });

  it('render to one config of a postgres12 cluster, reachable where each of them says it is', () => {
    const compose = renderServerConfig(services.temporal.environment ?? {});
    const lane = renderServerConfig(laneEnvironment());
    for (const config of [compose, lane]) {
      expect(stores(config).map((store) => [store.pluginName, store.databaseName])).toEqual([
        ['postgres12', 'temporal'],
        ['postgres12', 'temporal_visibility'],
      ]);
    }
    // Compose: the database service, the frontend on every interface at the published port.
    const database = services.temporal.environment!;
    expect(services).toHaveProperty(database.SQL_HOST);
    for (const store of stores(compose))
      expect(store.connectAddr).toBe(`${database.SQL_HOST}:${database.SQL_PORT}`);
    const frontend = compose.services.frontend.rpc;
    expect(frontend.bindOnIP).toBe('0.0.0.0');
    expect(services.temporal.ports?.map((mapping) => portOf(mapping))).toContain(frontend.grpcPort);
    for (const client of ['temporal-setup', 'temporal-ui'])
      expect(services[client].environment?.TEMPORAL_ADDRESS).toBe(`temporal:${frontend.grpcPort}`);
    // The lane: PostgreSQL and the frontend on the loopback, at the ports cluster.env records.
    const env = laneEnvironment();
    for (const store of stores(lane)) expect(store.connectAddr).toBe(`127.0.0.1:${env.SQL_PORT}`);
    expect(lane.services.frontend.rpc).toMatchObject({
      bindOnIP: '127.0.0.1',
      grpcPort: Number(env.TEMPORAL_FRONTEND_PORT),
    });
    expect(clusterScript).toContain('echo "TEMPORAL_ADDRESS=127.0.0.1:${ports[1]}"');
    expect(lanePortNames()[1]).toBe('TEMPORAL_FRONTEND_PORT');
  });

  it('set up the schema and register the namespace with one script, in the same order', () => {
    const mount = services.temporal.working_dir;
    for (const [service, step] of [
      ['temporal-schema', 'schema'],
      ['temporal-setup', 'namespace'],
    ]) {
      expect(services[service].volumes).toEqual(services.temporal.volumes);
      expect([...services[service].entrypoint!, ...services[service].command!]).toEqual([
        'sh',
        `${mount}/setup.sh`,
        step,
      ]);
      expect(clusterScript).toContain(`sh "$here/setup.sh" ${step}`);
    }
    expect(services.temporal.depends_on).toEqual({
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
    expect(Object.keys(services['temporal-setup'].depends_on ?? {})).toEqual(['temporal']);
    const lane = [
      'sh "$here/setup.sh" schema',
      'start_detached temporal-server',
      'sh "$here/setup.sh" namespace',
    ];
    const positions = lane.map((step) => clusterScript.indexOf(step));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it('set up the databases the server config names, from the server’s own PostgreSQL schema', () => {
    const databases = [...setupScript.matchAll(/(\w+):(temporal|visibility)\b/g)].map(([, name, schema]) => ({
      name,
      schema,
    }));
    expect(databases.map((d) => d.name)).toEqual(stores(renderServerConfig({})).map((s) => s.databaseName));
    expect(setupScript).toContain('--schema-name "postgresql/v12/$schema"');
    expect(setupScript.match(/temporal-sql-tool --plugin (\S+)/g)).toEqual(
      Array(3).fill('temporal-sql-tool --plugin postgres12'),
    );
  });

  it('register the search attributes the workflows set, with their types', () => {
    const loop =
      /for attribute in ([\w: \\\n]+); do\n\s+search_attribute "\$\{attribute%%:\*\}" "\$\{attribute#\*:\}"/.exec(
        setupScript,
      );
    const registered = loop?.[1]
      .split(/[\s\\]+/)
      .filter(Boolean)
      .sort();
    expect(registered).toEqual(searchAttributes.map((key) => `${key.name}:${registeredType(key)}`).sort());
    expect(registeredType(ArmadaObjects)).toBe('KeywordList');
    expect(setupScript).toContain(
      'temporal operator search-attribute create --namespace default --name "$1" --type "$2"',
    );
  });
});
