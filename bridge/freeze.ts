import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { RunRequest } from '../runs/requests';
import { kinds } from '../api/kinds';
import type { Carried, Request } from '../core/control';
import { freezeSignal, unfreezeSignal } from '../workflows/messages';
import { ArmadaKind, ArmadaNamespace } from '../workflows/search-attributes';
import { policiesFor, type PolicyView } from '../api/policy-rules';

/** The workflow types that hold at safe points for a freeze (workflows/holds.ts). */
const HOLDING_TYPES = [
  'deployRun',
  'manifestWorkflow',
  'groupWorkflow',
  'chartWorkflow',
  'canaryWorkflow',
  'deployerWorkflow',
];

/**
 * The freeze over the objects of `namespace`, or undefined: every valid ArmadaPolicy with a
 * `freeze` whose `namespaces` match (`['*']`: the whole cluster); their names and reasons are
 * joined, by name.
 */
export function freezeOf(namespace: string, policies: readonly PolicyView[]): Request | undefined {
  const freezing = policiesFor(namespace, policies)
    .filter((p) => p.spec.freeze)
    .sort((a, b) => a.name.localeCompare(b.name));
  if (!freezing.length) return undefined;
  return {
    by: `ArmadaPolicy ${freezing.map((p) => p.name).join(', ')}`,
    reason: freezing.map((p) => p.spec.freeze!.reason).join('; '),
  };
}

/** The run request started under `frozen`: it begins held (its input's `carried.frozen`). */
export function startedFrozen(run: RunRequest, frozen: Request | undefined): RunRequest {
  if (!frozen || !HOLDING_TYPES.includes(run.workflowType)) return run;
  const input = run.input as { carried?: Carried };
  return { ...run, input: { ...input, carried: { ...input.carried, frozen } } };
}

const same = (a: Request | undefined, b: Request | undefined) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Tells the running runs of the watched namespaces when their freeze changes: `freeze` with its
 * reason, or `unfreeze` once no policy freezes their namespace. Each run holds at its next safe
 * point (or goes on); a manifest passes it on to its group, a group to its charts, a chart to its
 * canary (they carry no namespace search attribute of their own). The first telling after a start
 * tells every run, since what a bridge before this one sent is unknown; later ones only the runs
 * whose freeze changed, so the others' histories get no signal.
 */
export class FreezeBroadcast {
  /** The policies as the runs were last told of them; undefined before the first telling. */
  private told: readonly PolicyView[] | undefined;
  private telling: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: Client,
    private readonly namespaces: readonly string[] | 'all',
    private readonly log: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void,
  ) {}

  /**
   * Tells the runs whose freeze differs from what they were last told; one telling at a time.
   * Call it on every policy event, resyncs included: a telling that failed is tried again then.
   */
  policiesChanged(policies: readonly PolicyView[]): void {
    this.telling = this.telling
      .then(() => this.tell([...policies]))
      .catch((err: unknown) =>
        this.log('warn', 'cannot tell the runs of a freeze; trying again at the next policy event', {
          error: (err as Error).message,
        }),
      );
  }

  private async tell(policies: readonly PolicyView[]): Promise<void> {
    const told = this.told;
    const changed = (namespace: string) =>
      told === undefined || !same(freezeOf(namespace, told), freezeOf(namespace, policies));
    const watched = this.namespaces;
    const scope =
      watched === 'all' ? [] : [`${ArmadaNamespace.name} IN (${watched.map((n) => `'${n}'`).join(', ')})`];
    const query = [
      `ExecutionStatus = 'Running'`,
      `${ArmadaKind.name} IN (${Object.keys(kinds)
        .map((k) => `'${k}'`)
        .join(', ')})`,
      ...scope,
    ].join(' AND ');
    let runs = 0;
    for await (const info of this.client.workflow.list({ query })) {
      const namespace = info.typedSearchAttributes.get(ArmadaNamespace);
      if (namespace === undefined || !HOLDING_TYPES.includes(info.type) || !changed(namespace)) continue;
      const freeze = freezeOf(namespace, policies);
      const handle = this.client.workflow.getHandle(info.workflowId, info.runId);
      try {
        await (freeze ? handle.signal(freezeSignal, freeze) : handle.signal(unfreezeSignal));
        runs++;
      } catch (err) {
        // A run that ended since it was listed needs no word.
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    }
    this.told = policies;
    if (runs) this.log('info', 'runs told of a freeze change', { runs });
  }
}
