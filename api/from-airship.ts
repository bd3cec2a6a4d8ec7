import type { z } from 'zod';
import {
  AIRSHIP_SCHEMA,
  OPERATOR_API_VERSION,
  OPERATOR_KIND,
  airshipDocument,
  chartGroupV1,
  chartGroupV2,
  chartV1,
  chartV2,
  manifest,
  operatorDocument,
  type ChartSourceData,
  type ChartV1,
  type ChartV2,
  type OperatorDocument,
} from './airship-schemas';
import type { ArmadaChartSpecInput, ChartSource } from './chart';
import { API_VERSION, quoted } from './common';
import { plainWords, problemsOf, type Problem } from './validate';

/**
 * airship Armada's documents converted into our custom resources, as one pure function of a
 * file's documents: `armadactl validate`, `apply` and `convert` all read airship documents
 * through it. Every field Armada defines is either mapped onto our fields (keeping what Armada
 * would do, its defaults included) or refused, naming the field and why armada-temporal cannot
 * do what it asks; docs/airship-compatibility.md lists which.
 */

/** One document of a file: its position (1-based) and its content as YAML parsed it. */
export interface SourceDocument {
  doc: number;
  value: unknown;
}

/** A custom resource of ours, as `kubectl apply` takes it. */
export interface ArmadaObject {
  apiVersion: string;
  kind: 'ArmadaManifest' | 'ArmadaChartGroup' | 'ArmadaChart';
  metadata: ObjectMetadata;
  spec: object;
}

