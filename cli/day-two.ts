import { asCaller } from '../kube/client';
import { connect, temporalTarget } from '../runs/connect';
import { resolveTarget } from '../runs/targets';
import { rootMessage } from '../core/failures';
import { listObjects } from './cluster';
import {
  asJson,
  json,
  namespaceOption,
  onlyTarget,
  outputOption,
  TARGET_ARGUMENT,
  UsageError,
  type Command,
} from './command';
import { deleteAndFollow } from './delete';
import { diffExitCode, diffScope, formatDiff, scopeOfFile, scopeOfObject } from './diff';
import { ENDED_WITHIN_DAYS, formatList, formatObjectReport, listRows, objectReport, RUNS_READ } from './list';

/**
 * The verbs of day two (docs/how-to/operate-runs.md, "Day-two operations"): see what a run would change, list and
 * inspect objects and their runs, cancel a run, delete an object. Each acts as the person
 * running armadactl (asCaller: their own kubeconfig, never ARMADA_KUBECONFIG).
 */
export const dayTwoCommands: Record<string, Command> = {
  diff: {
    usage: `armadactl diff -f FILE | TARGET [-n NAMESPACE] [--manifest NAME] [--output json]

Shows what a run would do to each Helm release, and writes nothing: install, upgrade, unchanged,
uninstall, recover first (a release left pending) or refused (a release armada-temporal may not
touch, a failed protected one), decided by the run's own planner from the release's recorded
digest; for an install, upgrade or uninstall, a unified diff per object of the manifest helm
holds against the one the run would write (helm upgrade --dry-run=server with the run's own
arguments, chart and merged values), Secret values masked (*** and, against the live value,
(changed) or (new)); for a canary upgrade, its steps and each step's replica split.
-f FILE: the file armadactl apply would run (validated first). TARGET: an object on the cluster
(NAME or amf/NAME, acg/NAME, act/NAME), diffed as the bridge would run it; a group or chart a
manifest lists is diffed as part of the manifest's run. A whole manifest also lists the releases
its last run deployed that it no longer lists: a run leaves those installed.
Runs here, as you: charts are prepared as the worker prepares them (local charts under
ARMADA_CHARTS_ROOT, else the working directory), and helm and values_from read the cluster with
your own kubeconfig (KUBECONFIG, else ~/.kube/config; never ARMADA_KUBECONFIG).
Exit code as diff's: 0 when every release is unchanged, 1 when a run would change something,
2 on an error. --output json (-o json): {releases: [{object, release, mode, action, revision,
reason, objects: [{object, change, patch}], canary, error}], unlisted: [{chart, release}], notes}.`,
    arguments: TARGET_ARGUMENT,
    options: {
      filename: {
        type: 'string',
        short: 'f',
        value: 'FILE',
        description: 'diff the file armadactl apply would run, instead of a TARGET',
      },
      manifest: {
        type: 'string',
        value: 'NAME',
        description: 'with -f: the ArmadaManifest of the file, when it holds several',
      },
      ...outputOption,
      ...namespaceOption,
    },
    failureExit: 2,
    async run({ values, positionals }, out) {
      const file = values.filename as string | undefined;
      if (file ? positionals.length : positionals.length !== 1)
        throw new UsageError('name a file with -f, or one object: NAME, amf/NAME, acg/NAME or act/NAME');
      if (!file && values.manifest !== undefined)
        throw new UsageError('--manifest picks a manifest of a file: use it with -f');
      const asked = asJson(values);
      const namespace = values.namespace as string;
      const report = await asCaller(async () =>
        diffScope(
          file
            ? await scopeOfFile(file, namespace, values.manifest as string | undefined)
            : await scopeOfObject(resolveTarget(positionals[0], namespace)),
          connect,
        ),
      );
      if (asked) out(json(report));
      else formatDiff(report).forEach((line) => out(line));
      return diffExitCode(report);
    },
  },
  list: {
    usage: `armadactl list [-n NAMESPACE | -A] [--output json]

Lists what is deployed in a namespace (-A: in every namespace), as helm list does: the objects on
the cluster with their current runs, then the objects deployed from files (armadactl apply),
running or not: OBJECT (amf/NAME, acg/NAME, act/NAME, dpl/NAME), FROM (cluster or file), STATE
(ready, reconciling, stalled, invalid, deleting; pending before a first status), PHASE (the
run's: live while it runs, else the last it reported), RUN (Temporal's status of the current
run: the one that steers the object, a chart's canary first; when it ended, how long ago), AGE
(of the object; from a file, of its run), and WAITING ON: what a running run waits for, as its
progress says (an approval gate, a canary's readiness, hold until when, or analysis check; else
the charts it is deploying), and a pause with who and since.
An object from a file is listed by its latest run: one that runs, or one that ended in the last
${ENDED_WITHIN_DAYS} days (and that Temporal still keeps: the namespace's retention); one whose last run
uninstalled it is not listed. At most ${RUNS_READ} runs are read, newest first; a note says when
there were more. Objects are read with your own kubeconfig; without a cluster, or without
Temporal, it lists what it can and notes what it could not. --output json (-o json): {rows:
[{kind, namespace, name, from, state, phase, run: {workflowId, runId, status, endedAt}, since,
waitingOn}], notes}.`,
    options: {
      'all-namespaces': { type: 'boolean', short: 'A', description: 'list every namespace' },
      ...outputOption,
      ...namespaceOption,
    },
    async run({ values }, out) {
      const asked = asJson(values);
      const namespace = values['all-namespaces'] ? undefined : (values.namespace as string);
      const notes: string[] = [];
      const skipped = (what: string) => (err: unknown) => {
        notes.push(`${what} not listed: ${rootMessage(err)}`);
        return null;
      };
      const objects = await asCaller(() => listObjects(namespace)).catch(skipped('objects on the cluster'));
      const temporal = await connect().catch(skipped('runs'));
      if (!objects && !temporal) throw new Error(notes.join('; '));
      try {
        const listed = await asCaller(() => listRows(namespace, objects, temporal?.client ?? null));
        const rows = listed.rows;
        notes.push(...listed.notes);
        if (asked) out(json({ rows, notes }));
        else
          [...formatList(rows, namespace === undefined), ...notes.map((n) => `note: ${n}`)].forEach((l) =>
            out(l),
          );
        return 0;
      } finally {
        await temporal?.close();
      }
    },
  },
  get: {
    usage: `armadactl get TARGET [-n NAMESPACE] [--output json]

Shows one object and its current run together: the custom resource's state, generation and the
one its status was written for, target state, each condition (type, status, reason, message)
and a pause; then the run (workflow ID, run ID, Temporal's status, the specs it deploys, its
Temporal UI link) and its current details as armadactl status prints them. TARGET: NAME or
amf/NAME, acg/NAME, act/NAME, dpl/NAME; an object not on the cluster (run from a file) shows its
run alone. --output json (-o json): {object: the custom resource as the API server holds it, or
null; run: {workflowId, runId, status, specs, url, progress} or null}.`,
    arguments: TARGET_ARGUMENT,
    options: { ...outputOption, ...namespaceOption },
    async run({ values, positionals }, out) {
      const target = resolveTarget(onlyTarget(positionals), values.namespace as string);
      const asked = asJson(values);
      const { client, close } = await connect();
      try {
        const report = await asCaller(() => objectReport(target, client, temporalTarget().namespace));
        if (asked) out(json(report));
        else formatObjectReport(target, report).forEach((line) => out(line));
        return 0;
      } finally {
        await close();
      }
    },
  },
  delete: {
    usage: `armadactl delete TARGET [-n NAMESPACE] [--wait [--timeout SECONDS]] [--output json]

Deletes an object from the cluster, so the bridge uninstalls it: a deploy still running is
cancelled first (a clean stop), then the uninstall run removes its releases (a manifest's in
reverse group order) or a Deployer's Deployments, then the bridge removes its finalizer.
TARGET: NAME or amf/NAME, acg/NAME (a group no manifest lists), act/NAME (a chart no group
lists), dpl/NAME; a group or chart that something lists is uninstalled with it and is refused.
Before deleting, armadactl asks the API server of your own kubeconfig who you are and whether
you may delete the object (refused: exit 1, nothing deleted); it deletes with that kubeconfig.
--wait: follows until the object is gone (at most --timeout seconds, default 600), then prints
what the uninstall removed (each release and its revision before). --output json (-o json):
{deleted, by, uninstalled: [{release, revision} | {deployer}] or null}.`,
    arguments: TARGET_ARGUMENT,
    options: {
      wait: {
        type: 'boolean',
        short: 'w',
        description: 'follow until the object is gone, then print what the uninstall removed',
      },
      timeout: {
        type: 'string',
        default: '600',
        value: 'SECONDS',
        description: 'with --wait: how long to follow',
      },
      ...outputOption,
      ...namespaceOption,
    },
    async run({ values, positionals }, out) {
      const target = resolveTarget(onlyTarget(positionals), values.namespace as string);
      const asked = asJson(values);
      const seconds = Number(values.timeout);
      if (!(seconds > 0))
        throw new UsageError(`--timeout must be a number of seconds, not "${String(values.timeout)}"`);
      const report = await asCaller(() =>
        deleteAndFollow(
          target,
          { wait: Boolean(values.wait), timeoutMs: seconds * 1000, print: asked ? () => {} : out },
          connect,
        ),
      );
      if (asked) out(json(report));
      return 0;
    },
  },
};
