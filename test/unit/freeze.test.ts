import { armadaPolicySpec } from '../../api/policy';
import { freezeOf, startedFrozen } from '../../bridge/freeze';
import type { PolicyView } from '../../api/policy-rules';
import type { RunRequest } from '../../runs/requests';
import { waitingOf } from '../../core/plan/progress-view';

const policy = (name: string, spec: Record<string, unknown>): PolicyView => ({
  name,
  spec: armadaPolicySpec.parse({ namespaces: ['team-a'], ...spec }),
});
const run = (workflowType: string, input: unknown): RunRequest => ({
  workflowType,
  workflowId: 'amf:apps/demo',
  input,
  memo: { mode: 'deploy' },
  options: {},
  what: 'manifest apps/demo',
  target: 'demo',
});

describe('freezeOf', () => {
  it('is none while no policy freezes the namespace', () => {
    expect(
      freezeOf('team-a', [
        policy('grants', {}),
        policy('other', { namespaces: ['team-b'], freeze: { reason: 'b only' } }),
      ]),
    ).toBeUndefined();
  });

  it('joins every policy freezing the namespace, by name; * freezes the cluster', () => {
    expect(
      freezeOf('team-a', [
        policy('release-freeze', { freeze: { reason: 'release 2.0 goes out' } }),
        policy('grants', {}),
        policy('incident', { namespaces: ['*'], freeze: { reason: 'incident 42' } }),
        { name: 'broken' },
      ]),
    ).toEqual({ by: 'ArmadaPolicy incident, release-freeze', reason: 'incident 42; release 2.0 goes out' });
  });

  it('refuses an empty reason', () => {
    expect(armadaPolicySpec.safeParse({ namespaces: ['*'], freeze: { reason: '' } }).success).toBe(false);
  });
});

describe('startedFrozen', () => {
  const frozen = { by: 'ArmadaPolicy incident', reason: 'incident 42' };

  it.each(['deployRun', 'manifestWorkflow'])(
    'starts a %s run with the freeze in its carried state, keeping what it carried',
    (type) => {
      const started = startedFrozen(run(type, { plan: {}, carried: { approvals: [] } }), frozen);
      expect(started.input).toEqual({ plan: {}, carried: { approvals: [], frozen } });
    },
  );

  it('leaves a run alone when nothing freezes, or when it is a drift check', () => {
    const manifest = run('manifestWorkflow', { plan: {} });
    expect(startedFrozen(manifest, undefined)).toBe(manifest);
    const drift = run('driftWorkflow', { release: 'web' });
    expect(startedFrozen(drift, frozen)).toBe(drift);
  });
});

describe('waitingOf a held run', () => {
  const since = '2026-03-02T12:00:00.000Z';
  it('says why a manifest holds for a freeze', () => {
    const held = { for: 'freeze' as const, reason: 'incident 42 (ArmadaPolicy incident)', since };
    expect(waitingOf({ phase: 'Running', waitingOn: 'freeze', held, groups: [] })).toBe(
      'waiting on freeze: incident 42 (ArmadaPolicy incident)',
    );
  });

  it('says until when a canary holds at its weight for a closed window', () => {
    const held = {
      for: 'window' as const,
      reason: 'outside its deploy windows',
      since,
      until: '2026-03-02T12:00:30.000Z',
    };
    expect(
      waitingOf({
        kind: 'canary',
        target: 'web',
        phase: 'Progressing',
        step: 1,
        steps: 2,
        percent: 50,
        waitingOn: 'window',
        nextStepAt: held.until,
        held,
        history: [],
      }),
    ).toBe('waiting on window until 2026-03-02 12:00:30 UTC');
  });
});
