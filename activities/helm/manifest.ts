import { ApplicationFailure } from '@temporalio/common';
import { parseAllDocuments, type Tags } from 'yaml';
import { NonRetryable } from '../../core/failures';
import { runHelm } from './exec';
import type { ReleaseRef } from '../../core/contracts/helm';

/** An object of a rendered manifest, as far as anyone here reads it. */
export interface RenderedObject {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown };
  [field: string]: unknown;
}

/**
 * YAML as the API server and helm read it (go-yaml v2, i.e. YAML 1.1): `0644` is octal (420),
 * as a volume's `defaultMode` means it; the `yaml` package's default 1.2 schema would read 644.
 * Go does not resolve timestamps or sexagesimal numbers (`1:30`) in untyped YAML, so neither
 * does this: they stay strings.
 */
export function kubernetesYamlTags(tags: Tags): Tags {
  return tags.filter((tag) =>
    typeof tag === 'string'
      ? !['timestamp', 'intTime', 'floatTime'].includes(tag)
      : tag.tag !== 'tag:yaml.org,2002:timestamp' && !('format' in tag && tag.format === 'TIME'),
  );
}

/**
 * The objects of a multi-document manifest (`helm template`, `helm get manifest`), in order;
 * empty documents are skipped. Throws InvalidChart when it is not YAML (running it again cannot
 * help).
 */
export function renderedObjects(manifest: string): RenderedObject[] {
  const objects: RenderedObject[] = [];
  for (const doc of parseAllDocuments(manifest, { schema: 'yaml-1.1', customTags: kubernetesYamlTags })) {
    if (doc.errors.length) {
      throw ApplicationFailure.nonRetryable(
        `the rendered chart is not valid YAML: ${doc.errors[0].message}`,
        NonRetryable.InvalidChart,
      );
    }
    const object = doc.toJS() as unknown;
    if (typeof object === 'object' && object !== null && !Array.isArray(object))
      objects.push(object as RenderedObject);
  }
  return objects;
}

/** The manifest of one revision of a release, as helm stored it (`helm get manifest`; no hooks). Writes nothing. */
export async function releaseManifest(ref: ReleaseRef, revision: number): Promise<string> {
  const args = ['get', 'manifest', ref.release, '--namespace', ref.namespace, '--revision', String(revision)];
  return (await runHelm(args, ref.actAs)).stdout;
}
