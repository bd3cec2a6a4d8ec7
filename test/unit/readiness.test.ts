import type {
  V1DaemonSet,
  V1DaemonSetStatus,
  V1Deployment,
  V1DeploymentStatus,
  V1Job,
  V1JobStatus,
  V1Pod,
  V1PodStatus,
  V1StatefulSet,
  V1StatefulSetStatus,
  V1StatefulSetUpdateStrategy,
} from '@kubernetes/client-node';
import {
  daemonSetReady,
  deploymentReady,
  describeTarget,
  isHelmTestPod,
  jobReady,
  podReady,
  requiredOfEntry,
  requiredReady,
  statefulSetReady,
  waitTargets,
  workloadRolledOut,
  createsSelectedPods,
  type Workload,
} from '../../activities/kube/readiness';

const selector = { matchLabels: { app: 'web' } };
const template = {
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image: 'web:1' }] },
};

function deployment(replicas: number | undefined, status: V1DeploymentStatus, generation = 2): V1Deployment {
  return { metadata: { name: 'web', generation }, spec: { replicas, selector, template }, status };
}

function statefulSet(
  replicas: number,
  status: V1StatefulSetStatus,
  updateStrategy?: V1StatefulSetUpdateStrategy,
  generation = 2,
): V1StatefulSet {
  return {
    metadata: { name: 'db', generation },
    spec: { replicas, selector, template, serviceName: 'db', updateStrategy },
    status,
  };
}

function daemonSet(
  status: Partial<V1DaemonSetStatus>,
  type?: 'RollingUpdate' | 'OnDelete',
  generation = 2,
): V1DaemonSet {
  return {
    metadata: { name: 'agent', generation },
    spec: { selector, template, updateStrategy: type && { type } },
    status: {
      currentNumberScheduled: 0,
      desiredNumberScheduled: 0,
      numberMisscheduled: 0,
      numberReady: 0,
      ...status,
    },
  };
}

function pod(status: V1PodStatus, annotations?: Record<string, string>): V1Pod {
  return { metadata: { name: 'web-1', annotations }, spec: template.spec, status };
}

function job(status: V1JobStatus, completions?: number, suspend?: boolean): V1Job {
  return { metadata: { name: 'migrate' }, spec: { completions, suspend, template }, status };
}

const condition = (type: string, status: 'True' | 'False', reason?: string, message?: string) => ({
  type,
  status,
  reason,
  message,
});

describe('deploymentReady', () => {
  it.each<[string, V1Deployment, boolean, string]>([
    [
      'a Deployment whose 3 replicas are updated and available is ready',
      deployment(3, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3 }),
      true,
      '3/3 available',
    ],
    [
      'a Deployment whose new spec the controller has not seen is not ready',
      deployment(3, { observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3 }),
      false,
      'generation 2 not observed yet (observed 1)',
    ],
    [
      'a Deployment with 2 of 3 replicas updated is not ready',
      deployment(3, { observedGeneration: 2, replicas: 4, updatedReplicas: 2, availableReplicas: 3 }),
      false,
      '2/3 updated',
    ],
    [
      'a Deployment with every replica updated but an old pod left is not ready',
      deployment(3, { observedGeneration: 2, replicas: 4, updatedReplicas: 3, availableReplicas: 3 }),
      false,
      '1 old replicas pending termination',
    ],
    [
      'a Deployment with 2 of 3 replicas available is not ready',
      deployment(3, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 2 }),
      false,
      '2/3 available',
    ],
    [
      'a Deployment without spec.replicas wants 1 replica',
      deployment(undefined, { observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1 }),
      true,
      '1/1 available',
    ],
    [
      'a Deployment scaled to 0 is ready with no pods',
      deployment(0, { observedGeneration: 2 }),
      true,
      '0/0 available',
    ],
    [
      'a Deployment with no status yet is not ready',
      { metadata: { name: 'web', generation: 1 }, spec: { replicas: 1, selector, template } },
      false,
      'generation 1 not observed yet (observed 0)',
    ],
  ])('%s', (_name, object, ready, reason) => {
    expect(deploymentReady(object)).toEqual({ ready, reason });
  });
});

