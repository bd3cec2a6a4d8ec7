import { z } from 'zod';
import { configSchema as bridgeSchema } from '../bridge/config';
import { DECLARED_VARIABLES, type Reader } from '../core/environment';
import { clientVariables } from '../runs/connect';
import { configSchema as workerSchema } from '../worker/config';
import { generatedNotice } from './regions';
import { table } from './table';

/** The config schema each process parses its environment with (none: it reads declared variables only). */
const SCHEMAS: Record<Reader, z.ZodType | undefined> = {
  worker: workerSchema,
  bridge: bridgeSchema,
  armadactl: z.object(clientVariables),
  'codec server': undefined,
  'local stack': undefined,
};

const WHO: Record<Reader, string> = {
  worker: 'The worker (`npm run worker`, the image)',
  bridge: 'The bridge (`npm run bridge`, the image)',
  armadactl: '`armadactl`',
  'codec server': 'The codec server (`npm run codec-server`)',
  'local stack': 'The local stack’s scripts (`npm run tools`, `npm run images`)',
};

type Row = { name: string; default: string; meaning: string };

/** A schema's variables: name, default and description, as its JSON Schema (input side) gives them. */
function schemaRows(schema: z.ZodType): Row[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, { default?: unknown; description?: string }>;
  };
  return Object.entries(json.properties ?? {}).map(([name, field]) => ({
    name,
    default: field.default === undefined || field.default === '' ? '' : `\`${String(field.default)}\``,
    meaning: field.description ?? '',
  }));
}

/** Every variable a process reads: its schema's, then the declared ones it reads. */
export function variablesOf(reader: Reader): Row[] {
  const schema = SCHEMAS[reader];
  const declared = Object.entries(DECLARED_VARIABLES)
    .filter(([, v]) => (v.readers as readonly Reader[]).includes(reader))
    .map(([name, v]) => ({ name, default: v.default, meaning: v.meaning }));
  return [...(schema ? schemaRows(schema) : []), ...declared];
}

/** docs/reference/environment.md: one table per process, from its schema and the declared variables. */
export function environmentReference(): string {
  const readers = Object.keys(WHO) as Reader[];
  return [
    generatedNotice('the config schemas (worker/config.ts, bridge/config.ts, runs/) and core/environment.ts'),
    '# Environment variables',
    'What each process reads from its environment. An empty variable counts as unset. An invalid value stops the worker or the bridge at start with one line per bad variable. How the Temporal variables combine with a CLI profile, with examples: [Configuration](../how-to/install.md#configuration).',
    ...readers.flatMap((reader) => [
      `## ${WHO[reader]}`,
      table(
        ['variable', 'default', 'meaning'],
        variablesOf(reader).map((row) => [`\`${row.name}\``, row.default, row.meaning]),
      ).join('\n'),
    ]),
  ]
    .join('\n\n')
    .concat('\n');
}
