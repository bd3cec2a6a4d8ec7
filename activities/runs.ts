import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';

/**
 * The workflow type of the run that holds `workflowId` (a release's lock) now, or null when no
 * run does: a deploy that finds its release locked waits for a drift repair, and is refused by
 * anything else (workflows/group-deployers.ts underLock).
 */
export async function lockHolder(workflowId: string): Promise<string | null> {
  try {
    const { status, type } = await Context.current().client.workflow.getHandle(workflowId).describe();
    return status.name === 'RUNNING' ? type : null;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}