describe('deploymentReady with min_ready: available pods of the updated ones, as Armada counts them', () => {
  const rolledOut = { observedGeneration: 2, replicas: 4, updatedReplicas: 4 };
  it.each<[string, V1Deployment, number | string, boolean, string]>([
    [
      'a Deployment of 4 with 2 available meets "50%"',
      deployment(4, { ...rolledOut, availableReplicas: 2 }),
      '50%',
      true,
      '2/4 available (min_ready 50%)',
    ],
    [
      'a Deployment of 4 with 1 available does not meet "50%", which needs 2',
      deployment(4, { ...rolledOut, availableReplicas: 1 }),
      '50%',
      false,
      '1/4 available, min_ready 50% needs 2',
    ],
    [
      'a Deployment of 3 with 1 available does not meet "50%", which rounds up to 2',
      deployment(3, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 1 }),
      '50%',
      false,
      '1/3 available, min_ready 50% needs 2',
    ],
    [
      'a Deployment of 4 with 2 available meets a count of 2',
      deployment(4, { ...rolledOut, availableReplicas: 2 }),
      2,
      true,
      '2/4 available (min_ready 2)',
    ],
    [
      'a count above the replicas is never met',
      deployment(2, { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 }),
      3,
      false,
      '2/2 available, min_ready 3 needs 3',
    ],
    [
      'min_ready does not excuse replicas not yet updated',
      deployment(4, { observedGeneration: 2, replicas: 5, updatedReplicas: 3, availableReplicas: 4 }),
      '50%',
      false,
      '3/4 updated',
    ],
    [
      'min_ready counts of the updated replicas: "50%" of 5 updated needs 3',
      deployment(4, { observedGeneration: 2, replicas: 5, updatedReplicas: 5, availableReplicas: 2 }),
      '50%',
      false,
      '2/5 available, min_ready 50% needs 3',
    ],
    [
      'below all, an old pod still running does not hold the Deployment, as in Armada',
      deployment(4, { observedGeneration: 2, replicas: 5, updatedReplicas: 4, availableReplicas: 3 }),
      '50%',
      true,
      '3/4 available (min_ready 50%)',
    ],
    [
      '"100%" waits for the old pods to go, as without min_ready',
      deployment(4, { observedGeneration: 2, replicas: 5, updatedReplicas: 4, availableReplicas: 4 }),
      '100%',
      false,
      '1 old replicas pending termination',
    ],
    [
      'min_ready does not excuse a new spec the controller has not seen',
      deployment(4, { ...rolledOut, observedGeneration: 1, availableReplicas: 4 }),
      '50%',
      false,
      'generation 2 not observed yet (observed 1)',
    ],
  ])('%s', (_name, object, minReady, ready, reason) => {
    expect(deploymentReady(object, minReady)).toEqual({ ready, reason });
  });
});