/** What an object's metadata carries over into ours; the API server sets the rest anew. */
export interface ObjectMetadata {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface ConvertedDocument {
  doc: number;
  /** How messages name the document: its schema (or apiVersion and kind) and its name. */
  label: string;
  /** The custom resource it becomes; absent when the document cannot be read as its schema. */
  object?: ArmadaObject;
  /** What cannot be converted, at paths of the document as written. */
  problems: Problem[];
  /** Where a field of `object` (`spec.wait.timeout`) came from in the document (`data.timeout`). */
  sourcePath(path: string): string;
}

/** Whether a document is written in airship's format: an Armada document or an operator ArmadaChart. */
export function isAirshipDocument(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { schema, apiVersion, kind } = value as Record<string, unknown>;
  return (
    (typeof schema === 'string' && schema.startsWith('armada/')) ||
    (apiVersion === OPERATOR_API_VERSION && kind === OPERATOR_KIND)
  );
}

type ChartDocument = { version: 1; data: ChartV1 } | { version: 2; data: ChartV2 };
type Parsed =
  | ({ kind: 'Chart' } & ChartDocument)
  | { kind: 'ChartGroup'; data: z.infer<typeof chartGroupV1> }
  | { kind: 'Manifest'; data: z.infer<typeof manifest> }
  | { kind: 'Operator'; document: OperatorDocument };

interface Read {
  doc: number;
  label: string;
  name: string;
  parsed?: Parsed;
  problems: Problem[];
}

/**
 * Converts the airship documents of one file: charts take their groups' `test_charts`, and a chart
 * no group lists but another depends on is `dependency_only`.
 */
export function convertAirshipDocuments(docs: readonly SourceDocument[]): ConvertedDocument[] {
  const read = docs.map(readDocument);
  const groupTests = testChartsOf(read);
  const onlyDependencies = onlyDependenciesOf(read);
  return read.map((r) => convert(r, { groupTests: groupTests.get(r.name) ?? [], onlyDependencies }));
}

const DATA_SCHEMAS = {
  Chart: { 1: chartV1, 2: chartV2 },
  ChartGroup: { 1: chartGroupV1, 2: chartGroupV2 },
  Manifest: { 1: manifest, 2: manifest },
} as const;

function readDocument({ doc, value }: SourceDocument): Read {
  const parse = <S extends z.ZodType>(
    schema: S,
    input: unknown,
    prefix: string[],
    unknownField: string,
  ): { data?: z.output<S>; problems: Problem[] } => {
    const result = schema.safeParse(input, { error: plainWords });
    return result.success
      ? { data: result.data, problems: [] }
      : { problems: problemsOf(result.error, prefix, unknownField) };
  };
  const { apiVersion, kind, schema, metadata } = value as Record<string, unknown>;
  const name = String((metadata as { name?: unknown } | undefined)?.name ?? '?');
  if (apiVersion === OPERATOR_API_VERSION) {
    const label = `${OPERATOR_API_VERSION} ${String(kind)} ${name}`;
    const unknownField = "not a field of the armada-operator's ArmadaChart";
    // Our own ArmadaChart under the operator's apiVersion: say which one was meant.
    const ours = 'spec' in (value as object) && !('data' in (value as object));
    const { data, problems } = parse(
      operatorDocument,
      value,
      [],
      ours
        ? `${unknownField}, which keeps its fields under data; armada-temporal's ArmadaChart, with a spec, is ${API_VERSION}`
        : unknownField,
    );
    return { doc, label, name, problems, ...(data && { parsed: { kind: 'Operator', document: data } }) };
  }
  const label = `${String(schema)} ${name}`;
  const envelope = parse(airshipDocument, value, [], 'not a field of an Armada document');
  if (!envelope.data) return { doc, label, name, problems: envelope.problems };
  const problems = deckhandProblems(envelope.data.metadata);
  const match = AIRSHIP_SCHEMA.exec(envelope.data.schema);
  const version = Number(match?.[2]);
  if (!match || (version !== 1 && version !== 2)) {
    problems.push({
      path: 'schema',
      message:
        'armada-temporal reads armada/Chart, armada/ChartGroup and armada/Manifest documents of v1 and v2',
    });
    return { doc, label, name, problems };
  }
  const type = match[1] as keyof typeof DATA_SCHEMAS;
  const body = parse(
    DATA_SCHEMAS[type][version],
    envelope.data.data,
    ['data'],
    `not a field of ${envelope.data.schema}`,
  );
  problems.push(...body.problems);
  if (!body.data) return { doc, label, name, problems };
  const parsed = (
    type === 'Chart' ? { kind: type, version, data: body.data } : { kind: type, data: body.data }
  ) as Parsed;
  return { doc, label, name, problems, parsed };
}

const refusal = (path: string, why: string): Problem => ({ path, message: `not supported: ${why}` });

/** What Deckhand must do to a document before Armada (or anyone) can deploy it. */
function deckhandProblems(metadata: z.infer<typeof airshipDocument>['metadata']): Problem[] {
  const problems: Problem[] = [];
  if (metadata.substitutions?.length)
    problems.push(
      refusal(
        'metadata.substitutions',
        'Deckhand has not rendered this document yet: render the site (Pegleg or Deckhand) and import the rendered documents',
      ),
    );
  if (metadata.layeringDefinition?.abstract)
    problems.push(
      refusal(
        'metadata.layeringDefinition.abstract',
        'an abstract Deckhand document is a base for layering, never deployed itself',
      ),
    );
  return problems;
}

/** A v1 ChartGroup's `test_charts`, as the default of each chart it lists. */
interface GroupTest {
  group: string;
  enabled: boolean;
}

/**
 * The Chart documents that some chart lists in `dependencies` and no ChartGroup lists: Armada
 * deploys only what its groups list, and builds these into the charts that depend on them.
 */
function onlyDependenciesOf(read: Read[]): Set<string> {
  const grouped = new Set<string>();
  const depended = new Set<string>();
  for (const { parsed } of read) {
    if (parsed?.kind === 'ChartGroup') for (const chart of parsed.data.chart_group) grouped.add(chart);
    if (parsed?.kind === 'Chart') for (const chart of parsed.data.dependencies ?? []) depended.add(chart);
  }
  return new Set([...depended].filter((chart) => !grouped.has(chart)));
}

function testChartsOf(read: Read[]): Map<string, GroupTest[]> {
  const tests = new Map<string, GroupTest[]>();
  for (const { name, parsed } of read) {
    if (parsed?.kind !== 'ChartGroup' || parsed.data.test_charts === undefined) continue;
    for (const chart of parsed.data.chart_group)
      tests.set(chart, [...(tests.get(chart) ?? []), { group: name, enabled: parsed.data.test_charts }]);
  }
  return tests;
}

/** What a conversion cannot honour, and where our fields came from when not from `data.<same path>`. */
class Mapping {
  readonly problems: Problem[] = [];
  private readonly origins: [ours: string, theirs: string][] = [['spec', 'data']];

