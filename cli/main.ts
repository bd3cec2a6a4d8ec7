import { parseArgs } from 'node:util';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { GROUP } from '../api/common';
import { PlanError } from '../core/plan/manifest';
import { connect, temporalTarget } from '../runs/connect';
import { authorizedSteerer, TEMPORAL_ADMIN, TEMPORAL_ADMIN_OPTION, temporalAdmin } from './caller';
import { steer } from './steer';
import {
  asJson,
  helpOf,
  HELP_OPTION,
  json,
  namespaceOption,
  onlyTarget,
  outputOption,
  TARGET_ARGUMENT,
  UsageError,
  type Command,
  type Print,
} from './command';
import { convertCommand } from './convert';
import { dayTwoCommands } from './day-two';
import { applicableOf } from './documents';
import { clusterView, objectsOf, ownedRefusal } from './ownership';
import { formatHistory, historyOf } from './history';
import type { DeployerOutcome, ManifestOutcome } from '../core/contracts/workflows';
import { chartOfOneOutcome } from '../core/plan/plans-of-one';
import { rootMessage } from '../core/failures';
import { deployerOutcomeOf } from '../core/plan/finished-runs';
import { failedWith } from '../runs/day-two';
import { CONTROL_COMMANDS, control, follow, statusOf, type ControlCommand } from '../runs/control';
import { routeToDeployingRun } from '../runs/deploying-run';
import { placeByName, placeFromCluster } from '../runs/places';
import { chartRun, deployerRun, manifestRun, startRun } from '../runs/requests';
import { noRun, resolveTarget, routeOf, targetWorkflowId, type Target } from '../runs/targets';
import { currentRun, formatRun } from './list';
import { runUrl } from '../kube/status';
import { formatProblem, invalidDocuments, readArmadaFile, validateFiles } from './validate';
import { watch, type Terminal } from './watch';
import { retryFailedRun, UNDO_OPTIONS, undoAsked, undoFinishedRun } from './finished-runs';

/** What rollback's usage adds for finished runs. */
const UNDO_USAGE = `
--to-run RUN_ID (a run of \`armadactl history TARGET\`) or --previous (the newest finished run that
changed a release): undoes that finished deploy instead, as a new run with its own history: every
release it changed and kept goes back to the revision it had before that run (one it installed is
uninstalled), newest change first, as the ServiceAccount that wrote it. The object then reads
RolledBack until its spec changes or it is applied again. A Deployer goes back to the version
that run replaced, through its canary steps, or at once with --now.`;

/** How long a steering command waits, by default, for the bridge to take its action (seconds). */
const STEER_TIMEOUT_S = 30;