describe('statefulSetReady', () => {
  const done = { observedGeneration: 2, replicas: 3, readyReplicas: 3, updatedReplicas: 3 };
  it.each<[string, V1StatefulSet, boolean, string]>([
    [
      'a StatefulSet with 3 ready, updated pods at the update revision is ready',
      statefulSet(3, { ...done, currentRevision: 'db-2', updateRevision: 'db-2' }),
      true,
      '3/3 ready at revision db-2',
    ],
    [
      'a StatefulSet whose new spec the controller has not seen is not ready',
      statefulSet(3, { ...done, observedGeneration: 1, currentRevision: 'db-2', updateRevision: 'db-2' }),
      false,
      'generation 2 not observed yet (observed 1)',
    ],
    [
      'a StatefulSet with 2 of 3 pods ready is not ready',
      statefulSet(3, { ...done, readyReplicas: 2, currentRevision: 'db-2', updateRevision: 'db-2' }),
      false,
      '2/3 ready',
    ],
    [
      'a rolling StatefulSet with 1 of 3 pods updated is not ready',
      statefulSet(3, { ...done, updatedReplicas: 1, currentRevision: 'db-1', updateRevision: 'db-2' }),
      false,
      '1/3 updated',
    ],
    [
      'a rolling StatefulSet whose current revision is not the update revision yet is not ready',
      statefulSet(3, { ...done, currentRevision: 'db-1', updateRevision: 'db-2' }),
      false,
      'revision db-1 not yet db-2',
    ],
    [
      'a StatefulSet with partition 2 is ready once the 1 pod above the partition is updated',
      statefulSet(
        3,
        { ...done, updatedReplicas: 1, currentRevision: 'db-1', updateRevision: 'db-2' },
        { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
      ),
      true,
      '3/3 ready, 1 updated (partition 2)',
    ],
    [
      'a StatefulSet with partition 1 is not ready while only 1 of the 2 pods above it is updated',
      statefulSet(
        3,
        { ...done, updatedReplicas: 1, currentRevision: 'db-1', updateRevision: 'db-2' },
        { type: 'RollingUpdate', rollingUpdate: { partition: 1 } },
      ),
      false,
      '1/2 updated (partition 1)',
    ],
    [
      'an OnDelete StatefulSet is ready when its pods are ready, updated or not',
      statefulSet(
        3,
        { ...done, updatedReplicas: 0, currentRevision: 'db-1', updateRevision: 'db-2' },
        { type: 'OnDelete' },
      ),
      true,
      '3/3 ready',
    ],
  ])('%s', (_name, object, ready, reason) => {
    expect(statefulSetReady(object)).toEqual({ ready, reason });
  });
});

describe('statefulSetReady with min_ready: ready pods of spec.replicas, as Armada counts them', () => {
  const oneRevision = { observedGeneration: 2, replicas: 4, currentRevision: 'db-1', updateRevision: 'db-1' };
  it.each<[string, V1StatefulSet, number | string, boolean, string]>([
    [
      'a StatefulSet of 4 with 2 ready and a third being created meets "50%"',
      statefulSet(4, { ...oneRevision, readyReplicas: 2, updatedReplicas: 3 }),
      '50%',
      true,
      '2/4 ready (min_ready 50%) at revision db-1',
    ],
    [
      'a StatefulSet of 4 with 1 ready does not meet "50%"',
      statefulSet(4, { ...oneRevision, readyReplicas: 1, updatedReplicas: 2 }),
      '50%',
      false,
      '1/4 ready, min_ready 50% needs 2',
    ],
    [
      'a StatefulSet of 4 with 3 ready meets a count of 3',
      statefulSet(4, { ...oneRevision, readyReplicas: 3, updatedReplicas: 4 }),
      3,
      true,
      '3/4 ready (min_ready 3) at revision db-1',
    ],
    [
      'a rolling update below all is not ready until the current revision is the update revision',
      statefulSet(4, { ...oneRevision, readyReplicas: 3, updatedReplicas: 2, updateRevision: 'db-2' }),
      '50%',
      false,
      'revision db-1 not yet db-2',
    ],
    [
      'a StatefulSet scaled to 0 is ready whatever count min_ready asks, as Armada skips it',
      statefulSet(0, { ...oneRevision, replicas: 0, readyReplicas: 0, updatedReplicas: 0 }),
      2,
      true,
      '0/0 ready (min_ready 2) at revision db-1',
    ],
  ])('%s', (_name, object, minReady, ready, reason) => {
    expect(statefulSetReady(object, minReady)).toEqual({ ready, reason });
  });
});

describe('daemonSetReady', () => {
  it.each<[string, V1DaemonSet, boolean, string]>([
    [
      'a DaemonSet with its pod updated and available on all 3 nodes is ready',
      daemonSet({
        observedGeneration: 2,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 3,
        numberAvailable: 3,
      }),
      true,
      '3/3 available',
    ],
    [
      'a DaemonSet whose new spec the controller has not seen is not ready',
      daemonSet({
        observedGeneration: 1,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 3,
        numberAvailable: 3,
      }),
      false,
      'generation 2 not observed yet (observed 1)',
    ],
    [
      'a DaemonSet with 2 of 3 pods updated is not ready',
      daemonSet({
        observedGeneration: 2,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 2,
        numberAvailable: 3,
      }),
      false,
      '2/3 updated',
    ],
    [
      'a DaemonSet with 2 of 3 pods available is not ready',
      daemonSet({
        observedGeneration: 2,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 3,
        numberAvailable: 2,
      }),
      false,
      '2/3 available',
    ],
    [
      'an OnDelete DaemonSet is ready when its pods are available, updated or not',
      daemonSet(
        { observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 0, numberAvailable: 3 },
        'OnDelete',
      ),
      true,
      '3/3 available',
    ],
    [
      'a DaemonSet that fits no node is ready with no pods',
      daemonSet({ observedGeneration: 2, desiredNumberScheduled: 0 }),
      true,
      '0/0 available',
    ],
  ])('%s', (_name, object, ready, reason) => {
    expect(daemonSetReady(object)).toEqual({ ready, reason });
  });
});

describe('daemonSetReady with min_ready: available pods of the desired ones, as Armada counts them', () => {
  const rolledOut = { observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3 };
  it.each<[string, V1DaemonSet, number | string, boolean, string]>([
    [
      'a DaemonSet on 3 nodes with 2 available meets "50%", which rounds up to 2',
      daemonSet({ ...rolledOut, numberAvailable: 2 }),
      '50%',
      true,
      '2/3 available (min_ready 50%)',
    ],
    [
      'a DaemonSet on 3 nodes with 1 available does not meet "50%"',
      daemonSet({ ...rolledOut, numberAvailable: 1 }),
      '50%',
      false,
      '1/3 available, min_ready 50% needs 2',
    ],
    [
      'a DaemonSet on 3 nodes with 1 available meets a count of 1',
      daemonSet({ ...rolledOut, numberAvailable: 1 }),
      1,
      true,
      '1/3 available (min_ready 1)',
    ],
    [
      'min_ready does not excuse pods not yet updated',
      daemonSet({ ...rolledOut, updatedNumberScheduled: 2, numberAvailable: 3 }),
      '50%',
      false,
      '2/3 updated',
    ],
  ])('%s', (_name, object, minReady, ready, reason) => {
    expect(daemonSetReady(object, minReady)).toEqual({ ready, reason });
  });
});

describe('workloadRolledOut: the rollout a pod entry waits for, so that it counts the latest revision', () => {
  const web = (status: V1DeploymentStatus, generation = 2): Workload => ({
    kind: 'Deployment',
    object: deployment(3, status, generation),
  });
  const db = (status: V1StatefulSetStatus, updateStrategy?: V1StatefulSetUpdateStrategy): Workload => ({
    kind: 'StatefulSet',
    object: statefulSet(3, status, updateStrategy),
  });
  const agent = (status: Partial<V1DaemonSetStatus>, type?: 'RollingUpdate' | 'OnDelete'): Workload => ({
    kind: 'DaemonSet',
    object: daemonSet(status, type),
  });
  const oldPodsReady = { observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3 };
  it.each<[string, Workload, string | number | undefined, boolean, string]>([
    [
      "an upgrade the controller has not seen: the old revision's Ready pods do not count",
      web(oldPodsReady),
      undefined,
      false,
      'generation 2 not observed yet (observed 1)',
    ],
    [
      'the same with min_ready',
      web(oldPodsReady),
      '50%',
      false,
      'generation 2 not observed yet (observed 1)',
    ],
    [
      'a Deployment with 1 of 3 replicas updated',
      web({ observedGeneration: 2, replicas: 4, updatedReplicas: 1, availableReplicas: 3 }),
      undefined,
      false,
      '1/3 updated',
    ],
    [
      'the same with min_ready: the update is awaited still',
      web({ observedGeneration: 2, replicas: 4, updatedReplicas: 1, availableReplicas: 3 }),
      '50%',
      false,
      '1/3 updated',
    ],
    [
      'a Deployment updated but with an old pod left',
      web({ observedGeneration: 2, replicas: 4, updatedReplicas: 3, availableReplicas: 3 }),
      undefined,
      false,
      '1 old replicas pending termination',
    ],
    [
      'a Deployment updated, 1 of 3 available',
      web({ observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 1 }),
      undefined,
      false,
      '1/3 available',
    ],
    [
      'the same with min_ready, which the pod entry counts in its pods: rolled out',
      web({ observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 1 }),
      2,
      true,
      '3/3 updated',
    ],
    [
      'a Deployment rolled out',
      web({ observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3 }),
      undefined,
      true,
      '3/3 available',
    ],
    [
      'a StatefulSet with 3 ready pods, 1 updated',
      db({ observedGeneration: 2, replicas: 3, readyReplicas: 3, updatedReplicas: 1 }),
      undefined,
      false,
      '1/3 updated',
    ],
    [
      'a StatefulSet updated whose revision is not yet current',
      db({
        observedGeneration: 2,
        replicas: 3,
        readyReplicas: 3,
        updatedReplicas: 3,
        currentRevision: 'db-1',
        updateRevision: 'db-2',
      }),
      undefined,
      false,
      'revision db-1 not yet db-2',
    ],
    [
      'a StatefulSet with partition 2 and min_ready: 1 updated is all the update does',
      db(
        { observedGeneration: 2, replicas: 3, readyReplicas: 1, updatedReplicas: 1 },
        { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
      ),
      1,
      true,
      '1/1 updated',
    ],
    [
      'an OnDelete StatefulSet with min_ready: no update to wait for',
      db({ observedGeneration: 2, replicas: 3, readyReplicas: 1, updatedReplicas: 0 }, { type: 'OnDelete' }),
      1,
      true,
      '0/0 updated',
    ],
    [
      'a DaemonSet with 2 of 3 pods updated',
      agent({
        observedGeneration: 2,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 2,
        numberAvailable: 3,
      }),
      undefined,
      false,
      '2/3 updated',
    ],
    [
      'the same with min_ready',
      agent({
        observedGeneration: 2,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 2,
        numberAvailable: 3,
      }),
      '50%',
      false,
      '2/3 updated',
    ],
    [
      'a DaemonSet updated, 2 of 3 available',
      agent({
        observedGeneration: 2,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 3,
        numberAvailable: 2,
      }),
      undefined,
      false,
      '2/3 available',
    ],
    [
      'a DaemonSet rolled out',
      agent({
        observedGeneration: 2,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 3,
        numberAvailable: 3,
      }),
      undefined,
      true,
      '3/3 available',
    ],
  ])('%s', (_name, workload, minReady, ready, reason) => {
    expect(workloadRolledOut(workload, minReady)).toEqual({ ready, reason });
  });
});

describe('createsSelectedPods: whether a pod entry counts the pods of a workload', () => {
  const web: Workload = { kind: 'Deployment', object: deployment(3, {}) }; // template labels {app: web}
  it.each<[string | undefined, boolean]>([
    [undefined, true],
    ['app=web', true],
    ['app=db', false],
    ['app=web,tier=front', false],
  ])('selector %s → %s', (selector, expected) => {
    expect(createsSelectedPods(web, selector)).toBe(expected);
  });

  it('refuses a selector that is not key=value pairs', () => {
    expect(() => createsSelectedPods(web, 'app in (web)')).toThrow(
      'pod wait: label selector "app in (web)" is not of the form key=value,key2=value2',
    );
  });
});

describe('podReady', () => {
  it.each<[string, V1Pod, boolean, string]>([
    [
      'a running Pod whose Ready condition is True is ready',
      pod({ phase: 'Running', conditions: [condition('PodScheduled', 'True'), condition('Ready', 'True')] }),
      true,
      'ready',
    ],
    [
      'a Pod in phase Succeeded, e.g. of a completed Job, counts as done',
      pod({ phase: 'Succeeded', conditions: [condition('Ready', 'False', 'PodCompleted')] }),
      true,
      'succeeded',
    ],
    [
      'a Pod in phase Failed is not ready and says why',
      pod({ phase: 'Failed', reason: 'Evicted' }),
      false,
      'failed: Evicted',
    ],
    [
      'a Pod the scheduler cannot place is not ready, with the scheduler message',
      pod({
        phase: 'Pending',
        conditions: [
          condition(
            'PodScheduled',
            'False',
            'Unschedulable',
            "0/3 nodes are available: 3 node(s) didn't match",
          ),
        ],
      }),
      false,
      "unschedulable: 0/3 nodes are available: 3 node(s) didn't match",
    ],
    [
      'a Pod whose container waits in CrashLoopBackOff is not ready, naming the container',
      pod({
        phase: 'Running',
        conditions: [condition('PodScheduled', 'True'), condition('Ready', 'False', 'ContainersNotReady')],
        containerStatuses: [
          {
            name: 'web',
            image: 'web:1',
            imageID: '',
            ready: false,
            restartCount: 4,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
          },
        ],
      }),
      false,
      'container web waiting: CrashLoopBackOff',
    ],
    [
      'a running Pod whose Ready condition is False is not ready',
      pod({ phase: 'Running', conditions: [condition('Ready', 'False', 'ContainersNotReady')] }),
      false,
      'Running, not Ready',
    ],
    ['a Pod with no status yet is not ready', pod({}), false, 'no phase yet, not Ready'],
  ])('%s', (_name, object, ready, reason) => {
    expect(podReady(object)).toEqual({ ready, reason });
  });
});

describe('isHelmTestPod', () => {
  it.each<[string, Record<string, string> | undefined, boolean]>([
    ['a pod without annotations is not a test pod', undefined, false],
    ['a pod with hook "test" is a test pod', { 'helm.sh/hook': 'test' }, true],
    [
      'a pod with the old hook "test-success" among others is a test pod',
      { 'helm.sh/hook': 'pre-install, test-success' },
      true,
    ],
    ['a pre-install hook pod is not a test pod', { 'helm.sh/hook': 'pre-install' }, false],
  ])('%s', (_name, annotations, expected) => {
    expect(isHelmTestPod(pod({}, annotations))).toBe(expected);
  });
});

describe('jobReady', () => {
  it.each<[string, V1Job, { ready: boolean; failed: boolean; reason: string }]>([
    [
      'a Job with condition Complete True is ready',
      job({ succeeded: 1, conditions: [condition('Complete', 'True')] }),
      { ready: true, failed: false, reason: 'complete, 1/1 succeeded' },
    ],
    [
      'a Job with as many successes as completions is ready before its condition is written',
      job({ succeeded: 3 }, 3),
      { ready: true, failed: false, reason: 'complete, 3/3 succeeded' },
    ],
    [
      'a Job with 1 of 3 completions and 2 pods running is not ready',
      job({ succeeded: 1, active: 2 }, 3),
      { ready: false, failed: false, reason: '1/3 succeeded, 2 active' },
    ],
    [
      'a suspended Job is not ready and says so',
      job({}, 1, true),
      { ready: false, failed: false, reason: '0/1 succeeded, suspended' },
    ],
    [
      'a Job with condition Failed True has failed, with the controller reason and message',
      job({
        failed: 1,
        conditions: [
          condition('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
        ],
      }),
      {
        ready: false,
        failed: true,
        reason: 'failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
      },
    ],
    [
      'a Job with only FailureTarget set has not failed yet',
      job({ conditions: [condition('FailureTarget', 'True', 'DeadlineExceeded')] }),
      { ready: false, failed: false, reason: '0/1 succeeded' },
    ],
  ])('%s', (_name, object, expected) => {
    expect(jobReady(object)).toEqual(expected);
  });
});

describe('requiredReady: how many of a total min_ready asks for, as Armada counts it', () => {
  it.each<[string, number, number | string | undefined, number]>([
    ['without min_ready all 3 of 3 are needed', 3, undefined, 3],
    ['a count of 2 needs 2 of 3', 3, 2, 2],
    ['a count above the total needs more than there are, so it is never met', 2, 3, 3],
    ['"50%" of 4 needs 2', 4, '50%', 2],
    ['"50%" of 3 rounds up: ceil(1.5) = 2', 3, '50%', 2],
    ['"80%" of 10 needs 8', 10, '80%', 8],
    ['"100%" of 4 needs all 4', 4, '100%', 4],
    ['"0%" needs none', 5, '0%', 0],
    ['any percentage of 0 needs none', 0, '50%', 0],
    ['a count of 0 needs none', 3, 0, 0],
    // Armada computes ceil(total * (percent / 100)) in floating point: 25 * 0.28 = 7.000000000000001.
    ['"28%" of 25 needs 8 as in Armada (floating point), not the exact 7', 25, '28%', 8],
    ['"7%" of 100 needs 8 as in Armada (floating point), not the exact 7', 100, '7%', 8],
    ['"10%" of 100 needs exactly 10 (no floating point excess there)', 100, '10%', 10],
  ])('%s', (_name, total, minReady, expected) => {
    expect(requiredReady(total, minReady)).toBe(expected);
  });

  it('refuses a string that is not a percentage', () => {
    expect(() => requiredReady(3, 'most')).toThrow('min_ready must be a count or a percentage');
  });
});

describe('requiredOfEntry: how many objects of a wait entry must be ready', () => {
  it.each<[string, Parameters<typeof requiredOfEntry>[0], number, number]>([
    ['every pod of an entry without min_ready', { type: 'pod' }, 3, 3],
    ['"50%" of 3 pods of a pod entry: 2', { type: 'pod', minReady: '50%' }, 3, 2],
    ['a count of 1 job of a job entry of 2: 1', { type: 'job', minReady: 1 }, 2, 1],
    [
      'every Deployment of a "50%" entry, each counting it in its own pods',
      { type: 'deployment', minReady: '50%' },
      3,
      3,
    ],
    [
      'every StatefulSet of an entry with a count, each counting it in its own pods',
      { type: 'statefulset', minReady: 1 },
      2,
      2,
    ],
    [
      'every DaemonSet of a "0%" entry, each counting it in its own pods',
      { type: 'daemonset', minReady: '0%' },
      2,
      2,
    ],
    ['none of an entry with nothing found, even with a count', { type: 'pod', minReady: 2 }, 0, 0],
  ])('%s', (_name, target, found, expected) => {
    expect(requiredOfEntry(target, found)).toBe(expected);
  });
});

describe('waitTargets', () => {
  it.each<[string, Parameters<typeof waitTargets>[0], ReturnType<typeof waitTargets>]>([
    [
      "no wait at all means Armada's default: every job, then every pod",
      undefined,
      [{ type: 'job' }, { type: 'pod' }],
    ],
    [
      'wait.labels select the default jobs and pods',
      { labels: { app: 'web', tier: 'front' } },
      [
        { type: 'job', labelSelector: 'app=web,tier=front' },
        { type: 'pod', labelSelector: 'app=web,tier=front' },
      ],
    ],
    [
      "a resource's own labels win over wait.labels, which apply to the others",
      {
        labels: { release: 'r1' },
        resources: [
          { type: 'deployment', labels: { app: 'web' }, min_ready: '50%' },
          { type: 'statefulset', min_ready: 2 },
        ],
      },
      [
        { type: 'deployment', labelSelector: 'app=web', minReady: '50%' },
        { type: 'statefulset', labelSelector: 'release=r1', minReady: 2 },
      ],
    ],
    ['an empty resources list waits for nothing', { resources: [] }, []],
  ])('%s', (_name, wait, expected) => {
    expect(waitTargets(wait)).toEqual(expected);
  });

  it('describes a target as it reads in summaries: type, selector, min_ready', () => {
    expect(describeTarget({ type: 'pod', labelSelector: 'app=web', minReady: '50%' })).toBe(
      'pod app=web (min_ready 50%)',
    );
    expect(describeTarget({ type: 'job' })).toBe('job');
  });
});