  refuse(path: string, why: string): void {
    this.problems.push(refusal(path, why));
  }

  require(path: string, what: string): void {
    this.problems.push({ path, message: `required: ${what}` });
  }

  from(ours: string, theirs: string): void {
    this.origins.push([ours, theirs]);
  }

  /** The longest origin that `path` is or lies under decides; paths of no origin (metadata) stay. */
  readonly sourcePath = (path: string): string => {
    const [origin] = this.origins
      .filter(([ours]) => path.startsWith(ours) && /^([.[]|$)/.test(path.slice(ours.length)))
      .sort(([a], [b]) => b.length - a.length);
    return origin ? origin[1] + path.slice(origin[0].length) : path;
  };
}

/** What converting one document needs to know of the others in its file. */
interface FileContext {
  /** Its v1 groups' `test_charts`, for a chart. */
  groupTests: GroupTest[];
  /** The charts that are only dependencies (onlyDependenciesOf). */
  onlyDependencies: ReadonlySet<string>;
}

function convert(read: Read, file: FileContext): ConvertedDocument {
  const m = new Mapping();
  const object = read.parsed && objectOf(read, read.parsed, file, m);
  return {
    doc: read.doc,
    label: read.label,
    ...(object && { object }),
    problems: [...read.problems, ...m.problems],
    sourcePath: m.sourcePath,
  };
}

function objectOf(read: Read, parsed: Parsed, file: FileContext, m: Mapping): ArmadaObject {
  const object = (kind: ArmadaObject['kind'], spec: object): ArmadaObject => ({
    apiVersion: API_VERSION,
    kind,
    metadata: { name: read.name },
    spec: defined(spec),
  });
  switch (parsed.kind) {
    case 'Manifest':
      return object('ArmadaManifest', parsed.data);
    case 'ChartGroup': {
      const { chart_group, sequenced, description } = parsed.data;
      return object('ArmadaChartGroup', { chart_group, sequenced, description });
    }
    case 'Chart':
      return object('ArmadaChart', {
        ...armadaChartSpec(parsed, file.groupTests, m),
        dependency_only: file.onlyDependencies.has(read.name) || undefined,
      });
    case 'Operator':
      return {
        ...object('ArmadaChart', operatorChartSpec(parsed.document, m)),
        metadata: portableMetadata(parsed.document.metadata),
      };
  }
}

/** The annotation in which `kubectl apply` keeps the last object it applied: the old kind's. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * An operator object's metadata as its replacement takes it: name, namespace, labels and
 * annotations. The rest of an export's (uid, resourceVersion, generation, creationTimestamp,
 * managedFields, ownerReferences, the operator's finalizer) describes the old object, and
 * `kubectl apply` would refuse it or diff against it, as against the old last-applied annotation.
 */
function portableMetadata(metadata: OperatorDocument['metadata']): ObjectMetadata {
  const { name, namespace, labels } = metadata;
  const annotations = Object.entries(metadata.annotations ?? {}).filter(([key]) => key !== LAST_APPLIED);
  return {
    name,
    ...(namespace !== undefined && { namespace }),
    ...(labels && Object.keys(labels).length > 0 && { labels }),
    ...(annotations.length > 0 && { annotations: Object.fromEntries(annotations) }),
  };
}

type ChartWait = NonNullable<ArmadaChartSpecInput['wait']>;
type WaitResource = NonNullable<ChartWait['resources']>[number];
type ChartUpgrade = NonNullable<ArmadaChartSpecInput['upgrade']>;
type PreDelete = NonNullable<NonNullable<ChartUpgrade['pre']>['delete']>[number];

/** `fields`, or undefined when every one of them is (so that an empty section is left out). */
function present<T extends object>(fields: T): T | undefined {
  return Object.values(fields).some((value) => value !== undefined) ? fields : undefined;
}

/** `value` without its undefined fields at any depth: the spec as YAML and JSON print it. */
function defined<T>(value: T): T {
  if (Array.isArray(value)) return value.map(defined) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, field]) => field !== undefined)
      .map(([key, field]) => [key, defined(field)]),
  ) as T;
}