/** Every command of armadactl, by name, in the order the help lists them. */
export const commands: Record<string, Command> = {
  validate: {
    usage: `armadactl validate -f FILE|DIR [-f FILE|DIR ...] [--output json]

Checks every ArmadaManifest, ArmadaChartGroup, ArmadaChart and Deployer document (multi-document
YAML files too; directories are searched recursively) against the same schemas and rules the
cluster and the bridge apply. Prints each problem as 'file:doc kind/name: path: reason'; with
--output json (-o json) one object {valid, invalid, skipped, problems: [{file, doc, object,
path, message}]}. Exit code 0 only when every document is valid.`,
    options: {
      filename: {
        type: 'string',
        short: 'f',
        multiple: true,
        value: 'FILE|DIR',
        description: 'a YAML file, or a directory searched recursively',
      },
      ...outputOption,
    },
    failureExit: 2,
    async run({ values }, out) {
      const files = values.filename as string[] | undefined;
      if (!files?.length) throw new UsageError('name at least one file or directory with -f');
      const asked = asJson(values);
      const report = await validateFiles(files);
      const invalid = invalidDocuments(report.problems);
      if (asked) {
        const { valid, skipped, problems } = report;
        out(json({ valid, invalid, skipped, problems }));
        return invalid ? 1 : 0;
      }
      for (const problem of report.problems) out(formatProblem(problem));
      const skipped = report.skipped ? `, ${report.skipped} skipped (not ${GROUP})` : '';
      out(`${report.valid} valid, ${invalid} invalid${skipped}`);
      return invalid ? 1 : 0;
    },
  },
  apply: {
    usage: `armadactl apply -f FILE [--wait] [--on-failure stop|rollback] [-n NAMESPACE] [--manifest NAME]

Validates a multi-document file, then starts its run on the worker: the ArmadaManifest's (with
its groups and charts) when the file has one, else a run for each ArmadaChart (one release) and
each Deployer in it. With --wait, shows the progress until it ends: exit 0 when every chart is
deployed (a Deployer: at 100 %), 1 when a run failed or was rolled back.

The ownership rule: an object that is on the cluster (a custom resource of the same kind,
namespace and name) is the cluster's, and the bridge deploys it. apply checks every object the
run would deploy (the manifest, its groups and charts; each ArmadaChart and Deployer) and, when
the cluster holds any, exits 1 naming them, having started nothing: change them with kubectl
apply -f FILE, or delete them from the cluster first to deploy them from files. The cluster is
the one the bridge and worker use (ARMADA_KUBECONFIG, else KUBECONFIG, else ~/.kube/config,
else in-cluster); when none is configured or it does not answer within 5 s, apply says so and
goes on without the check.`,
    options: {
      filename: {
        type: 'string',
        short: 'f',
        value: 'FILE',
        description: 'the multi-document YAML file to run',
      },
      wait: {
        type: 'boolean',
        short: 'w',
        description: 'show the progress until the run ends; exit 1 when it fails',
      },
      'on-failure': {
        type: 'string',
        value: 'stop|rollback',
        description: "what the manifest's run does when a chart fails (overrides its spec.on_failure)",
      },
      manifest: {
        type: 'string',
        value: 'NAME',
        description: 'the ArmadaManifest of the file to run, when it holds several',
      },
      ...namespaceOption,
    },
    async run({ values }, out) {
      const file = values.filename as string | undefined;
      if (!file) throw new UsageError('name the file with -f');
      const onFailure = values['on-failure'] as string | undefined;
      if (onFailure !== undefined && onFailure !== 'stop' && onFailure !== 'rollback') {
        throw new UsageError(`--on-failure must be stop or rollback, not "${onFailure}"`);
      }
      const report = await readArmadaFile(file);
      if (report.problems.length) {
        for (const problem of report.problems) out(formatProblem(problem));
        out(`not applied: ${invalidDocuments(report.problems)} invalid document(s)`);
        return 1;
      }
      const applicable = applicableOf(
        report.objects,
        file,
        values.namespace as string,
        values.manifest as string | undefined,
      );
      // Temporal is dialled while the cluster is asked (both take a round trip or more).
      const connecting = connect();
      connecting.catch(() => undefined); // awaited below, or closed when the apply is refused
      const refuse = async (message: string): Promise<never> => {
        await connecting.then((c) => c.close()).catch(() => undefined);
        throw new Error(message);
      };
      // The ownership rule: an object on the cluster is the cluster's (the bridge deploys it).
      const cluster = await clusterView(objectsOf(applicable)).catch((err: Error) => refuse(err.message));
      if (!cluster.reachable)
        out(`no cluster reachable (${cluster.reason}); not checked for objects it owns`);
      else if (cluster.owned.length)
        await refuse(ownedRefusal(cluster.owned, file, values.namespace as string));
      const { client, close } = await connecting;
      try {
        const { taskQueue } = temporalTarget();
        if (applicable.kind === 'standalone') {
          let failed = 0;
          for (const doc of applicable.objects) {
            if (doc.kind === 'ArmadaChart' && doc.spec.target_state === 'uninitialized') {
              out(`${doc.name}: target_state is uninitialized; nothing to do`);
              continue;
            }
            const workflowId =
              doc.kind === 'Deployer'
                ? await startRun(client, taskQueue, deployerRun(doc))
                : await startRun(client, taskQueue, chartRun(doc, undefined, undefined, applicable.charts));
            out(`started ${workflowId}`);
            if (!values.wait) continue;
            // A chart's run is a plan of one: its outcome is the chart's in it.
            const chartEnded = async () => {
              const followed = await outcomeOf(() => follow<ManifestOutcome>(client, workflowId, out));
              return 'groups' in followed ? chartOfOneOutcome(followed) : followed;
            };
            const ended =
              doc.kind === 'Deployer' ? await deployerEnded(client, workflowId, out) : await chartEnded();
            if ('error' in ended) out(`${doc.name}: failed: ${ended.error}`);
            else if ('action' in ended)
              out(`${doc.name}: ${ended.action}${ended.revision ? `, revision ${ended.revision}` : ''}`);
            else
              out(
                `${doc.name}: ${ended.result}${ended.reason ? ` (${ended.reason})` : ''}, serving ${ended.version}`,
              );
            if ('error' in ended || ('result' in ended && ended.result === 'rolled-back')) failed++;
          }
          return failed ? 1 : 0;
        }
        const docs = applicable.manifest;
        if (onFailure) docs.manifest.spec.on_failure = onFailure;
        const target = docs.manifest.spec.target_state;
        if (target === 'uninitialized') {
          out(`${docs.manifest.name}: target_state is uninitialized; nothing to do`);
          return 0;
        }
        const mode = target === 'uninstalled' ? 'uninstall' : 'deploy';
        const workflowId = await startRun(client, taskQueue, manifestRun(docs, mode));
        out(`started ${workflowId}`);
        if (!values.wait) return 0;
        const ended = await outcomeOf(() => follow<ManifestOutcome>(client, workflowId, out));
        if ('error' in ended) {
          out(`${docs.manifest.name}: failed: ${ended.error}`);
          return 1;
        }
        out(`${ended.manifest}: ${ended.state}`);
        return ended.state === (mode === 'uninstall' ? 'uninstalled' : 'deployed') ? 0 : 1;
      } finally {
        await close();
      }
    },
  },
  convert: convertCommand,
  status: {
    arguments: TARGET_ARGUMENT,
    usage: `armadactl status TARGET [-n NAMESPACE] [--output json]

Shows the latest run, as armadactl get shows an object's: its workflow ID, run ID, Temporal's
status, the specs it deploys and its Temporal UI link, then its progress. TARGET is an
ArmadaManifest NAME (or amf/NAME) or acg/NAME (a group no manifest lists): its phase and, per
group and chart, state and revision; dpl/NAME (a Deployer) or act/NAME (an ArmadaChart's
canary): the step it is at, what it waits for, and each step's replica split and times.
--output json (-o json) prints one object {workflowId, runId, status, specs, url, progress},
progress as the workflow's progress query answers.`,
    options: { ...outputOption, ...namespaceOption },
    async run({ values, positionals }, out) {
      const target = resolveTarget(onlyTarget(positionals), values.namespace as string);
      const asked = asJson(values);
      const { client, close } = await connect();
      try {
        const { progress, ...run } = await statusOf(client, await statusWorkflowId(client, target));
        const url = runUrl(temporalTarget().namespace, run.workflowId, run.runId);
        const report = { ...run, url, progress };
        if (asked) out(json(report));
        else formatRun(report).forEach((line) => out(line));
        return 0;
      } finally {
        await close();
      }
    },
  },
  watch: {
    arguments: TARGET_ARGUMENT,
    usage: `armadactl watch TARGET [-n NAMESPACE]

Shows a run live until it ends (TARGET as for status), then its outcome: exit 0 when it
succeeded, 1 when it failed, was cancelled or rolled back. On a terminal the status is redrawn
in place every second; otherwise (a pipe, a file, CI) a line is printed, with its time (UTC),
for each thing that changed, e.g. '12:01:03 group apps: running — web deploying'. A re-plan
(a spec changed while the run went on) continues the run as a new one: watch follows it and
prints its new run line.`,
    options: { ...namespaceOption },
    async run({ values, positionals, terminal }, out) {
      const workflowId = targetWorkflowId(onlyTarget(positionals), values.namespace as string);
      const { client, close } = await connect();
      try {
        return await watch(client, workflowId, out, terminal);
      } finally {
        await close();
      }
    },
  },
  history: {
    arguments: TARGET_ARGUMENT,
    usage: `armadactl history TARGET [-n NAMESPACE] [--limit N] [--output json]

Lists the runs of an object, newest first (at most N, default 20): when each started (UTC), its
outcome (deployed, rolled-back, failed, re-planned, running, ...), how long it took, its run ID
and the specs it deployed (the bridge names them with their generation: ArmadaManifest/demo@3).
TARGET as for status; for act/NAME, the runs of the ArmadaChart's release (when it is applied
on its own) and of its canary. --output json (-o json) prints an array of {workflowId, runId,
type, status, phase, outcome, startTime, closeTime, durationSeconds, specs, mode, approvals}
([] when there is none); approvals: [{gate, by}] as the run recorded who approved each gate (the
user the API server authenticated), null when the run did not answer within 2 s. The table shows
them as a column "approved by" when any run has one.`,
    options: {
      limit: { type: 'string', default: '20', value: 'N', description: 'list at most N runs, newest first' },
      ...outputOption,
      ...namespaceOption,
    },
    async run({ values, positionals }, out) {
      const target = resolveTarget(onlyTarget(positionals), values.namespace as string);
      const limit = Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1)
        throw new UsageError(`--limit must be a whole number from 1, not "${String(values.limit)}"`);
      const asked = asJson(values);
      const { client, close } = await connect();
      try {
        const runs = await historyOf(client, target, limit);
        if (asked) out(json(runs));
        else if (!runs.length) throw noRun(`${target.kind}:${target.namespace}/${target.name}`);
        else formatHistory(runs).forEach((line) => out(line));
        return 0;
      } finally {
        await close();
      }
    },
  },
};

