import { z } from 'zod';
import { armadaChartSpec, armadaChartStatus } from './chart';
import { armadaChartGroupSpec, armadaChartGroupStatus } from './chart-group';
import { objectName } from './common';
import { deployerSpec, deployerStatus } from './deployer';
import { armadaManifestSpec, armadaManifestStatus } from './manifest';

/** A printer column of `kubectl get`. */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'boolean' | 'date';
  jsonPath: string;
  description: string;
  priority?: number;
}

/** Everything the CRD generator, the validator and the bridge need to know about a kind. */
export interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  description: string;
  /** Namespaced unless said otherwise (ArmadaPolicy is cluster-scoped). */
  scope?: 'Namespaced' | 'Cluster';
  spec: z.ZodType;
  status: z.ZodType;
  columns: PrinterColumn[];
}

const age: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'Time since creation.',
};
const stateColumn = (what: string): PrinterColumn => ({
  name: 'State',
  type: 'string',
  jsonPath: '.status.actual_state',
  description: `What the ${what} is now, a word of the state vocabulary (paused while paused).`,
});
const satisfiedColumn: PrinterColumn = {
  name: 'Satisfied',
  type: 'boolean',
  jsonPath: '.status.satisfied',
  description: 'Whether it is in its target state at its current generation (false while a new spec waits).',
};
const state = (what: string): PrinterColumn[] => [
  stateColumn(what),
  {
    name: 'Target State',
    type: 'string',
    jsonPath: '.spec.target_state',
    description: `What the ${what} should be.`,
  },
  satisfiedColumn,
];
const progress: PrinterColumn = {
  name: 'Progress',
  type: 'string',
  jsonPath: '.status.progress.summary',
  description: 'How far the deploy got.',
};

export const kinds = {
  ArmadaChart: {
    kind: 'ArmadaChart',
    plural: 'armadacharts',
    singular: 'armadachart',
    shortNames: ['act'],
    description: 'One Helm release, deployed and kept in its target state by armada-temporal.',
    spec: armadaChartSpec,
    status: armadaChartStatus,
    columns: [...state('release'), progress, age],
  },
  ArmadaChartGroup: {
    kind: 'ArmadaChartGroup',
    plural: 'armadachartgroups',
    singular: 'armadachartgroup',
    shortNames: ['acg'],
    description: 'An ordered group of ArmadaCharts, deployed in parallel or one at a time.',
    spec: armadaChartGroupSpec,
    status: armadaChartGroupStatus,
    columns: [
      ...state('group'),
      {
        name: 'Sequenced',
        type: 'boolean',
        jsonPath: '.spec.sequenced',
        description: 'One chart at a time.',
      },
      progress,
      age,
    ],
  },
  ArmadaManifest: {
    kind: 'ArmadaManifest',
    plural: 'armadamanifests',
    singular: 'armadamanifest',
    shortNames: ['amf'],
    description: 'A whole deploy: ArmadaChartGroups in strict order.',
    spec: armadaManifestSpec,
    status: armadaManifestStatus,
    columns: [
      {
        name: 'Prefix',
        type: 'string',
        jsonPath: '.spec.release_prefix',
        description: 'Release name prefix.',
      },
      ...state('manifest'),
      progress,
      age,
    ],
  },
  Deployer: {
    kind: 'Deployer',
    plural: 'deployers',
    singular: 'deployer',
    shortNames: ['dpl'],
    description: 'A canary rollout of a plain Deployment through percentage steps.',
    spec: deployerSpec,
    status: deployerStatus,
    columns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'Rollout strategy.' },
      {
        name: 'Version',
        type: 'string',
        jsonPath: '.spec.deployment.version',
        description: 'Version rolling out.',
      },
      stateColumn('rollout'),
      satisfiedColumn,
      {
        name: 'Progress',
        type: 'integer',
        jsonPath: '.status.progress.percentage',
        description: 'Percent of replicas on the new version.',
      },
      age,
    ],
  },
} satisfies Record<string, KindDefinition>;

export type KindName = keyof typeof kinds;

export function isKindName(kind: unknown): kind is KindName {
  return typeof kind === 'string' && Object.hasOwn(kinds, kind);
}

/** The metadata the validator reads; the API server checks the rest. */
export const objectMetadata = z.object({
  name: objectName('metadata.name'),
  namespace: z.string().optional(),
});