function armadaChartSpec(chart: ChartDocument, groupTests: GroupTest[], m: Mapping): ArmadaChartSpecInput {
  const { version, data } = chart;
  return {
    chart_name: version === 1 ? data.chart_name : undefined,
    release: data.release,
    namespace: data.namespace,
    source: armadaSource(data.source, m),
    dependencies: data.dependencies,
    values: data.values,
    wait: armadaWait(chart, m),
    test: armadaTest(chart, groupTests, m),
    upgrade: armadaUpgrade(chart, m),
    protected: data.protected,
    delete: present({ timeout: data.delete?.timeout }),
  };
}

const ARMADA_SOURCE_TYPES: readonly string[] = ['local', 'tar', 'git'];

function armadaSource(source: ChartSourceData, m: Mapping): ArmadaChartSpecInput['source'] {
  if (!ARMADA_SOURCE_TYPES.includes(source.type))
    m.refuse('data.source.type', `Armada's source types are ${ARMADA_SOURCE_TYPES.join(', ')}`);
  if (source.auth_method !== undefined && source.auth_method.toLowerCase() !== 'ssh')
    m.refuse(
      'data.source.auth_method',
      `Armada authenticates to git with SSH only, not ${quoted(source.auth_method)}`,
    );
  const git = source.type === 'git';
  return {
    // Refused above when it is not one of Armada's types, all of which are ours too.
    type: source.type as ChartSource['type'],
    location: source.location,
    subpath: source.subpath,
    // Armada fetches master when a git source names no reference; elsewhere it ignores it.
    reference: git ? (source.reference ?? 'master') : undefined,
    // Armada ignores a local chart's proxy (it fetches nothing); ours refuses it there.
    proxy_server: source.type === 'local' ? undefined : source.proxy_server,
  };
}

/** One entry of a wait, whichever way the document wrote it, and where. */
interface WaitEntry {
  type: string;
  labels?: Record<string, string>;
  min_ready?: number | string;
  required?: boolean;
  allow_async_updates?: boolean;
  path: string;
  typePath: string;
}

/** What Armada waits for when a v2 chart names no resources, in its order (jobs first). */
const V2_DEFAULT_WAIT = ['job', 'daemonset', 'statefulset', 'deployment', 'pod'];

function armadaWait(chart: ChartDocument, m: Mapping): ChartWait | undefined {
  const { version, data } = chart;
  const wait = data.wait;
  const deprecatedTimeout = version === 1 ? data.timeout : undefined;
  if (wait?.timeout === undefined && deprecatedTimeout !== undefined)
    m.from('spec.wait.timeout', 'data.timeout');
  const native = wait?.native?.enabled ?? (version === 1 ? true : undefined);
  return present({
    timeout: wait?.timeout ?? deprecatedTimeout,
    labels: wait?.labels,
    resources: waitResources(
      version === 1 ? v1WaitEntries(data) : v2WaitEntries(data),
      wait?.labels,
      ARMADA_POD_MIN_READY,
      m,
    ),
    // Armada's v1 documents also wait with Helm's own --wait unless they turn it off.
    native: native === undefined ? undefined : { enabled: native },
  });
}

