import type { V1Deployment } from '@kubernetes/client-node';
import { ownership } from '../../activities/kube/deployer';
import { deployerVersionLabels } from '../../core/labels';

/** A Deployment carrying Deployer web's labels at `version`. */
const labelled = (name: string, version: string, uid: string): V1Deployment => ({
  metadata: { name, uid, labels: deployerVersionLabels('web', version) },
});
const names = (ds: V1Deployment[]) => ds.map((d) => d.metadata!.name);

describe("ownership: which labelled Deployments are a Deployer's own", () => {
  const own = labelled('web-1.0', '1.0', 'uid-own');
  const sameNameOtherUid = labelled('web-1.0', '1.0', 'uid-planted');
  const named = labelled('web-0.9', '0.9', 'uid-named');
  const intruder = labelled('intruder', '0.8', 'uid-intruder');

  it('with a record: exactly the recorded names with the recorded UIDs', () => {
    const status = { owned_deployments: { 'web-1.0': 'uid-own', 'web-0.7': 'uid-gone' } };
    expect(ownership('web', [own, named, intruder], status)).toEqual({
      owned: [own],
      strangers: [named, intruder],
      record: { 'web-1.0': 'uid-own' },
    });
    // A Deployment deleted and made again under the recorded name is not the one recorded.
    expect(names(ownership('web', [sameNameOtherUid], status).strangers)).toEqual(['web-1.0']);
  });

  it('an empty record owns nothing', () => {
    expect(ownership('web', [own], { owned_deployments: {} })).toEqual({
      owned: [],
      strangers: [own],
      record: {},
    });
  });

  it('a Deployer without a record yet (roll-in) adopts once the one its status says serves, and records it', () => {
    const status = { current_version: '1.0' };
    expect(ownership('web', [own, named, intruder], status)).toEqual({
      owned: [own],
      strangers: [named, intruder],
      record: { 'web-1.0': 'uid-own' },
    });
    // Its name is not enough: the version label must say that version too.
    const relabelled = { metadata: { ...named.metadata, name: 'web-1.0' } };
    expect(ownership('web', [relabelled], status).owned).toEqual([]);
    // No version served yet: nothing is adopted, and the empty record closes the roll-in.
    expect(ownership('web', [own], {})).toEqual({ owned: [], strangers: [own], record: {} });
  });

  it('no Deployer on the cluster (a file run): the names it would have created, and no record', () => {
    expect(ownership('web', [own, named, intruder], null)).toEqual({
      owned: [own, named],
      strangers: [intruder],
    });
  });
});