const controlUsage: Record<ControlCommand, string> = {
  pause:
    'holds the run before its next chart or group starts (Helm calls already running finish); a canary freezes its step, keeping the time left on its hold',
  resume: 'lets a paused run go on',
  approve:
    'passes the approval gate the run waits at now (a manifest: `before group NAME`; a canary: `step N (P %)`); refused when none waits, or when --gate names another',
  promote: 'makes a canary skip its remaining steps and go to 100 %',
  rollback:
    'starts no more charts, lets running ones finish, then undoes every change of the run; a canary restores the old version and removes the new one',
  cancel:
    "stops the object's own run cleanly (Temporal's cancellation, as the bridge does before an uninstall): running Helm calls finish, nothing new starts, on_failure: rollback undoes the run, which ends cancelled; who and why stand in its history. A group or chart a manifest or group lists is stopped with that run: cancel it",
};
for (const command of CONTROL_COMMANDS) {
  commands[command] = {
    usage: `armadactl ${command} TARGET [-n NAMESPACE] [--reason TEXT]${command === 'approve' ? ' [--gate NAME]' : ''}${command === 'rollback' ? ' [--to-run RUN_ID | --previous [--now]]' : ''} [--timeout S] [--${TEMPORAL_ADMIN_OPTION}]

${command[0].toUpperCase()}${command.slice(1)}: ${controlUsage[command]}.${command === 'rollback' ? UNDO_USAGE : ''}
TARGET: an ArmadaManifest NAME (or amf/NAME), acg/NAME, act/NAME or dpl/NAME. A group or chart a
manifest lists is steered through the manifest's run, a chart with canary steps through its
canary while it runs (docs/how-to/operate-runs.md, "Run control"); with
--${TEMPORAL_ADMIN_OPTION}, a chart with no run of its own through the one run that deploys it (its
ArmadaObjects search attribute), which passes the command on to that chart's canary.
armadactl steers through the cluster, as you: with your own kubeconfig (KUBECONFIG, else
~/.kube/config, else in-cluster; never ARMADA_KUBECONFIG) it writes the action annotations on the
object (armada.airshipit.org/action, reason, gate), as kubectl annotate would, so RBAC (patch on
the object) and the admission policies apply and the API server records you as who asked
(armada.airshipit.org/by). It then waits for the bridge to take the action and prints its answer
(the object's Action Event). Exit 1 when the API server refuses the write, the bridge or the run
refuses the command (with the reason), or no bridge takes it within --timeout seconds (default
${STEER_TIMEOUT_S}; the action is then withdrawn).
--${TEMPORAL_ADMIN_OPTION}: skip the cluster and send the command to Temporal yourself, recorded as
temporal-admin:$USER. Where a cluster answers, only a platform administrator may (update on
armadapolicies.armada.airshipit.org); without one (runs applied from files), whoever may reach the
Temporal namespace (docs/explanation/security.md).`,
    arguments: TARGET_ARGUMENT,
    options: {
      reason: { type: 'string', value: 'TEXT', description: 'why, recorded with who asked' },
      ...(command === 'approve' && {
        gate: {
          type: 'string',
          value: 'NAME',
          description:
            'the gate meant (`before group NAME`, `step N`); refused when the run waits at another',
        },
      }),
      ...(command === 'rollback' && UNDO_OPTIONS),
      timeout: {
        type: 'string',
        default: String(STEER_TIMEOUT_S),
        value: 'S',
        description: 'seconds to wait for the bridge to take the action',
      },
      ...TEMPORAL_ADMIN,
      ...namespaceOption,
    },
    async run({ values, positionals }, out) {
      const target = resolveTarget(onlyTarget(positionals), values.namespace as string);
      const { kind, namespace, name } = target;
      const request = {
        reason: values.reason as string | undefined,
        gate: values.gate as string | undefined,
      };
      const asAdmin = Boolean(values[TEMPORAL_ADMIN_OPTION]);
      if (command === 'rollback' && undoAsked(values))
        return undoFinishedRun(
          target,
          positionals[0],
          values,
          asAdmin ? await temporalAdmin() : await authorizedSteerer(target),
          out,
        );
      if (!asAdmin) {
        const timeout = Number(values.timeout);
        if (!(timeout > 0))
          throw new UsageError(
            `--timeout must be a number of seconds above 0, not "${String(values.timeout)}"`,
          );
        const steered = await steer(target, command, request, timeout * 1000);
        if (steered.type === 'Warning') throw new Error(steered.message);
        out(steered.message);
        return 0;
      }
      // Who steers is settled before Temporal is reached: a refusal sends nothing.
      const by = await temporalAdmin();
      const { client, close } = await connect();
      try {
        const place = (await placeFromCluster(kind, namespace, name)) ?? placeByName(kind, namespace, name);
        // A chart without a run of its own is steered in the run that deploys it (its ArmadaObjects).
        const route =
          command === 'cancel' ? routeOf(place, command) : await routeToDeployingRun(client, place, command);
        const done = await control(client, route, command, { by, ...request });
        out(`${command}: ${done.answer} (${done.workflowId})`);
        return 0;
      } finally {
        await close();
      }
    },
  };
}

