/**
 * Seed files: `seed.sql` in the project folder, or the list in plinth.json `db.seed`, run after
 * the migrations on a fresh database only (`plinth db reset`), in one transaction.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Project } from '../config/index.js';
import { type Db, splitStatements } from '../db/index.js';

/** The seed files of a project, in order: `db.seed`, else `seed.sql` when it exists. */
export function seedFiles(project: Project): string[] {
  const listed = project.settings.db?.seed;
  if (listed) return listed.map((f) => resolve(project.root, f));
  const file = resolve(project.root, 'seed.sql');
  return existsSync(file) ? [file] : [];
}

/**
 * Runs the project's seeds; a missing file or a failing statement names the file.
 * @example await applySeeds(db, project) // ['/app/seed.sql']
 */
export async function applySeeds(db: Db, project: Project): Promise<string[]> {
  const files = seedFiles(project);
  const texts = files.map((f) => {
    if (!existsSync(f)) throw new Error(`the seed file ${f} (plinth.json db.seed) does not exist; create it or remove it from the list`);
    return readFileSync(f, 'utf8');
  });
  await db.transaction(async (tx) => {
    for (const [i, text] of texts.entries())
      for (const stmt of splitStatements(text)) {
        try {
          await tx.query(stmt);
        } catch (err) {
          throw new Error(`the seed ${files[i]} failed: ${(err as Error).message}; fix it and run plinth db reset again`);
        }
      }
  });
  return files;
}
