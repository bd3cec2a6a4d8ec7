import { z } from 'zod';

/**
 * airship Armada's documents as Armada itself reads them: `schema: armada/<Kind>/v1|v2`,
 * `metadata.name`, the body under `data` (armada/schemas/armada-*-schema-v1|v2.yaml), and the
 * ArmadaChart custom resource of airship's armada-operator (api/v1/armadachart_types.go: group
 * armada.airshipit.org, version v1, its body under `data` too). Field for field as they define
 * them, strict objects: a field they do not define is refused by name. The types are Armada's
 * own; what our custom resources need more of, their schemas check after the conversion
 * (api/from-airship.ts).
 */

/** `armada/Chart/v2` → kind Chart, version 2. */
export const AIRSHIP_SCHEMA = /^armada\/(Chart|ChartGroup|Manifest)\/v(\d+)$/;
/** The armada-operator's ArmadaChart: `apiVersion` and `kind` as its CRD defines them. */
export const OPERATOR_API_VERSION = 'armada.airshipit.org/v1';
export const OPERATOR_KIND = 'ArmadaChart';

const labels = z.record(z.string(), z.string());
const seconds = z.number().int();
const minReady = z.union([z.number().int(), z.string()], {
  error: 'must be a whole number or a percentage such as "80%"',
});

/** One entry of `wait.resources` as both versions write it, and v2's per-type options. */
const waitConfig = { labels: labels.optional(), min_ready: minReady.optional() };
const v2WaitConfig = z.strictObject({
  ...waitConfig,
  required: z.boolean().optional(),
  allow_async_updates: z.boolean().optional(),
});
const v2WaitResources = z.union(
  [
    z.array(v2WaitConfig.extend({ type: z.string() })),
    z.record(z.string(), z.union([z.literal(false), v2WaitConfig, z.array(v2WaitConfig)])),
  ],
  { error: 'must be a list of resources, or a map of resource type to a resource, a list of them or false' },
);

const chartWait = <Resources extends z.ZodType>(resources: Resources) =>
  z.strictObject({
    timeout: seconds.optional(),
    labels: labels.optional(),
    resources: resources.optional(),
    native: z.strictObject({ enabled: z.boolean().optional() }).optional(),
  });

const chartTest = z.strictObject({
  enabled: z.boolean().optional(),
  timeout: seconds.optional(),
  options: z.strictObject({ cleanup: z.boolean().optional() }).optional(),
});

/** `upgrade.pre.delete` and v1's other hook actions; `name` only names the action in Armada's log. */
const hookActions = z.array(
  z.strictObject({ name: z.string().optional(), type: z.string(), labels: labels.optional() }),
);

/** `recreate_pods` is Helm 2's, in both versions until Armada moved to Helm 3. */
const upgradeOptions = { force: z.boolean().optional(), recreate_pods: z.boolean().optional() };

const chartSource = <Subpath extends z.ZodType>(subpath: Subpath) =>
  z.strictObject({
    type: z.string(),
    location: z.string(),
    subpath,
    reference: z.string().optional(),
    proxy_server: z.string().optional(),
    auth_method: z.string().optional(),
  });

const bothChartVersions = {
  release: z.string(),
  namespace: z.string(),
  values: z.record(z.string(), z.unknown()).optional(),
  dependencies: z.array(z.string()).optional(),
  protected: z.strictObject({ continue_processing: z.boolean().optional() }).optional(),
  delete: z.strictObject({ timeout: seconds.optional() }).optional(),
};

export const chartV1 = z.strictObject({
  ...bothChartVersions,
  chart_name: z.string(),
  source: chartSource(z.string()),
  test: z.union([z.boolean(), chartTest], { error: 'must be true, false or an object' }).optional(),
  timeout: seconds.optional(),
  wait: chartWait(z.array(z.strictObject({ type: z.string(), ...waitConfig }))).optional(),
  install: z.record(z.string(), z.unknown()).optional(),
  upgrade: z
    .strictObject({
      no_hooks: z.boolean(),
      pre: z
        .strictObject({
          delete: hookActions.optional(),
          update: hookActions.optional(),
          create: hookActions.optional(),
        })
        .optional(),
      post: z.strictObject({ create: hookActions.optional() }).optional(),
      options: z.strictObject(upgradeOptions).optional(),
    })
    .optional(),
});

