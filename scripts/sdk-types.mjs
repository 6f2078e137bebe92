// Makes the SDK's published types stand alone. The SDK takes its wire types (User, Session,
// storage's shapes, the error codes) from @plinth/shared, type-only, so its JavaScript imports
// nothing; its .d.ts files do. This copies shared's declarations into packages/sdk/dist/shared/
// and points the SDK's .d.ts there, so an app that installs @plinth/sdk alone gets every type.
// Run after `tsc -b` (the SDK's build:dist). Exits 1 if any SDK JavaScript imports shared.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);
const shared = join(root, 'packages/shared/dist');
const dist = join(root, 'packages/sdk/dist');
const into = join(dist, 'shared');

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (p !== into) yield* files(p);
    } else yield p;
  }
}

mkdirSync(into, { recursive: true });
for (const name of readdirSync(shared)) if (name.endsWith('.d.ts')) copyFileSync(join(shared, name), join(into, name));

const SPEC = /(['"])@plinth\/shared\1/g;
const problems = [];
for (const file of files(dist)) {
  const text = readFileSync(file, 'utf8');
  if (!text.includes('@plinth/shared')) continue;
  if (file.endsWith('.d.ts')) {
    let rel = relative(dirname(file), join(into, 'index.js'));
    if (!rel.startsWith('.')) rel = `./${rel}`;
    writeFileSync(file, text.replace(SPEC, `'${rel}'`));
  } else if (file.endsWith('.js')) problems.push(relative(root, file));
}
if (problems.length) {
  console.error(`The SDK's JavaScript must not import @plinth/shared (type-only imports only):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
