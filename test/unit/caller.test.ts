import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { rbacName, steeringPermission, steeringRefusal, temporalAdminName } from '../../cli/caller';
import { main } from '../../cli/main';
import type { ObjectRef } from '../../cli/ownership';
import { freePort } from '../helpers/temporal';

const web: ObjectRef = { kind: 'ArmadaChart', namespace: 'team-b', name: 'web' };

describe('who may steer a run: the permission armadactl asks for', () => {
  it.each<[ObjectRef, string]>([
    [web, 'armadacharts.armada.airshipit.org team-b/web'],
    [
      { kind: 'ArmadaManifest', namespace: 'ops', name: 'demo' },
      'armadamanifests.armada.airshipit.org ops/demo',
    ],
    [
      { kind: 'ArmadaChartGroup', namespace: 'ops', name: 'apps' },
      'armadachartgroups.armada.airshipit.org ops/apps',
    ],
    [{ kind: 'Deployer', namespace: 'ops', name: 'nginx' }, 'deployers.armada.airshipit.org ops/nginx'],
  ])('%j is named %s', (object, named) => {
    expect(rbacName(object)).toBe(named);
  });

  it('is patch of the object itself, in its own namespace', () => {
    expect(steeringPermission(web)).toEqual({
      group: 'armada.airshipit.org',
      resource: 'armadacharts',
      verb: 'patch',
      namespace: 'team-b',
      name: 'web',
    });
  });

  it('a refusal names the caller, the verb RBAC lacks and the object', () => {
    expect(steeringRefusal('system:serviceaccount:team-a:dev', web)).toBe(
      'you (system:serviceaccount:team-a:dev) may not patch armadacharts.armada.airshipit.org team-b/web',
    );
  });

  it('is delete of the object for armadactl delete, and its refusal says so', () => {
    expect(steeringPermission(web, 'delete')).toMatchObject({
      verb: 'delete',
      namespace: 'team-b',
      name: 'web',
    });
    expect(steeringRefusal('bob', web, 'delete')).toBe(
      'you (bob) may not delete armadacharts.armada.airshipit.org team-b/web',
    );
  });

  it.each([
    ['alice', 'temporal-admin:alice'],
    [undefined, 'temporal-admin:unknown'],
    ['', 'temporal-admin:unknown'],
  ])('a Temporal administrator logged in as %j is recorded as %s', (login, recorded) => {
    expect(temporalAdminName(login)).toBe(recorded);
  });
});

describe('armadactl control commands without a cluster to ask', () => {
  const saved = { KUBECONFIG: process.env.KUBECONFIG, TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });

  it('refuses before reaching Temporal, and says a Temporal administrator may steer with --as-temporal-admin', async () => {
    const kubePort = await freePort();
    const kubeconfig = path.join(await mkdtemp(path.join(tmpdir(), 'caller-')), 'kubeconfig');
    await writeFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'gone', cluster: { server: `https://127.0.0.1:${kubePort}` } }],
        users: [{ name: 'me', user: { token: 'x' } }],
        contexts: [{ name: 'gone', context: { cluster: 'gone', user: 'me' } }],
        'current-context': 'gone',
      }),
    );
    process.env.KUBECONFIG = kubeconfig;
    // Temporal is closed too: a command that got past the check would fail saying so instead.
    process.env.TEMPORAL_ADDRESS = `127.0.0.1:${await freePort()}`;
    const err: string[] = [];
    const code = await main(
      ['pause', 'act/web', '-n', 'team-b'],
      () => undefined,
      (line) => err.push(line),
    );
    expect(err).toEqual([
      expect.stringMatching(
        new RegExp(
          `^armadactl pause: cannot steer ArmadaChart team-b/web through the cluster: ` +
            `no cluster answered \\(.+127\\.0\\.0\\.1:${kubePort}.+\\); ` +
            'without one, only a Temporal administrator steers runs \\(--as-temporal-admin\\)$',
        ),
      ),
    ]);
    expect(code).toBe(1);
  });

  it('refuses when KUBECONFIG names a file that is not there', async () => {
    const missing = path.join(tmpdir(), 'no-such-kubeconfig');
    process.env.KUBECONFIG = missing;
    const err: string[] = [];
    const code = await main(
      ['resume', 'demo'],
      () => undefined,
      (line) => err.push(line),
    );
    expect(err).toEqual([
      expect.stringMatching(
        /^armadactl resume: cannot steer ArmadaManifest default\/demo through the cluster: no kubeconfig \(.*no-such-kubeconfig.*\); without one, only a Temporal administrator steers runs \(--as-temporal-admin\)$/,
      ),
    ]);
    expect(code).toBe(1);
  });

  it('with --as-temporal-admin goes on to Temporal without asking the cluster', async () => {
    process.env.KUBECONFIG = path.join(tmpdir(), 'no-such-kubeconfig');
    const temporalPort = await freePort();
    process.env.TEMPORAL_ADDRESS = `127.0.0.1:${temporalPort}`;
    const err: string[] = [];
    const code = await main(
      ['pause', 'demo', '--as-temporal-admin'],
      () => undefined,
      (line) => err.push(line),
    );
    expect(err).toEqual([
      expect.stringContaining(`armadactl pause: cannot reach Temporal at 127.0.0.1:${temporalPort}`),
    ]);
    expect(code).toBe(1);
  });
});
