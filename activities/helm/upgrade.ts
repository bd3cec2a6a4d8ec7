import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runHelm } from './exec';
import { parseRelease, type ReleaseRef, type ReleaseStatus } from './release';

export interface UpgradeRequest extends ReleaseRef {
  /** A chart reference helm understands: a local directory, a .tgz, repo/name or oci:// URL. */
  chart: string;
  version?: string;
  values?: Record<string, unknown>;
  /** Seconds helm waits for the release's resources to be ready (`--wait=watcher --timeout`). */
  waitTimeoutSeconds?: number;
}

/**
 * The `helm upgrade --install` arguments for a request. Values travel by file (never on the
 * command line, where they would show in `ps`); `valuesFile` is its path.
 */
export function upgradeArgs(req: UpgradeRequest, valuesFile: string): string[] {
  const args = ['upgrade', '--install', req.release, req.chart, '--namespace', req.namespace];
  args.push('--create-namespace', '--values', valuesFile, '--output', 'json');
  if (req.version) args.push('--version', req.version);
  if (req.waitTimeoutSeconds !== undefined) {
    args.push('--wait=watcher', '--timeout', `${req.waitTimeoutSeconds}s`);
  }
  return args;
}

/**
 * Activity: installs or upgrades a release with the real helm CLI and returns what helm reports.
 * Writes: one Helm revision. Returns: the release's revision and status.
 */
export async function helmUpgradeInstall(req: UpgradeRequest): Promise<ReleaseStatus> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armada-values-'));
  try {
    const valuesFile = path.join(dir, 'values.json');
    await writeFile(valuesFile, JSON.stringify(req.values ?? {}), { mode: 0o600 });
    const { stdout } = await runHelm(upgradeArgs(req, valuesFile));
    return parseRelease(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