export const chartV2 = z.strictObject({
  ...bothChartVersions,
  source: chartSource(z.string().optional()),
  test: chartTest.optional(),
  wait: chartWait(v2WaitResources).optional(),
  upgrade: z
    .strictObject({
      pre: z.strictObject({ delete: hookActions.optional() }).optional(),
      options: z.strictObject({ ...upgradeOptions, no_hooks: z.boolean().optional() }).optional(),
    })
    .optional(),
});

/** `name` repeats `metadata.name` (Armada reads only the latter); `test_charts` is v1's. */
const bothGroupVersions = {
  name: z.string().optional(),
  description: z.string().optional(),
  sequenced: z.boolean().optional(),
  chart_group: z.array(z.string()),
};
export const chartGroupV1 = z.strictObject({ ...bothGroupVersions, test_charts: z.boolean().optional() });
export const chartGroupV2 = z.strictObject(bothGroupVersions);

export const manifest = z.strictObject({ release_prefix: z.string(), chart_groups: z.array(z.string()) });

/**
 * A Deckhand document's metadata: Armada reads `name`; `substitutions` and an abstract
 * `layeringDefinition` mean Deckhand has not rendered the document yet. The rest (`schema`,
 * `storagePolicy`, Deckhand's layering `labels`) is Deckhand's own.
 */
export const airshipMetadata = z.looseObject({
  name: z.string(),
  substitutions: z.array(z.unknown()).optional(),
  layeringDefinition: z.looseObject({ abstract: z.boolean().optional() }).optional(),
});

export const airshipDocument = z.strictObject({
  schema: z.string(),
  metadata: airshipMetadata,
  data: z.unknown(),
});

/** The armada-operator's ArmadaChart body: every field optional, as its CRD has them. */
export const operatorChart = z.strictObject({
  chart_name: z.string().optional(),
  namespace: z.string().optional(),
  release: z.string().optional(),
  source: z
    .strictObject({
      location: z.string().optional(),
      subpath: z.string().optional(),
      type: z.string().optional(),
    })
    .optional(),
  values: z.record(z.string(), z.unknown()).optional(),
  wait: chartWait(
    z.array(
      z.strictObject({
        type: z.string(),
        labels: labels.optional(),
        namespace: z.string().optional(),
        min_ready: z.string().optional(),
        condition: z.string().optional(),
        delay: seconds.optional(),
      }),
    ),
  ).optional(),
  test: z.strictObject({ enabled: z.boolean().optional() }).optional(),
  upgrade: z
    .strictObject({
      pre: z
        .strictObject({
          cleanup: z.boolean().optional(),
          delete: z
            .array(z.strictObject({ type: z.string().optional(), labels: labels.optional() }))
            .optional(),
          update_crd: z.boolean().optional(),
        })
        .optional(),
    })
    .optional(),
});

/**
 * Its status is the operator's to write: read past, never converted. Its metadata may be an
 * export's (`kubectl get -o yaml`), with what the API server set beside the fields read here.
 */
export const operatorDocument = z.strictObject({
  apiVersion: z.literal(OPERATOR_API_VERSION),
  kind: z.literal(OPERATOR_KIND),
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string().optional(),
    labels: labels.optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
  data: operatorChart.optional(),
  status: z.unknown().optional(),
});

export type ChartV1 = z.infer<typeof chartV1>;
export type ChartV2 = z.infer<typeof chartV2>;
export type OperatorDocument = z.infer<typeof operatorDocument>;
export type ChartSourceData = z.infer<typeof chartV2>['source'];
