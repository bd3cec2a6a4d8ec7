import { armadaChartSpec } from '../../api/chart';
import { deployerSpec } from '../../api/deployer';
import { armadaManifestSpec } from '../../api/manifest';
import { notifications } from '../../api/notifications';
import { notificationBody, runCommands } from '../../activities/notifications/payload';
import { endingEvent, notifyTarget, type RunEvent } from '../../core/plan/notifications';

const LINK = 'http://ui:8233/namespaces/default/workflows/canary%3Ashop%2Fweb/run-1/history';

const event = (facts: Partial<RunEvent>): RunEvent => ({
  event: 'started',
  object: { kind: 'ArmadaChart', namespace: 'shop', name: 'web' },
  run: { workflow_id: 'canary:shop/web', run_id: 'run-1' },
  time: '2026-11-25T07:00:00.000Z',
  ...facts,
});

describe('notifications schema', () => {
  it('defaults the key to url and the format to json', () => {
    expect(notifications.parse({ secret_ref: { name: 'hooks' } })).toEqual({
      secret_ref: { name: 'hooks', key: 'url' },
      format: 'json',
    });
  });

  it.each([
    ['an unknown format', { secret_ref: { name: 'hooks' }, format: 'teams' }, 'format'],
    ['a Secret name that is not a DNS name', { secret_ref: { name: 'Hooks!' } }, 'secret_ref.name'],
    ['a URL inline instead of a Secret', { url: 'https://hooks.example/T0/B0/x' }, 'url'],
  ])('refuses %s', (_, value, field) => {
    const result = notifications.safeParse(value);
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((i) => i.path.join('.') || i.message).join(' ')).toContain(field);
  });

  it('is the one piece ArmadaManifest, ArmadaChart and Deployer take', () => {
    const config = { secret_ref: { name: 'hooks', key: 'slack' }, format: 'slack' };
    const chart = armadaChartSpec.parse({
      release: 'web',
      namespace: 'shop',
      source: { type: 'local', location: 'examples/charts/hello' },
      notifications: config,
    });
    const deployer = deployerSpec.parse({
      type: 'canary',
      deployment: { name: 'web', namespace: 'shop', image: 'registry.local/web', version: '1', replicas: 2 },
      steps: [{ percent: 100 }],
      notifications: config,
    });
    const manifest = armadaManifestSpec.parse({
      release_prefix: 'demo',
      chart_groups: ['apps'],
      notifications: config,
    });
    expect([chart.notifications, deployer.notifications, manifest.notifications]).toEqual([
      config,
      config,
      config,
    ]);
  });
});

describe('notifyTarget', () => {
  it('is none without notifications: the run stays without notifier commands', () => {
    expect(notifyTarget('Deployer', 'shop', 'web', {})).toBeUndefined();
  });

  it("reads the Secret as the object's ServiceAccount, in its own namespace", () => {
    const config = notifications.parse({ secret_ref: { name: 'hooks' } });
    expect(
      notifyTarget('ArmadaChart', 'shop', 'web', { notifications: config, service_account_name: 'deployer' }),
    ).toEqual({
      kind: 'ArmadaChart',
      namespace: 'shop',
      name: 'web',
      notifications: config,
      actAs: { namespace: 'shop', name: 'deployer' },
    });
  });
});

describe('endingEvent', () => {
  it.each<[string, string, string | undefined, ReturnType<typeof endingEvent>]>([
    ['a deploy is completed', 'deployed', undefined, { event: 'completed', reason: 'deployed' }],
    ['an unchanged chart is completed', 'unchanged', undefined, { event: 'completed', reason: 'unchanged' }],
    [
      'a failure rolled back is rolled back, with why',
      'rolled-back',
      'group apps failed',
      { event: 'rolled-back', reason: 'group apps failed' },
    ],
    [
      'a failure left in place is failed',
      'stopped',
      'group apps failed',
      { event: 'failed', reason: 'group apps failed' },
    ],
    [
      'a stop before the end is failed',
      'stopped',
      undefined,
      { event: 'failed', reason: 'stopped before the end' },
    ],
  ])('%s', (_, state, failure, expected) => {
    expect(endingEvent(state, failure)).toEqual(expected);
  });
});

