import { ApplicationFailure } from '@temporalio/common';
import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KEYRING_SECRET_KEY, type ChartSource } from '../../api/chart';
import { NonRetryable } from '../../core/failures';
import { runHelm } from '../helm/exec';
import { readObjectData } from '../values/read';
import type { ChartObjectRef } from '../../core/contracts/charts';
import { inPrivateDirectory } from './credentials';

/**
 * Chart provenance (`source.verify`): helm's provenance file, a PGP-signed statement of the
 * archive's sha256, checked by `helm verify` against the public keys of a Secret of the chart's
 * own namespace, on the archive's bytes as fetched, before the chart is used for anything.
 * The keyring is read as the chart's ServiceAccount, like `source.secret_ref`, and reaches helm
 * only as a file of a private directory: it never enters a run's input, result or history.
 */

/** The public keys a chart's provenance must be signed with, and where they came from. */
export interface Keyring {
  keys: Buffer;
  /** As failures name it: `Secret team-a/signers`. */
  from: string;
}

/**
 * The keyring `source.verify.keyring_secret` names, read now from `owner`'s namespace as its
 * ServiceAccount; undefined for a source that need not be verified. A missing Secret or key
 * fails non-retryably (ChartUnverified), before anything is fetched.
 */
export async function readKeyring(
  source: ChartSource,
  owner: ChartObjectRef | undefined,
  what: string,
  signal?: AbortSignal,
): Promise<Keyring | undefined> {
  const name = source.verify?.keyring_secret;
  if (name === undefined) return undefined;
  if (!owner)
    throw chartUnverified(
      `${what}: source.verify names Secret ${name}, but the request names no ArmadaChart whose namespace holds it`,
    );
  const { namespace } = owner;
  const described = `${ofChart(owner)}source.verify.keyring_secret (Secret ${name})`;
  const data = await readObjectData(owner, { kind: 'Secret', name }, described, signal, 'base64');
  const keys = data?.[KEYRING_SECRET_KEY];
  if (keys === undefined)
    throw chartUnverified(
      `${described}: ${data ? `Secret ${namespace}/${name} has no key ${KEYRING_SECRET_KEY}` : `Secret ${name} not found in namespace ${namespace}`}; ` +
        `create it with the signers' public keys: kubectl create secret generic ${name} --from-file=${KEYRING_SECRET_KEY}=pubring.gpg`,
    );
  return { keys: Buffer.from(keys, 'base64'), from: `Secret ${namespace}/${name}` };
}

/**
 * Verifies the chart archive `archive` (shown as `fileName`) against `provenance`, the content of
 * its `.prov` file, with `keyring`: `helm verify` in a private directory where the archive is
 * linked beside its provenance file. A signature by no key of the keyring, a digest that does not
 * match, or a provenance file helm cannot read fails non-retryably (ChartUnverified) with helm's
 * reason.
 */
export async function verifyProvenance(
  archive: string,
  fileName: string,
  provenance: Buffer,
  keyring: Keyring,
  what: string,
): Promise<void> {
  await inPrivateDirectory(async (dir) => {
    const linked = path.join(dir, fileName);
    await symlink(archive, linked);
    await writeFile(`${linked}.prov`, provenance, { mode: 0o600 });
    const keys = path.join(dir, 'keyring.gpg');
    await writeFile(keys, keyring.keys, { mode: 0o600 });
    try {
      await runHelm(['verify', linked, '--keyring', keys]);
    } catch (err) {
      if (!(err instanceof ApplicationFailure) || err.type === NonRetryable.HelmNotFound) throw err;
      const reason = err.message.replace(/^helm verify \S+ failed \(exit \S+\): (Error: )?/, '');
      throw chartUnverified(`${what}: ${reason} (keyring ${keyring.from})`);
    }
  });
}

/** `ArmadaChart <ns>/<name> (release <ns>/<release>) `, as provenance failures open. */
export function ofChart(owner: ChartObjectRef): string {
  const release = owner.release ? ` (release ${owner.release})` : '';
  return `ArmadaChart ${owner.namespace}/${owner.chart}${release} `;
}

/** A chart that must not be deployed: it failed or lacks verification; retrying cannot help. */
export function chartUnverified(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`provenance: ${message}`, NonRetryable.ChartUnverified);
}
