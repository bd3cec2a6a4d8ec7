import { z } from 'zod';
import { SOURCE_TYPES } from './chart';
import type { KindDefinition } from './kinds';

/** A namespace name, or a pattern of one where `*` stands for any run of characters (`team-*`). */
const namespacePattern = z
  .string()
  .max(63, 'a namespace pattern must be at most 63 characters')
  .regex(/^[-a-z0-9*]+$/, "a namespace pattern is lower case letters, digits, '-' and '*'");

export const armadaPolicySpec = z
  .strictObject({
    namespaces: z
      .array(namespacePattern)
      .min(1)
      .max(256)
      .describe('Namespaces whose ArmadaManifests, ArmadaCharts and Deployers this policy applies to.'),
    target_namespaces: z
      .array(namespacePattern)
      .max(256)
      .optional()
      .describe('Namespaces their releases and Deployments may go into, besides their own.'),
    source_types: z
      .array(z.enum(SOURCE_TYPES))
      .max(SOURCE_TYPES.length)
      .optional()
      .describe('Chart source types they may use; unset: any.'),
    url_prefixes: z
      .array(z.string().min(1).max(2048))
      .max(256)
      .optional()
      .describe(
        'What chart source locations and proxies (source.proxy_server, as http://host:port/ without a login) and canary analysis URLs must start with; unset: anything. End each with / (https://charts.example.com/), or a longer host matches too.',
      ),
    require_service_account: z
      .boolean()
      .optional()
      .describe('They must name a service_account_name (theirs, or their manifest’s).'),
    allow_adoption: z
      .boolean()
      .optional()
      .describe('Their charts may take over, with adopt: true, a release armada-temporal did not create.'),
    freeze: z
      .strictObject({
        reason: z.string().min(1).max(512).describe('Why, shown in every held run and its status.'),
      })
      .optional()
      .describe(
        'A deploy freeze of the namespaces it names (namespaces: ["*"] freezes the cluster): their runs hold at their next safe point (before a group, a canary step, a helm write) until no policy freezes them.',
      ),
  })
  .describe('What objects of the namespaces it names may do beyond their own namespace.');

export type ArmadaPolicySpec = z.infer<typeof armadaPolicySpec>;

export const policyKind = {
  kind: 'ArmadaPolicy',
  plural: 'armadapolicies',
  singular: 'armadapolicy',
  shortNames: ['apol'],
  description:
    'Cluster-scoped, written by platform admins: which namespaces, sources, URLs, service accounts and adoptions the objects of some namespaces may use, and a deploy freeze of them. Grants add up; the allow-lists of every policy that applies are joined.',
  scope: 'Cluster',
  spec: armadaPolicySpec,
  status: z.strictObject({}).describe('Unused.'),
  columns: [
    {
      name: 'Namespaces',
      type: 'string',
      jsonPath: '.spec.namespaces',
      description: 'Namespaces it applies to.',
    },
    {
      name: 'Targets',
      type: 'string',
      jsonPath: '.spec.target_namespaces',
      description: 'Namespaces they may deploy into.',
    },
    {
      name: 'Freeze',
      type: 'string',
      jsonPath: '.spec.freeze.reason',
      description: 'Why the cluster is frozen, when this policy freezes it.',
    },
    {
      name: 'Age',
      type: 'date',
      jsonPath: '.metadata.creationTimestamp',
      description: 'Time since creation.',
    },
  ],
} satisfies KindDefinition;
