import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chartOnThisWorker, type ChartContent } from '../charts/source';
import { heartbeating } from '../process';
import { chartValues, type ValuesFrom } from '../values/read';
import { runHelm } from './exec';
import { prepareRetriedWrite } from './recover';
import {
  DIGEST_PREFIX,
  HELM_DEFAULT_TIMEOUT_SECONDS,
  OWNER_LABEL,
  OWNER_LABEL_VALUE,
  parseRelease,
  type ReleaseRef,
  type ReleaseStatus,
} from './release';

export interface UpgradeRequest extends ReleaseRef {
  /** The prepared chart, by content: found on (or fetched again to) the worker that runs this. */
  chart: ChartContent;
  version?: string;
  values?: Record<string, unknown>;
  /** Read by this activity and merged under `values`; absent when the chart has no `values_from`. */
  valuesFrom?: ValuesFrom;
  /** Digest of chart and values, recorded in the release so an unchanged apply can be skipped. */
  digest?: string;
  /** Seconds any one Kubernetes operation may take (`--timeout`). */
  timeoutSeconds?: number;
  /** Also wait with Helm's own watcher (`wait.native.enabled`). */
  nativeWait?: boolean;
  /** `upgrade.options.force`: replace resources instead of patching them. */
  force?: boolean;
  /** `upgrade.options.no_hooks`. */
  noHooks?: boolean;
}

/**
 * The `helm upgrade --install` arguments for a request, its chart at `chartPath` on this worker.
 * Values travel by file (never on the command line, where they would show in `ps`); `valuesFile`
 * is its path.
 */
export function upgradeArgs(req: UpgradeRequest, chartPath: string, valuesFile: string): string[] {
  const args = ['upgrade', '--install', req.release, chartPath, '--namespace', req.namespace];
  // A ServiceAccount of a tenant may not write Namespaces (cluster-scoped): its target must exist.
  if (!req.actAs) args.push('--create-namespace');
  args.push('--values', valuesFile, '--output', 'json', '--labels', `${OWNER_LABEL}=${OWNER_LABEL_VALUE}`);
  if (req.version) args.push('--version', req.version);
  if (req.digest) args.push('--description', `${DIGEST_PREFIX}${req.digest}`);
  if (req.timeoutSeconds !== undefined) args.push('--timeout', `${req.timeoutSeconds}s`);
  if (req.nativeWait) args.push('--wait=watcher');
  if (req.force) args.push('--force-replace');
  if (req.noHooks) args.push('--no-hooks');
  return args;
}

/**
 * Activity: installs or upgrades a release with the real helm CLI.
 * Writes: one Helm revision; a retry writes none when the interrupted attempt finished, and a
 * recovery revision first when it left the release pending (see prepareRetriedWrite).
 * Returns: the release as helm reports it.
 */
export function helmUpgradeInstall(req: UpgradeRequest): Promise<ReleaseStatus> {
  // Heartbeats cover the chart fetched again on a miss as well as helm itself.
  return heartbeating(() => upgradeInstall(req));
}

async function upgradeInstall(req: UpgradeRequest): Promise<ReleaseStatus> {
  const retry = await prepareRetriedWrite(
    req,
    req.timeoutSeconds ?? HELM_DEFAULT_TIMEOUT_SECONDS,
    (o) => o.status === 'deployed' && req.digest !== undefined && o.digest === req.digest,
  );
  if (!retry.proceed) {
    const { stdout } = await runHelm(
      ['status', req.release, '--namespace', req.namespace, '--output', 'json'],
      req.actAs,
    );
    return parseRelease(stdout);
  }
  const chartPath = await chartOnThisWorker(req.chart);
  const { values, redact } = await chartValues(req.values, req.valuesFrom);
  // mkdtemp makes the directory 0700: the values file, Secrets' values included, is this
  // process's alone, and gone when helm is.
  const dir = await mkdtemp(path.join(tmpdir(), 'armada-values-'));
  try {
    const valuesFile = path.join(dir, 'values.json');
    await writeFile(valuesFile, JSON.stringify(values), { mode: 0o600 });
    const { stdout } = await runHelm(upgradeArgs(req, chartPath, valuesFile), req.actAs).catch(
      (err: unknown) => {
        throw redact(err);
      },
    );
    return parseRelease(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
