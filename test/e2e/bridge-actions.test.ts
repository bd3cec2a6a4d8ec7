import { reconcile } from '../../bridge/reconcile';
import { viewOf } from '../../bridge/view';
import { ACTION_ANNOTATION, BY_ANNOTATION } from '../../runs/annotations';
import { sharedWorker, uniqueName } from '../helpers/env';
import { applyObjects, dropFinalizers, installCrds, kubectl, settingsChart, whoAmI } from '../helpers/kube';
import { asBridge, cachedContext } from '../helpers/bridge-context';

/**
 * Every action annotation written is carried out, or refused with a Warning Event naming it:
 * reconciled from a view read before a second action was written, or of an object being
 * deleted (the bridge's reconcile, on the real API server; no bridge process watches here).
 */
describe('bridge: no action annotation is dropped', () => {
  const harness = sharedWorker();
  const crs = uniqueName('actions');
  /** Who the API server says annotates in these tests (armada.airshipit.org/by). */
  let admin: string;

  const json = async (...args: string[]) => JSON.parse(await kubectl(...args, '-o', 'json'));
  const actionOf = async (name: string) =>
    (await json('get', 'act', name, '-n', crs)).metadata.annotations?.[ACTION_ANNOTATION] as
      string | undefined;
  const actionEvents = async (name: string) =>
    (
      (
        await json(
          'get',
          'events',
          '-n',
          crs,
          '--field-selector',
          `involvedObject.name=${name},involvedObject.kind=ArmadaChart,reason=Action`,
        )
      ).items as { type: string; message: string }[]
    ).map((e) => `${e.type}: ${e.message}`);
  /** The object as the bridge's watch has it. */
  const objectAsWatched = (name: string) => json('get', 'act', name, '-n', crs, '--show-managed-fields');
  /** The bridge's reconcile of `name` from the view of it that `read` gave. */
  const reconcileFrom = async (read: object, lines: string[] = []) =>
    asBridge(() =>
      reconcile(
        cachedContext(harness(), [viewOf('ArmadaChart', read as never)], { lines }),
        `ArmadaChart/${crs}/${(read as { metadata: { name: string } }).metadata.name}`,
      ),
    );

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crs);
    admin = await whoAmI();
  });
  afterAll(async () => {
    await kubectl('delete', 'namespace', crs, '--wait=false');
  });

  it('an action written after the bridge read the object stays for the next reconcile; the one read is taken', async () => {
    // Aimed outside its namespace with no policy granting it: the reconcile marks it Invalid
    // after the action and starts nothing.
    await applyObjects(crs, [settingsChart('web', `${crs}-elsewhere`, { a: '1' })]);
    await kubectl('annotate', 'act', 'web', '-n', crs, `${ACTION_ANNOTATION}=pause`);
    const read = await objectAsWatched('web');
    // Written between the bridge's read and its removal of the first.
    await kubectl('annotate', '--overwrite', 'act', 'web', '-n', crs, `${ACTION_ANNOTATION}=resume`);
    const lines: string[] = [];
    await reconcileFrom(read, lines);
    expect(await actionOf('web')).toBe('resume');
    expect(lines).toContain(`another action was written meanwhile; it is taken next ArmadaChart/${crs}/web`);
    const events = await actionEvents('web');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatch(new RegExp(`^Warning: ${admin} asked to pause: refused: `));
    // The next reconcile, from the object as it is now, takes the second and removes it.
    await reconcileFrom(await objectAsWatched('web'));
    expect(await actionOf('web')).toBeUndefined();
    expect((await actionEvents('web')).filter((e) => e.includes('asked to resume'))).toHaveLength(1);
  });

  it('an action on an object being deleted is refused with a Warning Event naming it, and removed', async () => {
    const hold = 'armada-test/hold';
    await applyObjects(crs, [
      { ...settingsChart('gone', `${crs}-rel`, { a: '1' }), metadata: { name: 'gone', finalizers: [hold] } },
    ]);
    await kubectl('annotate', 'act', 'gone', '-n', crs, `${ACTION_ANNOTATION}=pause`);
    await kubectl('delete', 'act', 'gone', '-n', crs, '--wait=false');
    try {
      const read = await objectAsWatched('gone');
      expect(read.metadata.deletionTimestamp).toBeDefined();
      await reconcileFrom(read);
      expect(await actionOf('gone')).toBeUndefined();
      expect(await actionEvents('gone')).toEqual([
        `Warning: ${admin} asked to pause: refused: ArmadaChart ${crs}/gone is being deleted`,
      ]);
    } finally {
      await dropFinalizers('act/gone', crs);
    }
  });

  it('an action without armada.airshipit.org/by (a cluster without the admission policies) is refused, naming them, and removed', async () => {
    await applyObjects(crs, [settingsChart('nobody', `${crs}-elsewhere`, { a: '1' })]);
    await kubectl('annotate', 'act', 'nobody', '-n', crs, `${ACTION_ANNOTATION}=pause`);
    const read = await objectAsWatched('nobody');
    // As a cluster without the MutatingAdmissionPolicy stores it: the by annotation is missing.
    delete read.metadata.annotations[BY_ANNOTATION];
    await reconcileFrom(read);
    expect(await actionOf('nobody')).toBeUndefined();
    expect(await actionEvents('nobody')).toEqual([
      `Warning: someone (no ${BY_ANNOTATION}) asked to pause: refused: the API server wrote no ${BY_ANNOTATION}, so who asked is unknown: the admission policies of deploy/admission/ (armada-action-by) are not installed on this cluster`,
    ]);
  });
});
