import type { WorkflowHandle } from '@temporalio/client';
import { createPrivateKey, sign } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { formatProgress } from '../../runs/progress';
import { loadSteeringKey } from '../../runs/steering-key';
import { manifestWorkflow } from '../../workflows';
import {
  approveSignal,
  approveUpdate,
  pauseSignal,
  progressQuery,
  replanSignal,
} from '../../workflows/messages';
import type { Approval } from '../../core/control';
import type { Progress } from '../../core/progress';
import type { ManifestPlan } from '../../core/plan/plans';
import { steeringText, type Steering } from '../../core/plan/steering';
import { sharedWorker, uniqueName } from '../helpers/env';
import { saveHistory, savingHistories } from '../helpers/histories';
import { eventually } from '../helpers/processes';
import { refusal } from '../helpers/runs';
import { demoPlan } from './demo-plan';
import { fakeHelm } from './fake-helm';

const GATE = 'before group apps';
const keyFile = path.join(mkdtempSync(path.join(tmpdir(), 'steering-')), 'key.pem');
/** The bridge's key, made as a bridge makes its own (runs/steering-key.ts). */
const bridge = loadSteeringKey(keyFile, { create: true });

/** A signed approval of the gate, as the bridge sends it for `by`. */
const signed = (workflowId: string, by: string): Approval => {
  const req = { by, gate: GATE };
  return { ...req, proof: bridge.prove(workflowId, 'approve', req) };
};

const progressOf = (handle: WorkflowHandle) => handle.query(progressQuery) as Promise<Progress>;
const until = (what: string, handle: WorkflowHandle, check: (p: Progress) => boolean) =>
  eventually(what, async () => ((await check(await progressOf(handle))) ? true : undefined), {
    timeoutMs: 30_000,
  });

