import { z } from 'zod';
import { comparableDigest } from '../charts/digest';
import { digestKey } from '../charts/digest-key';
import { heartbeating } from '../process';
import { runHelm } from './exec';
import { prepareRetriedWrite } from './recover';
import {
  DIGEST_PREFIX,
  HELM_DEFAULT_TIMEOUT_SECONDS,
  OWNER_LABEL,
  OWNER_LABEL_VALUE,
  parseRelease,
  type ReleaseStatus,
} from './release';
import { runHelmWithChart } from './with-chart';
import type { UpgradeRequest } from '../../core/contracts/helm';

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
  // A run prepared by a worker before digests were keyed asks for an unkeyed one; the observed
  // digest is in the keyed form.
  const wanted = comparableDigest(req.digest, digestKey());
  const retry = await prepareRetriedWrite(
    req,
    req.timeoutSeconds ?? HELM_DEFAULT_TIMEOUT_SECONDS,
    (o) => o.status === 'deployed' && wanted !== undefined && o.digest === wanted,
  );
  if (!retry.proceed) {
    const { stdout } = await runHelm(
      ['status', req.release, '--namespace', req.namespace, '--output', 'json'],
      req.actAs,
    );
    return parseRelease(stdout);
  }
  const { stdout } = await runHelmWithChart(req, (chartPath, valuesFile) =>
    upgradeArgs(req, chartPath, valuesFile),
  );
  return parseRelease(stdout);
}

/** The part of a dry run's `-o json` release that upgradeDryRun reads: what it would deploy. */
const dryRunSchema = z.object({ manifest: z.string().default('') });

/**
 * The manifest helmUpgradeInstall would write for `req`, without writing it: the same helm
 * command with `--dry-run=server`. helm reads the release and the cluster (the objects it would
 * take over, `lookup`, schema validation) and writes nothing, not even a namespace. Not an
 * activity: `armadactl diff` calls it in its own process. Hooks are not in the manifest, as they
 * are not in `helm get manifest`.
 */
export async function upgradeDryRun(req: UpgradeRequest): Promise<string> {
  const { stdout } = await runHelmWithChart(req, (chartPath, valuesFile) => [
    ...upgradeArgs(req, chartPath, valuesFile),
    '--dry-run=server',
  ]);
  return dryRunSchema.parse(JSON.parse(stdout)).manifest;
}