/** A v1 chart's `wait.resources`; none is Armada's v1 default, which is ours: jobs and pods. */
function v1WaitEntries(data: ChartV1): WaitEntry[] | undefined {
  return data.wait?.resources?.map((resource, i) => {
    const path = `data.wait.resources[${i}]`;
    return { ...resource, path, typePath: `${path}.type` };
  });
}

/** A v2 chart's `wait.resources`: a list as written, or Armada's default with a map's overrides. */
function v2WaitEntries(data: ChartV2): WaitEntry[] {
  const resources = data.wait?.resources;
  const base = 'data.wait.resources';
  if (Array.isArray(resources))
    return resources.map((resource, i) => ({
      ...resource,
      path: `${base}[${i}]`,
      typePath: `${base}[${i}].type`,
    }));
  const byType = new Map<string, WaitEntry[]>(
    V2_DEFAULT_WAIT.map((type) => [type, [{ type, path: 'data.wait', typePath: 'data.wait' }]]),
  );
  for (const [type, value] of Object.entries(resources ?? {})) {
    const path = `${base}.${type}`;
    if (value === false) byType.delete(type);
    else
      byType.set(
        type,
        Array.isArray(value)
          ? value.map((config, i) => ({ ...config, type, path: `${path}[${i}]`, typePath: path }))
          : [{ ...value, type, path, typePath: path }],
      );
  }
  return [...byType.values()].flat();
}

const WAIT_TYPES = ['deployment', 'daemonset', 'statefulset', 'pod', 'job'] as const;
const isWaitType = (type: string): type is WaitResource['type'] =>
  (WAIT_TYPES as readonly string[]).includes(type);
/** The types Armada counts min_ready for, in the pods of each object (its ControllerWait), as we do. */
const MIN_READY_TYPES: readonly string[] = ['deployment', 'daemonset', 'statefulset'];

/** Why a min_ready on a pod or job wait is refused: we would count it in ready objects of the entry. */
const ARMADA_POD_MIN_READY =
  'Armada takes min_ready on deployment, daemonset and statefulset waits only; it refuses a chart with one on a pod or job wait';
const OPERATOR_POD_MIN_READY =
  'the armada-operator ignores min_ready on a pod or job wait and waits for all of them, where armada-temporal would ' +
  'count ready objects of the entry: leave it out to wait for all';

/**
 * Our wait entries; each carries `wait.labels` merged under its own labels, as Armada merges them,
 * and its `min_ready` as written (Armada's meaning is ours); `podMinReady` says why one on a pod
 * or job wait is refused.
 */
function waitResources(
  entries: WaitEntry[] | undefined,
  waitLabels: Record<string, string> | undefined,
  podMinReady: string,
  m: Mapping,
): WaitResource[] | undefined {
  let kept = 0;
  return entries?.flatMap((entry) => {
    if (!isWaitType(entry.type)) {
      m.refuse(
        entry.typePath,
        `armada-temporal waits for ${WAIT_TYPES.join(', ')} only, not ${quoted(entry.type)}`,
      );
      return [];
    }
    if (entry.min_ready !== undefined && !MIN_READY_TYPES.includes(entry.type))
      m.refuse(`${entry.path}.min_ready`, podMinReady);
    if (entry.required)
      m.refuse(
        `${entry.path}.required`,
        'armada-temporal counts a type it finds nothing of as ready (required: false); it cannot fail a wait for want of resources',
      );
    if (entry.allow_async_updates === false)
      m.refuse(
        `${entry.path}.allow_async_updates`,
        'armada-temporal waits for a DaemonSet or StatefulSet with an OnDelete or partitioned update as far as it rolls ' +
          '(allow_async_updates: true); it cannot fail it instead',
      );
    const labels = { ...waitLabels, ...entry.labels };
    m.from(`spec.wait.resources[${kept++}]`, entry.path);
    return [
      {
        type: entry.type,
        labels: Object.keys(labels).length ? labels : undefined,
        min_ready: entry.min_ready,
      },
    ];
  });
}

