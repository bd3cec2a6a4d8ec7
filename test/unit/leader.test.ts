import type { V1Lease, V1LeaseSpec } from '@kubernetes/client-node';
import { canAcquire, claim, leaseExpired, microTime, released } from '../../bridge/leader';

const now = new Date('2026-11-22T07:00:10.000Z');
/** A Lease as the API server returns it: times are strings with six fractional digits. */
const lease = (spec: Record<string, unknown>): V1Lease => ({ spec: spec as V1LeaseSpec });
const held = (holderIdentity: string, renewTime = '2026-11-22T07:00:00.000000Z', leaseDurationSeconds = 15) =>
  lease({ holderIdentity, renewTime, leaseDurationSeconds });

describe('microTime', () => {
  it('serialises with six fractional digits, as the API server requires', () => {
    expect(JSON.stringify({ t: microTime(new Date('2026-11-22T07:00:00.123Z')) })).toBe(
      '{"t":"2026-11-22T07:00:00.123000Z"}',
    );
  });
});

describe('leaseExpired', () => {
  it.each<[string, V1Lease, boolean]>([
    ['a Lease renewed 10 s ago for 15 s is still held', held('a'), false],
    ['a Lease renewed 10 s ago for 5 s has lapsed', held('a', undefined, 5), true],
    ['a Lease whose expiry is exactly now is still held', held('a', undefined, 10), false],
    [
      'a Lease renewed in the future (clock skew) is held',
      held('a', '2026-11-22T07:00:20.000000Z', 1),
      false,
    ],
    ['a Lease never renewed has lapsed', lease({ holderIdentity: 'a', leaseDurationSeconds: 15 }), true],
    [
      'a Lease with Date times (as written) is read the same',
      lease({ renewTime: microTime(now), leaseDurationSeconds: 1 }),
      false,
    ],
  ])('%s', (_name, l, expected) => {
    expect(leaseExpired(l, now)).toBe(expected);
  });
});

describe('canAcquire', () => {
  it.each<[string, V1Lease | undefined, boolean]>([
    ['anyone may create an absent Lease', undefined, true],
    [
      'anyone may take a released Lease (empty holder)',
      lease({ holderIdentity: '', leaseDurationSeconds: 1 }),
      true,
    ],
    ['anyone may take a Lease without a holder', lease({}), true],
    ['the holder may renew its own Lease', held('me'), true],
    ['nobody may take a Lease another holds unexpired', held('other'), false],
    ['anyone may take a Lease another let expire', held('other', undefined, 5), true],
  ])('%s', (_name, l, expected) => {
    expect(canAcquire(l, 'me', now)).toBe(expected);
  });
});

describe('claim', () => {
  const acquired = '2026-11-22T06:00:00.000000Z';
  it.each<[string, V1Lease | undefined, Partial<V1LeaseSpec>]>([
    [
      'creating a Lease starts at 0 transitions',
      undefined,
      { leaseTransitions: 0, acquireTime: microTime(now) },
    ],
    [
      'renewing keeps acquireTime and transitions',
      lease({ holderIdentity: 'me', acquireTime: acquired, leaseTransitions: 4 }),
      { leaseTransitions: 4, acquireTime: acquired as unknown as Date },
    ],
    [
      'taking over from another holder counts a transition',
      lease({ holderIdentity: 'other', acquireTime: acquired, leaseTransitions: 4 }),
      { leaseTransitions: 5, acquireTime: microTime(now) },
    ],
    [
      'taking over a released Lease counts a transition',
      lease({ holderIdentity: '', acquireTime: acquired, leaseTransitions: 4 }),
      { leaseTransitions: 5, acquireTime: microTime(now) },
    ],
    [
      'a Lease without transitions counts from 0',
      lease({ holderIdentity: 'other' }),
      { leaseTransitions: 1 },
    ],
  ])('%s', (_name, l, expected) => {
    expect(claim(l, 'me', now, 15)).toMatchObject({
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      renewTime: microTime(now),
      ...expected,
    });
  });
});

describe('released', () => {
  it('clears the holder and shortens the duration to 1 s, keeping the transitions', () => {
    const spec = released({ ...held('me').spec, leaseTransitions: 3 }, now);
    expect(spec).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      renewTime: microTime(now),
      leaseTransitions: 3,
    });
    expect(canAcquire({ spec }, 'other', now)).toBe(true);
  });
});