Object.assign(commands, dayTwoCommands);

commands.retry = {
  arguments: TARGET_ARGUMENT,
  usage: `armadactl retry TARGET [-n NAMESPACE] [--${TEMPORAL_ADMIN_OPTION}]

Takes up the object's latest run, which failed, at the step that failed, as a new run with its own
history: a manifest's (or a group's) charts that finished in it are left as they are and the gates
it passed are not asked again; the chart that failed runs again first, then the charts and groups
after it. A chart or a Deployer runs again. It deploys what the failed run deployed (its input),
not a spec changed since. Refused when the latest run did not fail, or rolled back what it changed
(apply it again instead). The same permission check as rollback. Exit 1 when refused or when the
retry fails.`,
  options: { ...TEMPORAL_ADMIN, ...namespaceOption },
  async run({ values, positionals }, out) {
    const target = resolveTarget(onlyTarget(positionals), values.namespace as string);
    await (values[TEMPORAL_ADMIN_OPTION] ? temporalAdmin() : authorizedSteerer(target));
    return retryFailedRun(target, positionals[0], out);
  },
};

/** Former names of commands, still taken: `import` was convert's. */
export const ALIASES: Record<string, string> = { import: 'convert' };

export const USAGE = `armadactl: durable, sequenced Helm deploys on Kubernetes

Commands:
${Object.values(commands)
  .map((c) => `  ${c.usage.split('\n')[0]}`)
  .join('\n')}

Temporal is reached through TEMPORAL_ADDRESS (default localhost:7233) and TEMPORAL_NAMESPACE.
Run 'armadactl COMMAND --help' for a command's details.`;