function armadaTest(chart: ChartDocument, groupTests: GroupTest[], m: Mapping): ArmadaChartSpecInput['test'] {
  const test = typeof chart.data.test === 'boolean' ? { enabled: chart.data.test } : chart.data.test;
  const byGroups = [...new Set(groupTests.map((t) => t.enabled))];
  if (test?.enabled === undefined && byGroups.length > 1)
    m.refuse(
      'data.test',
      `its ChartGroups disagree on testing it (${groupTests.map((t) => `${t.group}: test_charts ${t.enabled}`).join(', ')}): set test.enabled`,
    );
  // Armada runs a chart's helm tests unless the chart, or else its v1 group, says not to.
  return { enabled: test?.enabled ?? byGroups[0] ?? true, timeout: test?.timeout };
}

/** What an `upgrade.pre.delete` of each type becomes: our types, or why it is refused. */
interface DeleteRules {
  types: Record<string, { to: PreDelete['type'][] } | { refused: string }>;
  /** Why any other type is refused. */
  others: string;
}
const ARMADA_DELETES: DeleteRules = {
  types: { pod: { to: ['pod'] }, job: { to: ['job'] }, cronjob: { to: ['cronjob'] } },
  others:
    'Armada deletes pods, jobs and cronjobs only (any other type deletes nothing there, and would here)',
};
/** In armada/Chart/v1, type job deletes the CronJobs of its labels too (armada/handlers/pre_update_actions.py). */
const ARMADA_V1_DELETES: DeleteRules = {
  ...ARMADA_DELETES,
  types: { ...ARMADA_DELETES.types, job: { to: ['job', 'cronjob'] } },
};

function preDeletes(
  items: { type?: string; labels?: Record<string, string> }[] | undefined,
  path: string,
  rules: DeleteRules,
  m: Mapping,
): PreDelete[] | undefined {
  return items?.flatMap(({ type = '', labels }, i) => {
    const rule = Object.hasOwn(rules.types, type) ? rules.types[type] : { refused: rules.others };
    if ('refused' in rule) {
      m.refuse(`${path}[${i}].type`, rule.refused);
      return [];
    }
    return rule.to.map((to) => ({ type: to, labels }));
  });
}

function armadaUpgrade(chart: ChartDocument, m: Mapping): ChartUpgrade | undefined {
  const { version, data } = chart;
  const options = data.upgrade?.options;
  const noHooks =
    version === 1
      ? { path: 'data.upgrade.no_hooks', value: data.upgrade?.no_hooks }
      : { path: 'data.upgrade.options.no_hooks', value: data.upgrade?.options?.no_hooks };
  if (noHooks.value)
    m.refuse(
      noHooks.path,
      "Armada skips hooks on upgrades only, while armada-temporal's upgrade.options.no_hooks " +
        '(helm upgrade --install --no-hooks) skips them on the first install too',
    );
  if (options?.recreate_pods)
    m.refuse(
      'data.upgrade.options.recreate_pods',
      "Helm 2's --recreate-pods: Helm 3 and 4 have none (and Armada refuses it since it runs Helm 3)",
    );
  if (version === 1 && data.upgrade?.pre?.update)
    m.refuse(
      'data.upgrade.pre.update',
      "Armada's v1 pre-upgrade update deletes DaemonSets and creates them again from the chart's templates; armada-temporal does not",
    );
  const deletes = preDeletes(
    data.upgrade?.pre?.delete,
    'data.upgrade.pre.delete',
    version === 1 ? ARMADA_V1_DELETES : ARMADA_DELETES,
    m,
  );
  return present({
    pre: present({ delete: deletes?.length ? deletes : undefined }),
    options: present({ force: options?.force }),
  });
}

