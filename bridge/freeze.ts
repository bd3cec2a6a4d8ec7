import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { RunRequest } from '../runs/requests';
import { freezeSignal, unfreezeSignal } from '../workflows/holds';
import type { Carried, Request } from '../workflows/messages';
import type { PolicyView } from './policy';

/** The workflow types that hold at safe points for a freeze (workflows/holds.ts). */
const HOLDING_TYPES = [
  'manifestWorkflow',
  'groupWorkflow',
  'chartWorkflow',
  'canaryWorkflow',
  'deployerWorkflow',
];

/**
 * The cluster freeze the policies set, or undefined: every valid ArmadaPolicy with a `freeze`
 * freezes the whole cluster (its `namespaces` do not narrow it); their names and reasons are
 * joined, by name.
 */
export function clusterFreeze(policies: readonly PolicyView[]): Request | undefined {
  const freezing = policies.filter((p) => p.spec?.freeze).sort((a, b) => a.name.localeCompare(b.name));
  if (!freezing.length) return undefined;
  return {
    by: `ArmadaPolicy ${freezing.map((p) => p.name).join(', ')}`,
    reason: freezing.map((p) => p.spec!.freeze!.reason).join('; '),
  };
}

/** The run request started under `frozen`: it begins held (its input's `carried.frozen`). */
export function startedFrozen(run: RunRequest, frozen: Request | undefined): RunRequest {
  if (!frozen || !HOLDING_TYPES.includes(run.workflowType)) return run;
  const input = run.input as { carried?: Carried };
  return { ...run, input: { ...input, carried: { ...input.carried, frozen } } };
}

/**
 * Tells every running run when the cluster freeze changes: `freeze` with its reason, or
 * `unfreeze` once no policy freezes. Each run holds at its next safe point (or goes on). The
 * first call after a start tells them all, since what a bridge before this one sent is unknown.
 */
export class FreezeBroadcast {
  private told: string | undefined;
  private telling: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: Client,
    private readonly log: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void,
  ) {}

  /**
   * Tells the runs if the freeze differs from what they were last told; one telling at a time.
   * Call it on every policy event, resyncs included: a telling that failed is tried again then.
   */
  policiesChanged(policies: readonly PolicyView[]): void {
    this.telling = this.telling
      .then(() => this.tell(clusterFreeze(policies)))
      .catch((err: unknown) =>
        this.log(
          'warn',
          'cannot tell the runs of the cluster freeze; trying again at the next policy event',
          {
            error: (err as Error).message,
          },
        ),
      );
  }

  private async tell(freeze: Request | undefined): Promise<void> {
    const key = JSON.stringify(freeze ?? null);
    if (key === this.told) return;
    const query = `ExecutionStatus = 'Running' AND WorkflowType IN (${HOLDING_TYPES.map((t) => `'${t}'`).join(', ')})`;
    let runs = 0;
    for await (const info of this.client.workflow.list({ query })) {
      const handle = this.client.workflow.getHandle(info.workflowId, info.runId);
      try {
        await (freeze ? handle.signal(freezeSignal, freeze) : handle.signal(unfreezeSignal));
        runs++;
      } catch (err) {
        // A run that ended since it was listed needs no word.
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    }
    this.told = key;
    this.log('info', freeze ? 'cluster frozen: runs told' : 'cluster freeze lifted: runs told', {
      runs,
      ...freeze,
    });
  }
}
