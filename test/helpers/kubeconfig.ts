import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { toolPath } from '../../activities/tools';

const repo = path.resolve(__dirname, '../..');

/**
 * Writes `file`, a kubeconfig for the cluster of `adminKubeconfig` as ServiceAccount
 * `namespace`/`serviceAccount`, with a token from the TokenRequest API (`kubectl create token`)
 * valid for `duration` (e.g. `1h`), and returns `file`. Only its owner may read it (a token).
 */
export async function serviceAccountKubeconfig(
  adminKubeconfig: string,
  namespace: string,
  serviceAccount: string,
  file: string,
  duration: string,
): Promise<string> {
  const env = { ...process.env, KUBECONFIG: adminKubeconfig };
  const kubectl = async (...args: string[]) =>
    (await promisify(execFile)(toolPath('kubectl'), args, { cwd: repo, env })).stdout;
  const admin = JSON.parse(await kubectl('config', 'view', '--flatten', '--minify', '--output', 'json')) as {
    clusters: { cluster: Record<string, unknown> }[];
  };
  const server = admin.clusters[0]?.cluster;
  if (!server) throw new Error(`${adminKubeconfig} names no cluster`);
  const token = (
    await kubectl('create', 'token', serviceAccount, '-n', namespace, `--duration=${duration}`)
  ).trim();
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'sandbox', cluster: server }],
    users: [{ name: serviceAccount, user: { token } }],
    contexts: [{ name: serviceAccount, context: { cluster: 'sandbox', user: serviceAccount } }],
    'current-context': serviceAccount,
  };
  await writeFile(file, JSON.stringify(config), { mode: 0o600 });
  return file;
}
