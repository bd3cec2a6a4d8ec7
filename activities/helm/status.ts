import { runHelm } from './exec';
import { parseRelease, type ReleaseRef, type ReleaseStatus } from './release';
import { ApplicationFailure } from '@temporalio/common';

/** Activity: the release as helm reports it, or null when it does not exist. Writes nothing. */
export async function helmStatus(ref: ReleaseRef): Promise<ReleaseStatus | null> {
  try {
    const { stdout } = await runHelm([
      'status',
      ref.release,
      '--namespace',
      ref.namespace,
      '--output',
      'json',
    ]);
    return parseRelease(stdout);
  } catch (err) {
    if (err instanceof ApplicationFailure && /release: not found/.test(err.message)) return null;
    throw err;
  }
}
