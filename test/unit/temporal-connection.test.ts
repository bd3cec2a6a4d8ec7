import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { loadConfig as loadBridgeConfig } from '../../bridge/config';
import { hostPort, temporalTarget } from '../../runs/connect';
import { loadConfig as loadWorkerConfig } from '../../worker/config';
import {
  clientConnectionOptions,
  loadTemporalConnection,
  nativeConnectionOptions,
  type TemporalConnection,
} from '../../runs/connection';

const dir = mkdtempSync(path.join(tmpdir(), 'temporal-connection-'));
const at = (name: string) => path.join(dir, name);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A CA, a server certificate for localhost and 127.0.0.1, and a client certificate, all signed
 * by the CA, made with openssl (EC P-256, valid for a day).
 */
function makeCertificates(): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=armada test CA',
  );
  const leaf = (name: string, extensions: string) => {
    writeFileSync(at(`${name}.ext`), extensions);
    openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-out',
      `${name}.pem`,
      '-extfile',
      `${name}.ext`,
    );
  };
  leaf('server', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  leaf('client', 'extendedKeyUsage=clientAuth\n');
}

/** Temporal CLI profiles: the default one, and prod with mTLS files that exist or not. */
const PROFILES = `
[profile.default]
address = "temporal.internal:7233"
namespace = "staging"

[profile.prod]
address = "prod.tmprl.example:7233"
namespace = "prod"
[profile.prod.tls]
client_cert_path = "${at('client.pem')}"
client_key_path = "${at('client.key')}"
server_name = "temporal.prod"

[profile.lost]
[profile.lost.tls]
server_ca_cert_path = "${at('gone.pem')}"

[profile.plain]
api_key = "from-file"
[profile.plain.tls]
disabled = true
`;

beforeAll(() => {
  makeCertificates();
  writeFileSync(at('empty.toml'), '');
  writeFileSync(at('profiles.toml'), PROFILES);
  writeFileSync(at('broken.toml'), '[profile.default\naddress = 1');
});

/** No profile file: the variables alone (the machine's own ~/.config is never read). */
const none = () => ({ TEMPORAL_CONFIG_FILE: at('empty.toml') });
const defaults = () => ({ address: 'localhost:7233', namespace: 'default' });
const withProfiles = () => ({ TEMPORAL_CONFIG_FILE: at('profiles.toml') });

/** The lines of an invalid configuration's error, without its heading. */
function problems(load: () => unknown): string[] {
  try {
    load();
  } catch (err) {
    const [heading, ...lines] = (err as Error).message.split('\n');
    expect(heading).toBe('invalid configuration:');
    return lines;
  }
  throw new Error('the configuration was accepted');
}

