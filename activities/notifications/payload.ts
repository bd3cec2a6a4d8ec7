import type { NotifiedApproval, NotifyingKind, RunEvent } from '../../core/plan/notifications';

/** The armadactl commands a notification offers, for the state the event leaves the run in. */
export interface RunCommands {
  approve?: string;
  rollback?: string;
}

/** The JSON body a webhook receives: the event, the run's Temporal UI link and the commands. */
export interface JsonNotification extends RunEvent {
  links: { run: string };
  commands: RunCommands;
}

const SHORT_NAMES: Record<NotifyingKind, string> = {
  ArmadaManifest: 'amf',
  ArmadaChart: 'act',
  Deployer: 'dpl',
};

/** How armadactl names an event's object: `act/web -n shop`. */
export function armadactlTarget({ kind, namespace, name }: RunEvent['object']): string {
  return `${SHORT_NAMES[kind]}/${name} -n ${namespace}`;
}

/**
 * The commands that act on the run as the event leaves it: approve while it waits at a gate
 * (`--gate` names that one, so a late click passes no other), roll back while it runs, and undo
 * a completed deploy (`rollback --previous`). None once it failed or rolled back.
 *
 *   waiting-approval of act/web at gate `step 2 (50 %)`
 *     → approve: armadactl approve act/web -n shop --gate 'step 2 (50 %)'
 */
export function runCommands(event: RunEvent): RunCommands {
  const target = armadactlTarget(event.object);
  switch (event.event) {
    case 'waiting-approval':
      return {
        approve: `armadactl approve ${target}${event.gate ? ` --gate ${shellQuoted(event.gate)}` : ''}`,
        rollback: `armadactl rollback ${target}`,
      };
    case 'started':
    case 'step-reached':
      return { rollback: `armadactl rollback ${target}` };
    case 'completed':
      return { rollback: `armadactl rollback ${target} --previous` };
    case 'failed':
    case 'rolled-back':
      return {};
  }
}

/** `value` as one shell word: gates hold spaces (`before group apps`). */
function shellQuoted(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

const HEADLINES: Record<RunEvent['event'], string> = {
  started: 'started',
  'waiting-approval': 'waits for approval',
  'step-reached': 'reached a canary step',
  failed: 'failed',
  'rolled-back': 'rolled back',
  completed: 'completed',
};

/** One line saying what happened: `ArmadaChart shop/web reached a canary step: step 2/3 at 50 %`. */
export function headline(event: RunEvent): string {
  const { kind, namespace, name } = event.object;
  const step = event.step && `step ${event.step.number}/${event.step.of} at ${event.step.percent} %`;
  const gate = event.gate && `gate ${event.gate}`;
  const details = [step, gate, event.reason].filter(Boolean).join('; ');
  return `${kind} ${namespace}/${name} ${HEADLINES[event.event]}${details ? `: ${details}` : ''}`;
}

/** Who let the run through its gates: `approved: before group apps by alice (change 42)`. */
export function approvalsLine(approvals: readonly NotifiedApproval[]): string {
  const each = approvals.map(
    (a) =>
      `${a.gate}${a.count ? ` (${a.count})` : ''} by ${a.by ?? 'an operator'}${a.reason ? ` (${a.reason})` : ''}`,
  );
  return `approved: ${each.join('; ')}`;
}

/**
 * The body POSTed to the webhook. `json`: the event with its run link and commands. `slack`: a
 * message Slack's incoming webhooks take (`text` for notifications and clients without blocks,
 * `blocks` with the headline, the link and the commands as code).
 */
export function notificationBody(event: RunEvent, format: 'json' | 'slack', runLink: string): object {
  const commands = runCommands(event);
  if (format === 'json') return { ...event, links: { run: runLink }, commands } satisfies JsonNotification;
  const text = headline(event);
  const lines = Object.values(commands).map((command) => `\`${command}\``);
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${text}*` } },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: `<${runLink}|Run ${event.run.run_id} in the Temporal UI> · ${event.time}` },
        ],
      },
      ...(lines.length ? [{ type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } }] : []),
      ...(event.approvals
        ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: approvalsLine(event.approvals) }] }]
        : []),
    ],
  };
}
