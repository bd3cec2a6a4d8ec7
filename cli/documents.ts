import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import type { ArmadaChartSpec } from '../api/chart';
import type { ArmadaChartGroupSpec } from '../api/chart-group';
import { kinds } from '../api/kinds';
import type { ArmadaManifestSpec } from '../api/manifest';
import type { ManifestDocuments } from '../workflows/plan/manifest';

interface Parsed {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: unknown;
}

/**
 * The manifest, groups and charts of an already validated multi-document file, with specs
 * parsed (defaults applied). `manifestName` picks one when the file holds several.
 */
export async function manifestDocuments(
  file: string,
  namespace: string,
  manifestName?: string,
): Promise<ManifestDocuments> {
  const docs = parseAllDocuments(await readFile(file, 'utf8'))
    .map((d) => d.toJS() as Parsed | null)
    .filter((d): d is Parsed => d !== null);
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