/**
 * The run whose progress `status` shows: the target's own; a Deployer's rollout (its canary's
 * steps) while it runs or when it is the latest that ran, else its run (routeOf's order: a
 * Deployer an older build runs has no rollout child).
 */
async function statusWorkflowId(client: Client, target: Target): Promise<string> {
  if (target.kind !== 'Deployer') return target.workflowId;
  const route = routeOf({ kind: target.kind, namespace: target.namespace, name: target.name }, 'progress');
  if ('refused' in route) return target.workflowId;
  return (await currentRun(client, route.workflowIds))?.workflowId ?? target.workflowId;
}

/**
 * A Deployer's run (deployRun over its plan of one) followed to its end: what its rollout did. A
 * rollout that rolled back fails the run, which carries it in its failure's details.
 */
async function deployerEnded(
  client: Client,
  workflowId: string,
  out: (line: string) => void,
): Promise<DeployerOutcome | { error: string }> {
  try {
    const done = deployerOutcomeOf(await follow<unknown>(client, workflowId, out));
    return done ?? { error: `run ${workflowId} rolled out no Deployer` };
  } catch (err) {
    const done = err instanceof WorkflowFailedError ? deployerOutcomeOf(failedWith(err)) : undefined;
    return done ?? { error: rootMessage(err) };
  }
}

