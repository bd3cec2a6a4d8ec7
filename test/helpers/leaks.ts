import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';

/** Every way a secret's bytes could sit in a history, a log or a file: as text and in base64. */
export const secretForms = (secret: string): string[] => [secret, Buffer.from(secret).toString('base64')];

/**
 * The names of `places` (a history, a process's output, a file's bytes) that hold any of
 * `secrets` in any form: [] when none does. Tests expect it to be empty, so a failure names
 * where the leak is.
 */
export function placesHolding(secrets: string[], places: Record<string, string | Buffer>): string[] {
  const forms = secrets.flatMap(secretForms);
  return Object.entries(places)
    .filter(([, content]) => forms.some((form) => content.includes(form)))
    .map(([name]) => name);
}

/** The dev server's database file in `dir` and its write-ahead log, by name, byte for byte. */
export async function databaseFiles(dir: string, dbFile = 'temporal.db'): Promise<Record<string, Buffer>> {
  const names = (await readdir(dir)).filter((name) => name.startsWith(dbFile));
  if (!names.includes(dbFile)) throw new Error(`no ${dbFile} in ${dir}: the dev server kept none there`);
  return Object.fromEntries(
    await Promise.all(names.map(async (name) => [name, await readFile(path.join(dir, name))] as const)),
  );
}
