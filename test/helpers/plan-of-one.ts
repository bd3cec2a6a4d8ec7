import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { NonRetryable } from '../../core/failures';
import type { GroupOutcome, ManifestOutcome } from '../../core/contracts/workflows';

/**
 * What the one group of a plan of one did (a standalone group's or Deployer's `deployRun`): its
 * result's one group, or, when the run failed, that of the outcome its failure carries (a group
 * workflow returned it with `failed`; deployRun fails with it, as a manifest's run does).
 */
export async function groupOutcomeOf(run: WorkflowHandle): Promise<GroupOutcome> {
  let outcome: ManifestOutcome;
  try {
    outcome = (await run.result()) as ManifestOutcome;
  } catch (err) {
    const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
    if (!(cause instanceof ApplicationFailure) || cause.type !== NonRetryable.ManifestFailed) throw err;
    outcome = cause.details![0] as ManifestOutcome;
  }
  if (outcome.groups.length !== 1) throw new Error(`not a plan of one: ${outcome.groups.length} groups`);
  return outcome.groups[0];
}
