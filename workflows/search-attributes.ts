import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Search attributes every armada workflow sets, so runs can be filtered in the Temporal UI. */
export const ArmadaKind = defineSearchAttributeKey('ArmadaKind', SearchAttributeType.KEYWORD);
export const ArmadaName = defineSearchAttributeKey('ArmadaName', SearchAttributeType.KEYWORD);
export const ArmadaNamespace = defineSearchAttributeKey('ArmadaNamespace', SearchAttributeType.KEYWORD);
export const ArmadaPhase = defineSearchAttributeKey('ArmadaPhase', SearchAttributeType.KEYWORD);
/**
 * Every object a run deploys, `<Kind>/<namespace>/<name>` (core/plan/run-objects.ts): finds the run
 * of a manifest by any chart, group or Deployer it lists (`ArmadaObjects = 'ArmadaChart/ns/web'`).
 */
export const ArmadaObjects = defineSearchAttributeKey('ArmadaObjects', SearchAttributeType.KEYWORD_LIST);

/** Registered on the dev server at start and in production by `temporal operator search-attribute create`. */
export const searchAttributes = [ArmadaKind, ArmadaName, ArmadaNamespace, ArmadaPhase, ArmadaObjects];

/** A search attribute's type as the `temporal` CLI and the dev server's `--search-attribute` name it. */
export function registeredType(key: (typeof searchAttributes)[number]): 'Keyword' | 'KeywordList' {
  return key.type === SearchAttributeType.KEYWORD_LIST ? 'KeywordList' : 'Keyword';
}