const OPERATOR_DELETES: DeleteRules = {
  types: {
    '': { to: ['job'] },
    job: { to: ['job'] },
    pod: { to: ['pod'] },
    deployment: { to: ['deployment'] },
    cronjob: { to: ['cronjob'] },
  },
  others: 'the armada-operator deletes jobs, pods, cronjobs and deployments only',
};
/** The operator's min_ready is a string: "2" is a count, as its getMinReady reads it; "" is none. */
function operatorMinReady(minReady: string | undefined): number | string | undefined {
  return minReady && /^[0-9]+$/.test(minReady) ? Number(minReady) : minReady || undefined;
}

/** The operator's wait and helm timeout when its spec gives none (or 0). */
const OPERATOR_DEFAULT_TIMEOUT = 900;

/**
 * An armada-operator ArmadaChart: the operator names the Helm release after the object
 * (`metadata.name`; `data.release` only labels it), fetches `source.location` as a .tgz and
 * gives `helm test` the wait's timeout.
 */
function operatorChartSpec(document: OperatorDocument, m: Mapping): ArmadaChartSpecInput {
  const data = document.data ?? {};
  m.from('spec.release', 'metadata.name');
  // The operator installs the release in the object's namespace (its Helm runner's), and waits and
  // deletes in data.namespace: one namespace here, so they must agree.
  const namespace = document.metadata.namespace ?? data.namespace ?? '';
  if (!namespace)
    m.require('data.namespace', "the release's namespace (the operator's is metadata.namespace)");
  if (data.namespace !== undefined && data.namespace !== namespace)
    m.refuse(
      'data.namespace',
      `the operator installs the release in the object's namespace ${quoted(namespace)} but waits and deletes in ${quoted(data.namespace)}; armada-temporal does all three in one: make them the same`,
    );
  if (data.source?.type && data.source.type !== 'tar')
    m.refuse(
      'data.source.type',
      'the armada-operator downloads every chart as a .tgz from source.location: only tar means the same here',
    );
  const wait = data.wait;
  const timeout = wait?.timeout || undefined;
  const entries = wait?.resources?.map((resource, i): WaitEntry => {
    const path = `data.wait.resources[${i}]`;
    if (resource.namespace !== undefined && resource.namespace !== namespace)
      m.refuse(`${path}.namespace`, `armada-temporal waits in the release's namespace only`);
    if (resource.condition)
      m.refuse(
        `${path}.condition`,
        'armada-temporal waits for readiness as kubectl rollout status judges it, not for a condition',
      );
    if (resource.delay)
      m.refuse(
        `${path}.delay`,
        'armada-temporal polls from the start of its wait (a type it finds nothing of counts as ready on the second poll); it has no delay before it',
      );
    return {
      type: resource.type,
      labels: resource.labels,
      min_ready: operatorMinReady(resource.min_ready),
      path,
      typePath: `${path}.type`,
    };
  });
  const pre = data.upgrade?.pre;
  if (pre?.cleanup)
    m.refuse(
      'data.upgrade.pre.cleanup',
      'armada-temporal upgrades a release in place; it does not uninstall it and install it again',
    );
  if (pre?.update_crd)
    m.refuse(
      'data.upgrade.pre.update_crd',
      "Helm installs a chart's crds/ on the first install only, and armada-temporal does not replace them before an upgrade",
    );
  const deletes = preDeletes(pre?.delete, 'data.upgrade.pre.delete', OPERATOR_DELETES, m);
  return {
    chart_name: data.chart_name,
    release: document.metadata.name,
    namespace,
    source: { type: 'tar', location: data.source?.location, subpath: data.source?.subpath },
    values: data.values,
    wait: present({
      timeout,
      labels: wait?.labels,
      resources: waitResources(entries, wait?.labels, OPERATOR_POD_MIN_READY, m),
      // The operator passes --wait to helm only with a timeout of its own.
      native: wait?.native?.enabled && timeout ? { enabled: true } : undefined,
    }),
    test: data.test?.enabled ? { enabled: true, timeout: timeout ?? OPERATOR_DEFAULT_TIMEOUT } : undefined,
    upgrade: present({ pre: present({ delete: deletes?.length ? deletes : undefined }) }),
  };
}
