import { ApplicationFailure } from '@temporalio/common';
import type { ChartSource } from '../../api/chart';
import {
  REDACTED_CREDENTIAL,
  basicAuthorization,
  gitConfigEnv,
  gitCredentialConfig,
  redactCredentials,
  registryConfig,
  repositoryConfig,
  type HelmConfigFiles,
  type SourceCredentials,
} from '../../activities/charts/credentials';
import { pullCommands } from '../../activities/charts/source';
import { NonRetryable } from '../../core/failures';

const login: SourceCredentials = { username: 'armada', password: 'p@ss:word', from: 'Secret team-a/login' };
/** base64 of `armada:p@ss:word`, what a Basic header and a registry config carry. */
const LOGIN_BASE64 = Buffer.from('armada:p@ss:word').toString('base64');
describe('credentials for each tool, never in its arguments', () => {
  it('makes a Basic Authorization header of user and password (RFC 7617)', () => {
    expect(basicAuthorization(login)).toBe(`Basic ${LOGIN_BASE64}`);
  });

  it('gives git the header in its environment, for URLs under the location only', () => {
    expect(gitConfigEnv(gitCredentialConfig('https://git.example.com/charts.git', login))).toEqual({
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.https://git.example.com/charts.git.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${LOGIN_BASE64}`,
    });
  });

  it('gives git no configuration variables when there is no configuration', () => {
    expect(gitConfigEnv({})).toEqual({});
  });

  it.each([
    ['keys a registry by host and port', 'oci://127.0.0.1:5000/charts/web', '127.0.0.1:5000'],
    ['keys Docker Hub as helm registry login does', 'oci://docker.io/org/web', 'https://index.docker.io/v1/'],
  ])('%s', (_name, location, key) => {
    expect(JSON.parse(registryConfig(location, login))).toEqual({ auths: { [key]: { auth: LOGIN_BASE64 } } });
  });

  it('writes a repositories.yaml of the one repository', () => {
    expect(JSON.parse(repositoryConfig('https://charts.example.com/', login))).toEqual({
      apiVersion: 'v1',
      repositories: [
        {
          name: 'armada-source',
          url: 'https://charts.example.com/',
          username: 'armada',
          password: 'p@ss:word',
        },
      ],
    });
  });

  const config: HelmConfigFiles = {
    repositories: '/tmp/p/repositories.yaml',
    repositoryCache: '/tmp/p/repository-cache',
    registry: '/tmp/p/registry.json',
  };
  const repo: ChartSource = {
    type: 'repo',
    location: 'https://charts.example.com/',
    chart: 'web',
    version: '1.0.0',
  };
  const oci: ChartSource = {
    type: 'oci',
    location: 'oci://registry.example.com/charts/web',
    version: '1.0.0',
  };

  it.each<[string, ChartSource, HelmConfigFiles | undefined, string[][]]>([
    [
      'pulls a public repository chart with --repo',
      repo,
      undefined,
      [['pull', 'web', '--repo', 'https://charts.example.com/', '--destination', '/d', '--version', '1.0.0']],
    ],
    [
      "updates a private repository's index, then pulls from it, through its own configuration",
      repo,
      config,
      [
        [
          'repo',
          'update',
          '--repository-config',
          config.repositories,
          '--repository-cache',
          config.repositoryCache,
        ],
        [
          'pull',
          'armada-source/web',
          '--destination',
          '/d',
          '--version',
          '1.0.0',
          '--repository-config',
          config.repositories,
          '--repository-cache',
          config.repositoryCache,
        ],
      ],
    ],
    [
      'pulls a public OCI chart',
      oci,
      undefined,
      [['pull', 'oci://registry.example.com/charts/web', '--destination', '/d', '--version', '1.0.0']],
    ],
    [
      'pulls a private OCI chart with its own registry configuration',
      oci,
      config,
      [
        [
          'pull',
          'oci://registry.example.com/charts/web',
          '--destination',
          '/d',
          '--version',
          '1.0.0',
          '--registry-config',
          config.registry,
        ],
      ],
    ],
  ])('%s', (_name, source, files, commands) => {
    expect(pullCommands(source, '/d', files)).toEqual(commands);
  });

  it('pulls the provenance file too when the source must be verified, and verifies nothing itself', () => {
    const verify = { keyring_secret: 'signers' };
    expect(pullCommands({ type: 'oci', location: 'oci://r.example.com/web', verify }, '/d')).toEqual([
      ['pull', 'oci://r.example.com/web', '--destination', '/d', '--prov'],
    ]);
    expect(
      pullCommands(
        { type: 'repo', location: 'https://c.example.com/', chart: 'web', version: '1.0.0', verify },
        '/d',
      ),
    ).toEqual([
      [
        'pull',
        'web',
        '--repo',
        'https://c.example.com/',
        '--destination',
        '/d',
        '--version',
        '1.0.0',
        '--prov',
      ],
    ]);
  });
});

describe('redactCredentials', () => {
  const failure = ApplicationFailure.create({
    type: NonRetryable.SourceUnauthorized,
    nonRetryable: true,
    message: `helm said p@ss:word and Basic ${LOGIN_BASE64}`,
    details: [{ exitCode: 1 }],
  });

  it('replaces the password and its Basic form, keeping type, retryability and details', () => {
    const redacted = redactCredentials(failure, login) as ApplicationFailure;
    expect(redacted).toBeInstanceOf(ApplicationFailure);
    expect(redacted).toMatchObject({
      type: NonRetryable.SourceUnauthorized,
      nonRetryable: true,
      message: `helm said ${REDACTED_CREDENTIAL} and Basic ${REDACTED_CREDENTIAL}`,
      details: [{ exitCode: 1 }],
    });
  });

  it('redacts a plain error too, and leaves an error without credentials as it is', () => {
    expect((redactCredentials(new Error('git: p@ss:word'), login) as Error).message).toBe(
      `git: ${REDACTED_CREDENTIAL}`,
    );
    const clean = new Error('git: refused');
    expect(redactCredentials(clean, login)).toBe(clean);
    expect(redactCredentials(failure, undefined)).toBe(failure);
  });
});
