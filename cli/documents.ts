import type { ArmadaChartSpec } from '../api/chart';
import type { ArmadaChartGroupSpec } from '../api/chart-group';
import type { ArmadaManifestSpec } from '../api/manifest';
import type { DeployerSpec } from '../api/deployer';
import type { ManifestDocuments } from '../core/plan/manifest';
import type { StandaloneDocument } from '../runs/requests';
import { formatProblem, readArmadaFile, type FileObject } from './validate';

/**
 * What a file asks `armadactl apply` to run: a manifest (with its groups and charts), or
 * objects that run on their own — ArmadaCharts (one release each; not those `dependency_only`)
 * and Deployers — in file order, with every chart of the file for their `dependencies` to name.
 */
export type Applicable =
  | { kind: 'ArmadaManifest'; manifest: ManifestDocuments }
  | { kind: 'standalone'; objects: StandaloneDocument[]; charts: Record<string, ArmadaChartSpec> };

/** The run a file asks for (see applicableOf); an error naming its problems when it has any. */
export async function applicableDocuments(
  file: string,
  namespace: string,
  manifestName?: string,
): Promise<Applicable> {
  const { objects, problems } = await readArmadaFile(file);
  if (problems.length) throw new Error(problems.map(formatProblem).join('\n'));
  return applicableOf(objects, file, namespace, manifestName);
}

/**
 * The run a file's valid objects ask for: its ArmadaManifest when it has one, else its
 * ArmadaCharts and Deployers; an error when it has none of them. Objects without a namespace
 * take `namespace`.
 */
export function applicableOf(
  objects: FileObject[],
  file: string,
  namespace: string,
  manifestName?: string,
): Applicable {
  if (objects.some((o) => o.kind === 'ArmadaManifest') || manifestName)
    return { kind: 'ArmadaManifest', manifest: manifestDocuments(objects, file, namespace, manifestName) };
  const standalone = objects.flatMap((o): StandaloneDocument[] => {
    const where = { name: o.name, namespace: o.object.metadata.namespace ?? namespace };
    if (o.kind === 'ArmadaChart' && !(o.spec as ArmadaChartSpec).dependency_only)
      return [{ kind: o.kind, ...where, spec: o.spec as ArmadaChartSpec }];
    if (o.kind === 'Deployer') return [{ kind: o.kind, ...where, spec: o.spec as DeployerSpec }];
    return [];
  });
  if (!standalone.length)
    throw new Error(
      `${file} has no ArmadaManifest, Deployer or ArmadaChart that is not dependency_only; nothing to apply`,
    );
  return {
    kind: 'standalone',
    objects: standalone,
    charts: specsOf<ArmadaChartSpec>(objects, 'ArmadaChart'),
  };
}

/** The manifest, groups, charts and Deployers of a file. `manifestName` picks one when the file holds several. */
function manifestDocuments(
  objects: FileObject[],
  file: string,
  namespace: string,
  manifestName?: string,
): ManifestDocuments {
  const manifests = objects.filter(
    (o) => o.kind === 'ArmadaManifest' && (!manifestName || o.name === manifestName),
  );
  if (manifests.length !== 1) {
    const names = manifests.map((m) => m.name).join(', ');
    throw new Error(
      manifests.length === 0
        ? `${file} has no ArmadaManifest${manifestName ? ` named ${manifestName}` : ''}`
        : `${file} has several ArmadaManifests (${names}); pick one with --manifest NAME`,
    );
  }
  const [manifest] = manifests;
  return {
    namespace: manifest.object.metadata.namespace ?? namespace,
    manifest: { name: manifest.name, spec: manifest.spec as ArmadaManifestSpec },
    groups: specsOf<ArmadaChartGroupSpec>(objects, 'ArmadaChartGroup'),
    charts: specsOf<ArmadaChartSpec>(objects, 'ArmadaChart'),
    deployers: specsOf<DeployerSpec>(objects, 'Deployer'),
  };
}

/** The specs of a file's objects of one kind, by name. */
function specsOf<T>(objects: FileObject[], kind: 'ArmadaChartGroup' | 'ArmadaChart' | 'Deployer') {
  return Object.fromEntries(objects.filter((o) => o.kind === kind).map((o) => [o.name, o.spec as T]));
}