describe('runCommands', () => {
  it.each<[string, Partial<RunEvent>, ReturnType<typeof runCommands>]>([
    [
      'a canary step waiting for approval: approve that gate, or roll back',
      { event: 'waiting-approval', gate: 'step 2 (50 %)' },
      {
        approve: "armadactl approve act/web -n shop --gate 'step 2 (50 %)'",
        rollback: 'armadactl rollback act/web -n shop',
      },
    ],
    [
      "a manifest's gate",
      {
        event: 'waiting-approval',
        gate: 'before group apps',
        object: { kind: 'ArmadaManifest', namespace: 'site', name: 'demo' },
      },
      {
        approve: "armadactl approve amf/demo -n site --gate 'before group apps'",
        rollback: 'armadactl rollback amf/demo -n site',
      },
    ],
    [
      'a step reached: roll back',
      { event: 'step-reached' },
      { rollback: 'armadactl rollback act/web -n shop' },
    ],
    [
      'a completed Deployer: undo it',
      { event: 'completed', object: { kind: 'Deployer', namespace: 'shop', name: 'web' } },
      { rollback: 'armadactl rollback dpl/web -n shop --previous' },
    ],
    ['a failure: nothing to run', { event: 'failed', reason: 'x' }, {}],
    ['a rollback: nothing to run', { event: 'rolled-back' }, {}],
  ])('%s', (_, facts, expected) => {
    expect(runCommands(event(facts))).toEqual(expected);
  });

  it("quotes a gate's quote for the shell", () => {
    expect(runCommands(event({ event: 'waiting-approval', gate: "before group o'brien" })).approve).toBe(
      "armadactl approve act/web -n shop --gate 'before group o'\\''brien'",
    );
  });
});

describe('notificationBody', () => {
  const step = event({
    event: 'waiting-approval',
    gate: 'step 2 (50 %)',
    step: { number: 2, of: 3, percent: 50 },
  });

  it('json: the event with its run link and commands', () => {
    expect(notificationBody(step, 'json', LINK)).toEqual({
      event: 'waiting-approval',
      object: { kind: 'ArmadaChart', namespace: 'shop', name: 'web' },
      run: { workflow_id: 'canary:shop/web', run_id: 'run-1' },
      step: { number: 2, of: 3, percent: 50 },
      gate: 'step 2 (50 %)',
      time: '2026-11-25T07:00:00.000Z',
      links: { run: LINK },
      commands: {
        approve: "armadactl approve act/web -n shop --gate 'step 2 (50 %)'",
        rollback: 'armadactl rollback act/web -n shop',
      },
    });
  });

  it('slack: text for the notification, blocks with the run link and the commands', () => {
    expect(notificationBody(step, 'slack', LINK)).toEqual({
      text: 'ArmadaChart shop/web waits for approval: step 2/3 at 50 %; gate step 2 (50 %)',
      blocks: [
        {
          type: 'section',
          text: {
            type: 'mrkdwn',
            text: '*ArmadaChart shop/web waits for approval: step 2/3 at 50 %; gate step 2 (50 %)*',
          },
        },
        {
          type: 'context',
          elements: [
            { type: 'mrkdwn', text: `<${LINK}|Run run-1 in the Temporal UI> · 2026-11-25T07:00:00.000Z` },
          ],
        },
        {
          type: 'section',
          text: {
            type: 'mrkdwn',
            text: "`armadactl approve act/web -n shop --gate 'step 2 (50 %)'`\n`armadactl rollback act/web -n shop`",
          },
        },
      ],
    });
  });

  it('slack: no command block once nothing is left to run', () => {
    const body = notificationBody(
      event({ event: 'failed', reason: 'canary rolled back' }),
      'slack',
      LINK,
    ) as {
      text: string;
      blocks: unknown[];
    };
    expect(body.text).toBe('ArmadaChart shop/web failed: canary rolled back');
    expect(body.blocks).toHaveLength(2);
  });

  it('names who approved: json carries approvals as the run recorded them, slack a context line', () => {
    const approvals = [
      {
        gate: 'step 1 (20 %)',
        by: 'system:serviceaccount:shop:dev',
        reason: 'change 42',
        at: '2026-11-25T07:01:00.000Z',
      },
      { gate: 'step 2 (50 %)', by: 'temporal-admin:ops', count: '1 of 2', at: '2026-11-25T07:02:00.000Z' },
    ];
    const reached = event({ event: 'completed', reason: 'upgraded', approvals });
    expect(notificationBody(reached, 'json', LINK)).toMatchObject({ event: 'completed', approvals });
    const { blocks } = notificationBody(reached, 'slack', LINK) as { blocks: unknown[] };
    expect(blocks.at(-1)).toEqual({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: 'approved: step 1 (20 %) by system:serviceaccount:shop:dev (change 42); step 2 (50 %) (1 of 2) by temporal-admin:ops',
        },
      ],
    });
  });
});