describe('separation of duties at approval gates (stubbed activities, real dev server)', () => {
  const fake = fakeHelm();
  const harness = sharedWorker({ activities: fake.activities });
  /** The demo manifest gated before "apps" with `rules`, started as the bridge starts it (its key, the authors). */
  const start = async (
    name: string,
    rules: Record<string, unknown>,
    authors: Record<string, string> = {},
  ) => {
    const plan: ManifestPlan = demoPlan({ approval: { before: ['apps'], ...rules } });
    const steering: Steering = { key: bridge.publicKey, authors };
    const handle = await harness().client.workflow.start(manifestWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName(name),
      args: [{ plan, carried: { steering } }],
    });
    await until('the gate reached', handle, (p) => p.gate?.name === GATE);
    return handle;
  };

  it('distinct_approvers 2: one user twice is refused, a second user passes the gate', async () => {
    const handle = await start('distinct', { distinct_approvers: 2 });
    const id = handle.workflowId;
    expect(await handle.executeUpdate(approveUpdate, { args: [signed(id, 'alice')] })).toBe(
      `approval 1 of 2 of ${GATE} taken; it needs 1 more by other users`,
    );
    const half = await progressOf(handle);
    expect(half.phase).toBe('WaitingApproval');
    expect(formatProgress(half).join('\n')).toMatch(
      /gate "before group apps" waits for approval \(1 of 2 approvals\)/,
    );
    expect(await refusal(handle.executeUpdate(approveUpdate, { args: [signed(id, 'alice')] }))).toBe(
      'distinct_approvers: 2: alice has approved already',
    );
    expect(await handle.executeUpdate(approveUpdate, { args: [signed(id, 'bob')] })).toBe(`approved ${GATE}`);
    const outcome = await handle.result();
    expect(outcome.state).toBe('deployed');
    const { approvals } = await progressOf(handle);
    expect(approvals).toEqual([
      expect.objectContaining({ by: 'alice', gate: GATE, count: '1 of 2' }),
      expect.objectContaining({ by: 'bob', gate: GATE, count: '2 of 2' }),
    ]);
    expect(JSON.stringify(approvals)).not.toMatch(/proof/);
    if (savingHistories) await saveHistory(handle.workflowId, undefined, 'sod-distinct-approvers--manifest');
  });

  it("not_author: the spec's author is refused; an unsigned, an expired and a mis-signed approval are a Temporal admin's and refused; another user passes", async () => {
    fake.calls.length = 0;
    const handle = await start('not-author', { not_author: true }, { 'ArmadaManifest/demo': 'alice' });
    const id = handle.workflowId;
    expect(await refusal(handle.executeUpdate(approveUpdate, { args: [signed(id, 'alice')] }))).toBe(
      'not_author: alice wrote this spec (ArmadaManifest/demo) and may not approve it',
    );
    // Straight from a Temporal client: no proof.
    expect(await refusal(handle.executeUpdate(approveUpdate, { args: [{ by: 'bob', gate: GATE }] }))).toBe(
      'not_author: this gate needs approvals the API server authenticated (through the bridge); this one came from a Temporal client (temporal-admin:bob): it carries no proof from the bridge',
    );
    // Signed by the bridge's key, but issued 10 minutes ago.
    const stale = new Date(Date.now() - 10 * 60_000).toISOString();
    const staleSig = sign(
      null,
      Buffer.from(steeringText(id, 'approve', { by: 'bob', gate: GATE }, stale)),
      createPrivateKey(readFileSync(keyFile, 'utf8')),
    ).toString('hex');
    expect(
      await refusal(
        handle.executeUpdate(approveUpdate, {
          args: [{ by: 'bob', gate: GATE, proof: { at: stale, sig: staleSig } }],
        }),
      ),
    ).toMatch(
      /^not_author: .*\(temporal-admin:bob\): its proof was issued at .*, more than 5 minutes from the run's time$/,
    );
    // A proof of another message (carol's) does not vouch for bob.
    const forCarol = signed(id, 'carol');
    expect(
      await refusal(
        handle.executeUpdate(approveUpdate, { args: [{ by: 'bob', gate: GATE, proof: forCarol.proof }] }),
      ),
    ).toMatch(/\(temporal-admin:bob\): its proof's signature does not match the bridge's key$/);
    // A signal is refused the same way, and shown as refused with who sent it.
    await handle.signal(approveSignal, { by: 'mallory', gate: GATE });
    await until(
      'the signal shown as refused',
      handle,
      (p) => p.refused?.some((r) => r.by === 'temporal-admin:mallory') ?? false,
    );
    // A pause the bridge signed is recorded as the user's own.
    const pause = {
      by: 'dave',
      reason: 'look',
      proof: bridge.prove(id, 'pause', { by: 'dave', reason: 'look' }),
    };
    await handle.signal(pauseSignal, pause);
    await until('paused by dave', handle, (p) => p.paused?.by === 'dave');
    // Nothing past the gate was deployed.
    const p = await progressOf(handle);
    expect(p.phase).toBe('WaitingApproval');
    expect(fake.calls.filter((c) => /-(c|d)$/.test(c.release ?? ''))).toEqual([]);
    expect(formatProgress(p).join('\n')).toMatch(/not_author: alice may not approve/);
    // bob through the bridge passes it (once resumed, by the bridge's word).
    const resume = { by: 'dave', proof: bridge.prove(id, 'resume', { by: 'dave' }) };
    await handle.signal('resume', resume);
    expect(await handle.executeUpdate(approveUpdate, { args: [forCarol] })).toBe(`approved ${GATE}`);
    expect((await handle.result()).state).toBe('deployed');
    const done = await progressOf(handle);
    expect(done.approvals).toEqual([expect.objectContaining({ by: 'carol', gate: GATE })]);
    if (savingHistories) await saveHistory(handle.workflowId, undefined, 'sod-not-author--manifest');
  });

  it("a replayed proof is a Temporal admin's: it never counts twice", async () => {
    const handle = await start('replayed', { distinct_approvers: 2 });
    const id = handle.workflowId;
    const alice = signed(id, 'alice');
    await handle.executeUpdate(approveUpdate, { args: [alice] });
    // The same signed message again, e.g. read from the history by someone with Temporal access.
    expect(await refusal(handle.executeUpdate(approveUpdate, { args: [alice] }))).toBe(
      'distinct_approvers: 2: this gate needs approvals the API server authenticated (through the bridge); this one came from a Temporal client (temporal-admin:alice): its proof was used before',
    );
    await handle.cancel();
  });

  it("a re-plan brings its specs' authors but never a key of its own: proofs of another key are a Temporal admin's", async () => {
    const handle = await start('replan-key', { not_author: true }, { 'ArmadaManifest/demo': 'alice' });
    const id = handle.workflowId;
    const other = loadSteeringKey(path.join(path.dirname(keyFile), 'other.pem'), { create: true });
    await handle.signal(replanSignal, {
      input: {
        plan: demoPlan({ approval: { before: ['apps'], not_author: true } }),
        carried: { steering: { key: other.publicKey, authors: { 'ArmadaManifest/demo': 'zed' } } },
      },
      memo: { specs: 'ArmadaManifest/demo@2', mode: 'deploy' },
    });
    const latest = harness().client.workflow.getHandle(id);
    await eventually('the run started over with the re-plan', async () =>
      (await latest.describe()).memo?.specs === 'ArmadaManifest/demo@2' ? true : undefined,
    );
    await until('the gate reached again', latest, (p) => p.gate?.name === GATE);
    const req = { by: 'bob', gate: GATE };
    expect(
      await refusal(
        latest.executeUpdate(approveUpdate, { args: [{ ...req, proof: other.prove(id, 'approve', req) }] }),
      ),
    ).toMatch(/\(temporal-admin:bob\): its proof's signature does not match the bridge's key$/);
    expect(await refusal(latest.executeUpdate(approveUpdate, { args: [signed(id, 'zed')] }))).toBe(
      'not_author: zed wrote this spec (ArmadaManifest/demo) and may not approve it',
    );
    expect(await latest.executeUpdate(approveUpdate, { args: [signed(id, 'alice')] })).toBe(
      `approved ${GATE}`,
    );
    expect((await latest.result()).state).toBe('deployed');
  });

  it("an ordinary gate takes an unsigned approval, recorded as a Temporal admin's", async () => {
    const handle = await start('ordinary', {});
    expect(await handle.executeUpdate(approveUpdate, { args: [{ by: 'erin', gate: GATE }] })).toBe(
      `approved ${GATE}`,
    );
    expect((await handle.result()).state).toBe('deployed');
    expect((await progressOf(handle)).approvals).toEqual([
      expect.objectContaining({ by: 'temporal-admin:erin', gate: GATE }),
    ]);
  });
});
