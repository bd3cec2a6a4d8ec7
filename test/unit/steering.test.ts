import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultSteeringKeyFile, loadSteeringKey, steeringSignerFromEnv } from '../../runs/steering-key';
import { gateRules, proofProblem, recordedBy, ruleRefusal } from '../../core/plan/steering';

const dir = () => mkdtempSync(path.join(tmpdir(), 'steering-unit-'));

describe("the bridge's steering key", () => {
  it('is made once in the default place, private to its owner, and the same key on the next start', () => {
    const env = { XDG_STATE_HOME: dir() };
    const file = defaultSteeringKeyFile(env);
    expect(file).toBe(path.join(env.XDG_STATE_HOME, 'armada-temporal', 'steering-key.pem'));
    const first = steeringSignerFromEnv(env);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(steeringSignerFromEnv(env).publicKey).toBe(first.publicKey);
    expect(first.publicKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it('from ARMADA_STEERING_KEY_FILE: a missing file or a key of another type is refused, naming the file', () => {
    const missing = path.join(dir(), 'none.pem');
    expect(() => steeringSignerFromEnv({ ARMADA_STEERING_KEY_FILE: missing })).toThrow(
      `cannot read the steering key ${missing}`,
    );
    const rsa = path.join(dir(), 'rsa.pem');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    writeFileSync(rsa, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    expect(() => steeringSignerFromEnv({ ARMADA_STEERING_KEY_FILE: rsa })).toThrow(
      `the steering key ${rsa} is an rsa key; it must be Ed25519`,
    );
  });

  it("signs what a run checks: the workflow ID, verb, user, gate and reason; a parent's ID counts for a child", () => {
    const signer = loadSteeringKey(path.join(dir(), 'k.pem'), { create: true });
    const req = { by: 'alice', gate: 'before group apps' };
    const proof = signer.prove('ArmadaManifest:ns/demo', 'approve', req);
    const check = (over: Partial<Parameters<typeof proofProblem>[2]> = {}) =>
      proofProblem(proof, signer.publicKey, {
        workflowIds: ['ArmadaManifest:ns/demo'],
        verb: 'approve',
        req,
        nowMs: Date.parse(proof.at),
        used: new Set(),
        ...over,
      });
    expect(check()).toBeUndefined();
    expect(check({ workflowIds: ['ArmadaManifest:ns/demo/apps', 'ArmadaManifest:ns/demo'] })).toBeUndefined();
    const mismatch = "its proof's signature does not match the bridge's key";
    expect(check({ workflowIds: ['ArmadaManifest:ns/other'] })).toBe(mismatch);
    expect(check({ verb: 'promote' })).toBe(mismatch);
    expect(check({ req: { ...req, by: 'mallory' } })).toBe(mismatch);
    expect(check({ req: { ...req, gate: 'before group db' } })).toBe(mismatch);
    expect(check({ nowMs: Date.parse(proof.at) + 6 * 60_000 })).toMatch(
      /more than 5 minutes from the run's time$/,
    );
    expect(check({ used: new Set([proof.sig]) })).toBe('its proof was used before');
    expect(
      proofProblem(undefined, signer.publicKey, {
        workflowIds: [],
        verb: 'x',
        req,
        nowMs: 0,
        used: new Set(),
      }),
    ).toBe('it carries no proof from the bridge');
    expect(
      proofProblem({ ...proof, sig: 'zz' }, signer.publicKey, {
        workflowIds: ['ArmadaManifest:ns/demo'],
        verb: 'approve',
        req,
        nowMs: Date.parse(proof.at),
        used: new Set(),
      }),
    ).toBe(mismatch);
    // Another bridge's key is not this one.
    const other = loadSteeringKey(path.join(dir(), 'other.pem'), { create: true });
    expect(
      proofProblem(proof, other.publicKey, {
        workflowIds: ['ArmadaManifest:ns/demo'],
        verb: 'approve',
        req,
        nowMs: Date.parse(proof.at),
        used: new Set(),
      }),
    ).toBe(mismatch);
  });
});

describe('gate rules', () => {
  it("name the rule and the user; an unauthenticated approval is shown as a Temporal admin's", () => {
    const rules = gateRules({ distinct_approvers: 2, not_author: true }, 'ArmadaChart/web', {
      authors: { 'ArmadaChart/web': 'alice' },
    })!;
    expect(ruleRefusal(rules, 'alice', undefined, [])).toBe(
      'not_author: alice wrote this spec (ArmadaChart/web) and may not approve it',
    );
    expect(ruleRefusal(rules, 'bob', undefined, ['bob'])).toBe(
      'distinct_approvers: 2: bob has approved already',
    );
    expect(ruleRefusal(rules, 'bob', undefined, [])).toBeUndefined();
    expect(ruleRefusal(rules, 'bob', 'it carries no proof from the bridge', [])).toMatch(
      /^distinct_approvers: 2, not_author: this gate needs approvals the API server authenticated .*\(temporal-admin:bob\)/,
    );
    const unknown = gateRules({ not_author: true }, 'ArmadaManifest/demo', undefined)!;
    expect(ruleRefusal(unknown, 'bob', undefined, [])).toBe(
      'not_author: the author of ArmadaManifest/demo is unknown (the admission policies that record it are not installed), so no approval can pass this gate',
    );
    expect(gateRules({ distinct_approvers: 1 }, 'ArmadaManifest/demo', undefined)).toBeUndefined();
    expect(recordedBy('temporal-admin:carol', false)).toBe('temporal-admin:carol');
    expect(recordedBy(undefined, false)).toBe('temporal-admin');
  });
});
