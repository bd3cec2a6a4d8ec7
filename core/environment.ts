/**
 * The environment variables the processes read outside their zod config schemas (worker/config.ts,
 * bridge/config.ts, runs/connection.ts, runs/config.ts): each one declared here, with who reads
 * it, its default and its meaning, and read through `variable` (the local stack's by its scripts:
 * deploy/tools/build.sh, deploy/images/build.sh). docs/reference/environment.md is generated from
 * both, and a test fails on a variable the product reads by name that neither declares.
 */

/** A process (or script) that reads the environment. */
export type Reader = 'worker' | 'bridge' | 'armadactl' | 'codec server' | 'local stack';

export interface DeclaredVariable {
  readers: readonly Reader[];
  default: string;
  meaning: string;
}

export const DECLARED_VARIABLES = {
  KUBECONFIG: {
    readers: ['worker', 'bridge', 'armadactl'],
    default: '`~/.kube/config` (npm start: the sandbox when that does not answer)',
    meaning: 'the cluster to deploy to; armadactl checks your rights there (who you are, what you may steer)',
  },
  ARMADA_KUBECONFIG: {
    readers: ['worker', 'bridge'],
    default: '`KUBECONFIG`, else `~/.kube/config`, else in-cluster',
    meaning: 'this kubeconfig instead, for the Kubernetes calls and helm (armadactl never reads it)',
  },
  'ARMADA_<TOOL>': {
    readers: ['worker', 'armadactl', 'local stack'],
    default: '`.tools/bin/<tool>`, else `PATH`',
    meaning: 'a binary to use instead of the built one, e.g. `ARMADA_HELM`',
  },
  ARMADA_TOOLS_CACHE: {
    readers: ['local stack'],
    default: '`~/.cache/armada-temporal/tools`',
    meaning: 'where built tools are cached',
  },
  ARMADA_IMAGES_CACHE: {
    readers: ['local stack'],
    default: '`~/.cache/armada-temporal/images`',
    meaning: 'where the container images built here are cached, with the registry that serves them',
  },
  ARMADA_TEMPORAL_UI: {
    readers: ['worker'],
    default: '`http://localhost:8233`',
    meaning: 'base of the Temporal UI links written into CR status',
  },
  ARMADA_CHARTS_ROOT: {
    readers: ['worker', 'armadactl'],
    default: 'the working directory',
    meaning: 'what `local` chart locations are relative to; a chart or link leading outside is refused',
  },
  ARMADA_CHART_CACHE: {
    readers: ['worker', 'armadactl'],
    default: '`<tmpdir>/armada-charts`',
    meaning: 'where chart sources (tarballs, repositories, git, OCI) are fetched to',
  },
  ARMADA_DIGEST_KEY_FILE: {
    readers: ['worker', 'armadactl'],
    default: '`$XDG_STATE_HOME/armada-temporal/digest.key`, made by the worker at its first start',
    meaning:
      'the release digest key, base64 of 32+ bytes; set, the file must exist (`armadactl diff` reads it)',
  },
  ARMADA_STEERING_KEY_FILE: {
    readers: ['bridge'],
    default: 'made once in `$XDG_STATE_HOME/armada-temporal/`',
    meaning: 'Ed25519 key (PKCS8 PEM) signing the steering the bridge forwards',
  },
  XDG_STATE_HOME: {
    readers: ['worker', 'bridge', 'armadactl'],
    default: '`~/.local/state`',
    meaning: 'where the default digest key and steering key are kept (`armada-temporal/`)',
  },
  XDG_CONFIG_HOME: {
    readers: ['worker', 'bridge', 'armadactl'],
    default: '`~/.config`',
    meaning: "where the Temporal CLI's config file is looked for (`temporalio/temporal.toml`)",
  },
  ARMADA_ENCRYPTION_KEYS: {
    readers: ['worker', 'bridge', 'armadactl', 'codec server'],
    default: 'none: payloads not encrypted',
    meaning: '`id:base64key,...` (32-byte keys); the first encrypts',
  },
  ARMADA_ENCRYPTION_KEYS_FILE: {
    readers: ['worker', 'bridge', 'armadactl', 'codec server'],
    default: 'none',
    meaning: "the same, one `id:key` per line (a mounted Secret), after the variable's",
  },
  ARMADA_CODEC_HOST: {
    readers: ['codec server'],
    default: '`127.0.0.1`',
    meaning: 'address it listens on; any but a loopback address needs `ARMADA_CODEC_TOKEN`',
  },
  ARMADA_CODEC_PORT: { readers: ['codec server'], default: '`8888`', meaning: 'port it listens on' },
  ARMADA_CODEC_TOKEN: { readers: ['codec server'], default: 'none', meaning: 'the bearer token required' },
  ARMADA_CODEC_CORS_ORIGIN: {
    readers: ['codec server'],
    default: '`http://localhost:8233`',
    meaning: 'the browser origin allowed (the Temporal UI)',
  },
  USER: {
    readers: ['armadactl'],
    default: 'the account name',
    meaning: 'with `--as-temporal-admin`: recorded as `temporal-admin:$USER`',
  },
} as const satisfies Record<string, DeclaredVariable>;

export type DeclaredName = keyof typeof DECLARED_VARIABLES;

/** A declared variable's value; empty counts as unset (compose files and charts pass empty values). */
export function variable(env: Record<string, string | undefined>, name: DeclaredName): string | undefined {
  return env[name] || undefined;
}

/** The variable that overrides a built tool's binary: `ARMADA_<TOOL>` (kube-apiserver: ARMADA_KUBE_APISERVER). */
export const toolVariable = (tool: string) => `ARMADA_${tool.toUpperCase().replace(/-/g, '_')}`;