/** A followed run's outcome, or the message at the bottom of its failure. */
async function outcomeOf<T>(followed: () => Promise<T>): Promise<T | { error: string }> {
  try {
    return await followed();
  } catch (err) {
    return { error: rootMessage(err) };
  }
}

/**
 * Whether `e` is the caller's mistake (exit 2, with the usage): ours, or node's parseArgs
 * (`code` ERR_PARSE_ARGS_*). A gRPC error's `code` is a number, and such an error is the run's.
 */
export function isUsageError(e: unknown): boolean {
  if (e instanceof UsageError) return true;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}

/** Runs one armadactl command line; returns the exit code. */
export async function main(
  argv: string[],
  out: Print = console.log,
  err: Print = console.error,
  /** The terminal `out` writes to, if it is one (then `watch` redraws in place). */
  terminal?: Terminal,
  /** What `-f -` reads. */
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    out(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = commands[ALIASES[name] ?? name];
  if (!command) {
    err(`armadactl: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { ...command.options, ...HELP_OPTION },
      allowPositionals: true,
    });
    if (values.help) {
      out(helpOf(command));
      return 0;
    }
    return await command.run({ values, positionals, terminal, err, stdin }, out);
  } catch (e) {
    if (isUsageError(e)) {
      err(`armadactl ${name}: ${(e as Error).message}\n\nUsage: ${helpOf(command)}`);
      return 2;
    }
    if (e instanceof PlanError) {
      e.problems.forEach((p) => err(`armadactl ${name}: ${p}`));
      return 1;
    }
    err(`armadactl ${name}: ${(e as Error).message}`);
    return command.failureExit ?? 1;
  }
}

if (require.main === module) {
  const terminal = process.stdout.isTTY ? process.stdout : undefined;
  void main(process.argv.slice(2), console.log, console.error, terminal).then((code) => process.exit(code));
}
