import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { toolPath } from '../../activities/tools';
import type { SuiteRbac } from './global-setup';
import type { TestTemporal } from './temporal';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __temporal__?: TestTemporal }).__temporal__?.server.stop();
  // The run's RBAC release (global-setup.ts installRbac): its ClusterRoles are cluster-wide.
  const rbac = (globalThis as { __armadaRbac__?: SuiteRbac }).__armadaRbac__;
  if (rbac) {
    await promisify(execFile)(toolPath('helm'), [
      'uninstall',
      rbac.release,
      '--namespace',
      rbac.namespace,
    ]).catch((err: Error) =>
      console.warn(`could not uninstall the suite's RBAC release ${rbac.release}: ${err.message}`),
    );
    await rm(rbac.dir, { recursive: true, force: true });
  }
}
