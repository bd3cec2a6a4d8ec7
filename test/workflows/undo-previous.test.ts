import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { applicableDocuments } from '../../cli/documents';
import type { UndoRun } from '../../core/contracts/workflows';
import { undoRequest } from '../../runs/day-two';
import { manifestRun, startRun, type RunRequest } from '../../runs/requests';
import type { ObjectPlace } from '../../runs/targets';
import { uniqueName } from '../helpers/env';
import { eventually } from '../helpers/processes';
import { fakeHelm, withWorker } from './fake-helm';

/*
 * `rollback --previous` of a group or chart a manifest lists (issue 35): their deploys are the
 * manifest's runs, and an undo of the manifest, of the chart's group or of the chart itself, all
 * under the manifest's ID, counts as having undone the chart's change of the run it undid when it
 * took that change back, so each --previous goes one deploy further back.
 */

/** ArmadaManifest `demo`: groups platform (a, b) and apps (c), every chart's values `{v: version}`. */
async function demo(ns: string, releases: string, version: number): Promise<RunRequest> {
  const chart = (name: string) =>
    `kind: ArmadaChart\nmetadata: {name: ${name}}\nspec: {release: ${name}, namespace: ${releases}, source: {type: local, location: x}, values: {v: ${version}}}`;
  const yaml = [
    'kind: ArmadaManifest\nmetadata: {name: demo}\nspec: {release_prefix: demo, chart_groups: [platform, apps]}',
    'kind: ArmadaChartGroup\nmetadata: {name: platform}\nspec: {chart_group: [a, b]}',
    'kind: ArmadaChartGroup\nmetadata: {name: apps}\nspec: {chart_group: [c]}',
    ...['a', 'b', 'c'].map(chart),
  ]
    .map((doc) => `apiVersion: armada.airshipit.org/v1alpha1\n${doc}\n`)
    .join('---\n');
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'undo-previous-')), 'demo.yaml');
  await writeFile(file, yaml);
  const applicable = await applicableDocuments(file, ns);
  if (applicable.kind !== 'ArmadaManifest') throw new Error(`${file}: no manifest`);
  return manifestRun(applicable.manifest, 'deploy', `ArmadaManifest/demo@${version}`);
}

/** Starts a run and waits for its end; its run ID. */
async function run(client: Client, taskQueue: string, req: RunRequest): Promise<string> {
  await startRun(client, taskQueue, req);
  const handle = client.workflow.getHandle(req.workflowId);
  await handle.result();
  return (await handle.describe()).runId;
}

describe('rollback --previous of a manifest’s group and chart (stubbed helm, real dev server)', () => {
  it('counts an undo of the manifest, of the chart’s group and of the chart that took the change back; an undo of one chart does not count for its group', async () => {
    const ns = uniqueName('ns');
    const releases = uniqueName('apps');
    const fake = fakeHelm();
    await withWorker(fake, async ({ client, taskQueue }) => {
      const workflowId = `ArmadaManifest:${ns}/demo`;
      const deploys: string[] = [];
      for (const version of [1, 2, 3])
        deploys.push(await run(client, taskQueue, await demo(ns, releases, version)));
      const [r1, r2, r3] = deploys;

      const manifest: ObjectPlace = { kind: 'ArmadaManifest', namespace: ns, name: 'demo' };
      const group: ObjectPlace = {
        kind: 'ArmadaChartGroup',
        namespace: ns,
        name: 'platform',
        manifest: 'demo',
      };
      const chart = (name: string, inGroup: string): ObjectPlace => ({
        kind: 'ArmadaChart',
        namespace: ns,
        name,
        manifest: 'demo',
        group: inGroup,
        release: { namespace: releases, release: `demo-${name}` },
        canary: false,
      });
      let closed = deploys.length;
      /** The run `--previous` of `place` undoes, once visibility lists every closed run under the ID. */
      const previous = async (place: ObjectPlace) => {
        await eventually(
          `${closed} closed runs of ${workflowId}`,
          async () =>
            (await client.workflow.count(`WorkflowId = '${workflowId}' AND ExecutionStatus != 'Running'`))
              .count === closed || undefined,
          { timeoutMs: 20_000, pauseMs: 50 },
        );
        return undoRequest(client, place, { target: `${place.kind}/${place.name}` });
      };
      const undo = async (place: ObjectPlace) => {
        const req = await previous(place);
        await run(client, taskQueue, req);
        closed++;
        return (req.input as UndoRun).undoes.runId;
      };

      // The manifest's undo of its last deploy counts for each of its groups and charts.
      expect(await undo(manifest)).toBe(r3);
      expect(((await previous(group)).input as UndoRun).undoes.runId).toBe(r2);
      expect(((await previous(chart('c', 'apps'))).input as UndoRun).undoes.runId).toBe(r2);

      // The group's undo counts for its charts (it took their changes back), not for another group's.
      expect(await undo(group)).toBe(r2);
      expect(((await previous(chart('a', 'platform'))).input as UndoRun).undoes.runId).toBe(r1);
      expect(((await previous(chart('c', 'apps'))).input as UndoRun).undoes.runId).toBe(r2);

      // A chart's own undo counts for it; for its group it undid one chart of the run, not the group.
      expect(await undo(chart('a', 'platform'))).toBe(r1);
      expect(((await previous(group)).input as UndoRun).undoes.runId).toBe(r1);
      expect(fake.releases.has(`demo-a`)).toBe(false); // r1 installed it: its undo uninstalled it
    });
  });
});
