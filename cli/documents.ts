import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import type { ArmadaChartSpec } from '../api/chart';
import type { ArmadaChartGroupSpec } from '../api/chart-group';
import { kinds } from '../api/kinds';
import type { ArmadaManifestSpec } from '../api/manifest';
import type { DeployerSpec } from '../api/deployer';
import type { ManifestDocuments } from '../workflows/plan/manifest';
import type { StandaloneDocument } from '../runs/requests';

/** A document as a file or the API server holds it: its kind, name and spec. */
export interface Parsed {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: unknown;
}

async function readDocuments(file: string): Promise<Parsed[]> {
  return parseAllDocuments(await readFile(file, 'utf8'))
    .map((d) => d.toJS() as Parsed | null)
    .filter((d): d is Parsed => d !== null);
}

/**
 * What a file asks `armadactl apply` to run: a manifest (with its groups and charts), or
 * objects that run on their own — ArmadaCharts (one release each) and Deployers — in file order.
 */
export type Applicable =
  | { kind: 'ArmadaManifest'; manifest: ManifestDocuments }
  | { kind: 'standalone'; objects: StandaloneDocument[] };

/**
 * The run an already validated file asks for: its ArmadaManifest when it has one, else its
 * ArmadaCharts and Deployers; an error when it has none of them.
 */
export async function applicableDocuments(
  file: string,
  namespace: string,
  manifestName?: string,
): Promise<Applicable> {
  return applicableOf(await readDocuments(file), file, namespace, manifestName);
}

/**
 * The run valid documents ask for (see applicableDocuments); `source` names where they come
 * from (a file, the cluster) in errors.
 */
export function applicableOf(
  docs: Parsed[],
  source: string,
  namespace: string,
  manifestName?: string,
): Applicable {
  if (docs.some((d) => d.kind === 'ArmadaManifest') || manifestName)
    return { kind: 'ArmadaManifest', manifest: manifestDocuments(docs, source, namespace, manifestName) };
  const objects = docs.flatMap((d): StandaloneDocument[] => {
    const where = { name: d.metadata.name, namespace: d.metadata.namespace ?? namespace };
    if (d.kind === 'ArmadaChart')
      return [{ kind: d.kind, ...where, spec: kinds.ArmadaChart.spec.parse(d.spec) as ArmadaChartSpec }];
    if (d.kind === 'Deployer')
      return [{ kind: d.kind, ...where, spec: kinds.Deployer.spec.parse(d.spec) as DeployerSpec }];
    return [];
  });
  if (!objects.length)
    throw new Error(`${source} has no ArmadaManifest, ArmadaChart or Deployer; nothing to apply`);
  return { kind: 'standalone', objects };
}

/**
 * The manifest, groups and charts of an already validated multi-document file, with specs
 * parsed (defaults applied). `manifestName` picks one when the file holds several.
 */
function manifestDocuments(
  docs: Parsed[],
  file: string,
  namespace: string,
  manifestName?: string,
): ManifestDocuments {
  const manifests = docs.filter(
    (d) => d.kind === 'ArmadaManifest' && (!manifestName || d.metadata.name === manifestName),
  );
  if (manifests.length !== 1) {
    const names = manifests.map((m) => m.metadata.name).join(', ');
    throw new Error(
      manifests.length === 0
        ? `${file} has no ArmadaManifest${manifestName ? ` named ${manifestName}` : ''}`
        : `${file} has several ArmadaManifests (${names}); pick one with --manifest NAME`,
    );
  }
  const specsOf = <T>(kind: 'ArmadaChartGroup' | 'ArmadaChart') =>
    Object.fromEntries(
      docs.filter((d) => d.kind === kind).map((d) => [d.metadata.name, kinds[kind].spec.parse(d.spec) as T]),
    );
  const manifest = manifests[0];
  return {
    namespace: manifest.metadata.namespace ?? namespace,
    manifest: {
      name: manifest.metadata.name,
      spec: kinds.ArmadaManifest.spec.parse(manifest.spec) as ArmadaManifestSpec,
    },
    groups: specsOf<ArmadaChartGroupSpec>('ArmadaChartGroup'),
    charts: specsOf<ArmadaChartSpec>('ArmadaChart'),
  };
}