describe('loadTemporalConnection', () => {
  it.each<[string, Record<string, string>, TemporalConnection]>([
    ['nothing set gives the dev server', {}, defaults()],
    [
      'address and namespace are taken as they are',
      { TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_NAMESPACE: 'ops' },
      { address: 'temporal:7233', namespace: 'ops' },
    ],
    [
      'an empty variable counts as unset',
      { TEMPORAL_ADDRESS: '', TEMPORAL_API_KEY: '', TEMPORAL_TLS: '' },
      { address: 'localhost:7233', namespace: 'default' },
    ],
    [
      'an API key turns TLS on (Temporal Cloud)',
      { TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'secret' },
      { address: 'ns.acct.tmprl.cloud:7233', namespace: 'default', apiKey: 'secret', tls: {} },
    ],
    [
      'TEMPORAL_TLS=false keeps an API key in plain text',
      { TEMPORAL_API_KEY: 'secret', TEMPORAL_TLS: 'false' },
      { address: 'localhost:7233', namespace: 'default', apiKey: 'secret' },
    ],
    ['TEMPORAL_TLS=true alone uses the system CAs', { TEMPORAL_TLS: 'true' }, { ...defaults(), tls: {} }],
    ['TEMPORAL_TLS=1 is true too', { TEMPORAL_TLS: '1' }, { ...defaults(), tls: {} }],
    [
      'a server name alone turns TLS on',
      { TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' },
      { ...defaults(), tls: { serverName: 'temporal.internal' } },
    ],
  ])('%s', (_, env, expected) => {
    expect(loadTemporalConnection({ ...none(), ...env })).toEqual(expected);
  });

  it('takes mTLS files and the CA from their variables, naming each source', () => {
    const env = {
      ...none(),
      TEMPORAL_TLS_CLIENT_CERT_PATH: at('client.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: at('client.key'),
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: at('ca.pem'),
    };
    expect(loadTemporalConnection(env).tls).toEqual({
      clientCert: { setting: 'TEMPORAL_TLS_CLIENT_CERT_PATH', path: at('client.pem') },
      clientKey: { setting: 'TEMPORAL_TLS_CLIENT_KEY_PATH', path: at('client.key') },
      serverCaCert: { setting: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', path: at('ca.pem') },
    });
  });

  describe('with a Temporal CLI config file', () => {
    it('reads the default profile when TEMPORAL_PROFILE is unset', () => {
      expect(loadTemporalConnection(withProfiles())).toEqual({
        address: 'temporal.internal:7233',
        namespace: 'staging',
      });
    });

    it('reads the named profile, its TLS files named by their TOML keys', () => {
      expect(loadTemporalConnection({ ...withProfiles(), TEMPORAL_PROFILE: 'prod' })).toEqual({
        address: 'prod.tmprl.example:7233',
        namespace: 'prod',
        tls: {
          serverName: 'temporal.prod',
          clientCert: { setting: 'profile.prod.tls.client_cert_path', path: at('client.pem') },
          clientKey: { setting: 'profile.prod.tls.client_key_path', path: at('client.key') },
        },
      });
    });

    it('lets each explicit variable win over the profile', () => {
      const connection = loadTemporalConnection({
        ...withProfiles(),
        TEMPORAL_PROFILE: 'prod',
        TEMPORAL_ADDRESS: 'other:7233',
        TEMPORAL_TLS_SERVER_NAME: 'other',
        TEMPORAL_TLS_CLIENT_KEY_PATH: at('server.key'),
      });
      expect(connection).toMatchObject({
        address: 'other:7233',
        namespace: 'prod',
        tls: {
          serverName: 'other',
          clientCert: { setting: 'profile.prod.tls.client_cert_path' },
          clientKey: { setting: 'TEMPORAL_TLS_CLIENT_KEY_PATH', path: at('server.key') },
        },
      });
    });

    it("follows the profile's tls.disabled unless TEMPORAL_TLS says otherwise", () => {
      const plain = { ...withProfiles(), TEMPORAL_PROFILE: 'plain' };
      expect(loadTemporalConnection(plain)).toEqual({ ...defaults(), apiKey: 'from-file' });
      expect(loadTemporalConnection({ ...plain, TEMPORAL_TLS: 'true' }).tls).toEqual({});
    });

    it('finds temporalio/temporal.toml under XDG_CONFIG_HOME when TEMPORAL_CONFIG_FILE is unset', () => {
      mkdirSync(at('xdg/temporalio'), { recursive: true });
      writeFileSync(at('xdg/temporalio/temporal.toml'), PROFILES);
      const saved = process.env.XDG_CONFIG_HOME;
      process.env.XDG_CONFIG_HOME = at('xdg');
      try {
        expect(loadTemporalConnection({}).address).toBe('temporal.internal:7233');
        expect(problems(() => loadTemporalConnection({ TEMPORAL_PROFILE: 'qa' }))).toEqual([
          `TEMPORAL_PROFILE: no profile "qa" in ${at('xdg/temporalio/temporal.toml')}`,
        ]);
        process.env.XDG_CONFIG_HOME = at('nowhere');
        expect(loadTemporalConnection({})).toEqual(defaults());
      } finally {
        if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
        else process.env.XDG_CONFIG_HOME = saved;
      }
    });
  });

  it.each<[string, Record<string, string>, string[]]>([
    [
      'a TEMPORAL_TLS that is not a boolean',
      { TEMPORAL_TLS: 'yes' },
      ['TEMPORAL_TLS: must be true or false, not "yes"'],
    ],
    [
      'a certificate file that does not exist',
      {
        TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent/client.pem',
        TEMPORAL_TLS_CLIENT_KEY_PATH: at('client.key'),
      },
      ['TEMPORAL_TLS_CLIENT_CERT_PATH: no such file: /nonexistent/client.pem'],
    ],
    [
      'a CA path that is a directory',
      { TEMPORAL_TLS_SERVER_CA_CERT_PATH: dir },
      [`TEMPORAL_TLS_SERVER_CA_CERT_PATH: no such file: ${dir}`],
    ],
    [
      'a client certificate without its key',
      { TEMPORAL_TLS_CLIENT_CERT_PATH: at('client.pem') },
      [
        'TEMPORAL_TLS_CLIENT_KEY_PATH: not set, but TEMPORAL_TLS_CLIENT_CERT_PATH is: a client certificate needs its key',
      ],
    ],
    [
      'a client key without its certificate',
      { TEMPORAL_TLS_CLIENT_KEY_PATH: at('client.key') },
      [
        'TEMPORAL_TLS_CLIENT_CERT_PATH: not set, but TEMPORAL_TLS_CLIENT_KEY_PATH is: a client key needs its certificate',
      ],
    ],
    [
      'TLS turned off with a CA given',
      { TEMPORAL_TLS: 'false', TEMPORAL_TLS_SERVER_CA_CERT_PATH: at('ca.pem') },
      ['TEMPORAL_TLS: turns TLS off, but a server name, CA or client certificate is given'],
    ],
    [
      'host verification turned off, which the SDK cannot do',
      { TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' },
      [
        "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: the TypeScript SDK always verifies the server's name; set TEMPORAL_TLS_SERVER_NAME to a name in its certificate",
      ],
    ],
    [
      'a config file that does not exist',
      { TEMPORAL_CONFIG_FILE: at('missing.toml') },
      [`TEMPORAL_CONFIG_FILE: no such file: ${at('missing.toml')}`],
    ],
    [
      'a profile that is not in the file',
      { ...withProfiles(), TEMPORAL_PROFILE: 'qa' },
      [`TEMPORAL_PROFILE: no profile "qa" in ${at('profiles.toml')}`],
    ],
    [
      "a profile's file that does not exist",
      { ...withProfiles(), TEMPORAL_PROFILE: 'lost' },
      [`profile.lost.tls.server_ca_cert_path: no such file: ${at('gone.pem')}`],
    ],
  ])('refuses %s with one line', (_, env, lines) => {
    expect(problems(() => loadTemporalConnection({ ...none(), ...env }))).toEqual(lines);
  });

  it('refuses a config file that is not TOML, naming the file and the line', () => {
    expect(problems(() => loadTemporalConnection({ TEMPORAL_CONFIG_FILE: at('broken.toml') }))).toEqual([
      `TEMPORAL_CONFIG_FILE: cannot read ${at('broken.toml')}: Invalid TOML document: illegal character in key (line 1)`,
    ]);
  });
});

describe('the processes', () => {
  it('give the worker and the bridge the connection in place of the TEMPORAL_ variables', () => {
    const env = { ...none(), TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_API_KEY: 'k' };
    const expected = { address: 'temporal:7233', namespace: 'default', apiKey: 'k', tls: {} };
    const worker = loadWorkerConfig(env);
    expect(worker).toEqual({
      ARMADA_TASK_QUEUE: 'armada',
      ARMADA_METRICS_PORT: 9465,
      ARMADA_LOG_LEVEL: 'info',
      ARMADA_SHUTDOWN_GRACE_SECONDS: 30,
      temporal: expected,
    });
    const bridge = loadBridgeConfig(env);
    expect(bridge.temporal).toEqual(expected);
    expect(Object.keys(bridge).filter((name) => name.startsWith('TEMPORAL_'))).toEqual([]);
    expect(temporalTarget(env)).toEqual({ ...expected, taskQueue: 'armada' });
  });

  it('give the bridge a settle window of 1 s by default; 0 turns it off, a negative one is refused', () => {
    expect(loadBridgeConfig(none()).ARMADA_SETTLE_SECONDS).toBe(1);
    expect(loadBridgeConfig({ ...none(), ARMADA_SETTLE_SECONDS: '0' }).ARMADA_SETTLE_SECONDS).toBe(0);
    expect(problems(() => loadBridgeConfig({ ...none(), ARMADA_SETTLE_SECONDS: '-1' }))).toEqual([
      'ARMADA_SETTLE_SECONDS: ARMADA_SETTLE_SECONDS must be 0 or more seconds',
    ]);
  });

  it("report a bad TEMPORAL_ variable beside the process's own", () => {
    expect(problems(() => loadBridgeConfig({ ...none(), TEMPORAL_TLS: 'on', ARMADA_WORKERS: '0' }))).toEqual([
      'TEMPORAL_TLS: must be true or false, not "on"',
      expect.stringMatching(/^ARMADA_WORKERS: /),
    ]);
  });
});

describe('connection options', () => {
  const mtls = () => ({
    ...none(),
    TEMPORAL_ADDRESS: '127.0.0.1:7233',
    TEMPORAL_TLS_CLIENT_CERT_PATH: at('client.pem'),
    TEMPORAL_TLS_CLIENT_KEY_PATH: at('client.key'),
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: at('ca.pem'),
    TEMPORAL_TLS_SERVER_NAME: 'localhost',
  });

  it('are plain text without TLS', () => {
    const connection = loadTemporalConnection(none());
    expect(nativeConnectionOptions(connection)).toEqual({ address: 'localhost:7233', tls: false });
    expect(clientConnectionOptions(connection)).toEqual({ address: 'localhost:7233', tls: false });
  });

  it("carry the files' contents, the server name and the API key", () => {
    const connection = loadTemporalConnection({ ...mtls(), TEMPORAL_API_KEY: 'k' });
    const expected = {
      address: '127.0.0.1:7233',
      apiKey: 'k',
      tls: {
        serverNameOverride: 'localhost',
        serverRootCACertificate: readFileSync(at('ca.pem')),
        clientCertPair: { crt: readFileSync(at('client.pem')), key: readFileSync(at('client.key')) },
      },
    };
    expect(nativeConnectionOptions(connection)).toEqual(expected);
    expect(clientConnectionOptions(connection)).toEqual(expected);
  });

  it('carry PEM text written in the profile itself', () => {
    const pem = readFileSync(at('ca.pem'), 'utf8');
    writeFileSync(at('inline.toml'), `[profile.default.tls]\nserver_ca_cert_data = """\n${pem}"""\n`);
    const connection = loadTemporalConnection({ TEMPORAL_CONFIG_FILE: at('inline.toml') });
    const tls = clientConnectionOptions(connection).tls as { serverRootCACertificate: Buffer };
    expect(tls.serverRootCACertificate.toString()).toBe(pem);
  });

  it('name the variable and the file that cannot be read', () => {
    writeFileSync(at('fleeting.pem'), 'x');
    const connection = loadTemporalConnection({
      ...mtls(),
      TEMPORAL_TLS_CLIENT_CERT_PATH: at('fleeting.pem'),
    });
    rmSync(at('fleeting.pem'));
    expect(() => nativeConnectionOptions(connection)).toThrow(
      `TEMPORAL_TLS_CLIENT_CERT_PATH: cannot read ${at('fleeting.pem')} (ENOENT)`,
    );
  });

  /**
   * The dev server (temporal CLI 1.5.1) has no TLS options, so a TLS server that asks for a
   * client certificate signed by the test CA stands in front of it and passes the bytes through.
   */
  describe('against the dev server behind an mTLS proxy', () => {
    let proxy: { address: string; close: () => Promise<void> };
    beforeAll(async () => {
      proxy = await mtlsProxy(process.env.TEMPORAL_ADDRESS!);
    });
    afterAll(() => proxy.close());
    const env = () => ({ ...mtls(), TEMPORAL_ADDRESS: proxy.address });

    it('the client connects with the CA and its certificate', async () => {
      const connection = await Connection.connect(clientConnectionOptions(loadTemporalConnection(env())));
      try {
        await connection.workflowService.getSystemInfo({});
      } finally {
        await connection.close();
      }
    });

    it("the worker's native connection connects with the CA and its certificate", async () => {
      const connection = await NativeConnection.connect(
        nativeConnectionOptions(loadTemporalConnection(env())),
      );
      await connection.close();
    });

    it.each([
      ['the CA', { TEMPORAL_TLS_SERVER_CA_CERT_PATH: '' }],
      ['a client certificate', { TEMPORAL_TLS_CLIENT_CERT_PATH: '', TEMPORAL_TLS_CLIENT_KEY_PATH: '' }],
    ])('the client cannot connect without %s', async (_, without) => {
      const options = clientConnectionOptions(loadTemporalConnection({ ...env(), ...without }));
      await expect(Connection.connect({ ...options, connectTimeout: 3000 })).rejects.toThrow();
    });
  });
});

/** A TLS server requiring a client certificate of the test CA, piping each connection to `upstream`. */
async function mtlsProxy(upstream: string): Promise<{ address: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    return socket;
  };
  const server = createTlsServer(
    {
      key: readFileSync(at('server.key')),
      cert: readFileSync(at('server.pem')),
      ca: readFileSync(at('ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (client) => {
      const server = track(tcpConnect(hostPort(upstream)));
      track(client).pipe(server).pipe(client);
      client.on('close', () => server.destroy());
      server.on('close', () => client.destroy());
    },
  );
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
