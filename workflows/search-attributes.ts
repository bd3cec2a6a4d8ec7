import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Search attributes every armada workflow sets, so runs can be filtered in the Temporal UI. */
export const ArmadaKind = defineSearchAttributeKey('ArmadaKind', SearchAttributeType.KEYWORD);
export const ArmadaName = defineSearchAttributeKey('ArmadaName', SearchAttributeType.KEYWORD);
export const ArmadaNamespace = defineSearchAttributeKey('ArmadaNamespace', SearchAttributeType.KEYWORD);
export const ArmadaPhase = defineSearchAttributeKey('ArmadaPhase', SearchAttributeType.KEYWORD);

/** Registered on the dev server at start and in production by `temporal operator search-attribute create`. */
export const searchAttributes = [ArmadaKind, ArmadaName, ArmadaNamespace, ArmadaPhase];
