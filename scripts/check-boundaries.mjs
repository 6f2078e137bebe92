// Import-boundary lint (docs/architecture.md, dependency direction). Exits 1 and lists each violation.
//   console → sdk → shared; server → shared; in the console only main.tsx imports router.tsx.
//   inside the server: lib ← config ← {http, db, messaging} ← settings ← {rest, auth, storage} ← changes ← {admin, realtime, webhooks, functions} ← app.ts ← {cli, main.ts}
//   (value imports; a type-only import may point anywhere as long as it closes no cycle);
//   rest never imports auth; realtime and webhooks never import each other (type imports included);
//   an area is imported only through its index.ts (type imports too): no deep imports;
//   no cycle between areas, type-only imports included;
//   inside an area, no cycle between the sub-folders of one folder (auth/accounts and
//   auth/sessions, rest/plan and rest/sql…), type-only imports included: each builds on the
//   ones it imports, as the areas do. Files directly in a folder (its index.ts, routes.ts,
//   deps.ts) are the glue of its sub-folders and are not part of this check.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);
const LAYER = {
  lib: 0,
  config: 1,
  http: 2,
  db: 2,
  messaging: 2,
  settings: 3,
  rest: 4,
  auth: 4,
  storage: 4,
  // What realtime and webhooks share (filter evaluator, LIKE matcher, row splitter, change log,
  // capture on/off): above rest (it reads the schema cache), below both consumers.
  changes: 4.5,
  admin: 5,
  // Beside rest (it reads the schema cache), depending on db and http, never on auth or admin.
  realtime: 5,
  // Database webhooks: a consumer of the change log beside realtime, through the outbox's rules;
  // depends on db, http, messaging, settings and rest (the schema cache, the filter grammar).
  webhooks: 5,
  // Functions (docs/functions.md): the project's own code in worker threads; it reaches data
  // through the HTTP API (app.inject), so it needs http, config and lib, never rest or auth.
  functions: 5,
  // Supabase's faces (/rest/v1, /auth/v1, /storage/v1, realtime channels): translations onto
  // rest, auth, storage and realtime, so above all of them; nothing imports a face.
  supabase: 5.5,
  'app.ts': 6,
  cli: 7,
  'main.ts': 8,
};
/** Areas that are one file: nothing to import deeply. */
const SINGLE = new Set(['app.ts', 'main.ts']);
const PEERS_ALLOWED = new Set(['http>db']); // the error handler maps database-unavailable errors

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules' || name === 'dist') continue;
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(ts|tsx|mjs)$/.test(name) && !/\.test\.ts$/.test(name)) yield p;
  }
}

/** Every import of a file: its specifier and whether it is type-only. */
function imports(text) {
  const out = [];
  const re =
    /^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push({ spec: m[3] ?? m[4] ?? m[5], typeOnly: Boolean(m[2]) });
  return out;
}

const areaOf = (file) => {
  const rel = relative(join(root, 'packages/server/src'), file);
  const first = rel.split('/')[0];
  return first in LAYER ? first : null;
};

const problems = [];
/** Area → areas it imports (any kind), for the cycle check. */
const edges = new Map();
/** Folder (relative to the server's src) → its sub-folder → the sibling sub-folders it imports. */
const subEdges = new Map();

/**
 * An import between two sub-folders of one folder of an area: `auth/sessions/service.ts`
 * importing `auth/accounts/index.ts` is the edge sessions → accounts of the folder `auth`.
 */
function addSubEdge(srcRoot, file, target) {
  const from = relative(srcRoot, file).split('/');
  const to = relative(srcRoot, target).split('/');
  let i = 0;
  while (i < from.length - 1 && i < to.length - 1 && from[i] === to[i]) i++;
  // from[i] and to[i] are the children of the common folder: both must be folders.
  if (i === 0 || i >= from.length - 1 || i >= to.length - 1 || from[i] === to[i]) return;
  const folder = from.slice(0, i).join('/');
  if (!subEdges.has(folder)) subEdges.set(folder, new Map());
  const byChild = subEdges.get(folder);
  if (!byChild.has(from[i])) byChild.set(from[i], new Set());
  byChild.get(from[i]).add(to[i]);
}
for (const pkg of ['shared', 'sdk', 'console', 'server']) {
  const src = join(root, 'packages', pkg, 'src');
  try {
    statSync(src);
  } catch {
    continue;
  }
  for (const file of files(src)) {
    for (const { spec, typeOnly } of imports(readFileSync(file, 'utf8'))) {
      const where = relative(root, file);
      if (spec.startsWith('@plinth/')) {
        const target = spec.split('/')[1];
        const ok = { shared: [], sdk: ['shared'], console: ['sdk', 'shared'], server: ['shared', 'sdk'] }[pkg] ?? [];
        if (!ok.includes(target)) problems.push(`${where}: ${pkg} may not import ${spec}`);
        continue;
      }
      if (!spec.startsWith('.')) {
        if (pkg === 'sdk' || pkg === 'shared') problems.push(`${where}: ${pkg} may not depend on the package ${spec}`);
        continue;
      }
      const target = resolve(dirname(file), spec);
      if (!target.startsWith(src)) problems.push(`${where}: imports outside its package (${spec})`);
      // The console's router imports the pages; nothing but main.tsx imports it back (shared
      // queries live in lib/queries.ts), so the pages form no import circle with it.
      if (pkg === 'console' && /\/src\/router(\.tsx|\.js)?$/.test(target) && !file.endsWith('/src/main.tsx')) {
        problems.push(`${where}: only main.tsx imports the router (shared queries are in lib/queries.ts)`);
      }
      if (pkg !== 'server') continue;
      const from = areaOf(file);
      const to = areaOf(target);
      if (from && from === to) addSubEdge(src, file, target.replace(/\.js$/, '.ts'));
      if (!from || !to || from === to) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from).add(to);
      const targetRel = relative(join(root, 'packages/server/src'), target.replace(/\.js$/, '.ts'));
      if (!SINGLE.has(to) && targetRel !== `${to}/index.ts`) {
        problems.push(`${where}: imports ${to} past its index.ts (${spec})`);
      }
      if ((from === 'realtime' && to === 'webhooks') || (from === 'webhooks' && to === 'realtime')) {
        problems.push(`${where}: realtime and webhooks never import each other, type imports included (what they share lives in changes/)`);
      }
      if (typeOnly) continue;
      if (from === 'rest' && to === 'auth') problems.push(`${where}: rest never imports auth`);
      else if (LAYER[to] > LAYER[from] || (LAYER[to] === LAYER[from] && !PEERS_ALLOWED.has(`${from}>${to}`))) {
        problems.push(`${where}: ${from} may not import ${to} (${spec})`);
      }
    }
  }
}
// Cycles between areas (type-only imports included): each area must build on the ones below.
const seen = new Set();
for (const start of edges.keys()) {
  const stack = [[start, [start]]];
  while (stack.length) {
    const [area, path] = stack.pop();
    for (const next of edges.get(area) ?? []) {
      if (next === start) {
        const cycle = [...path, start].join(' → ');
        const key = [...path].sort().join(',');
        if (!seen.has(key)) {
          seen.add(key);
          problems.push(`a cycle between areas: ${cycle}`);
        }
      } else if (!path.includes(next)) stack.push([next, [...path, next]]);
    }
  }
}

// Cycles between the sub-folders of one folder.
for (const [folder, byChild] of subEdges) {
  const reported = new Set();
  for (const start of byChild.keys()) {
    const stack = [[start, [start]]];
    while (stack.length) {
      const [child, path] = stack.pop();
      for (const next of byChild.get(child) ?? []) {
        if (next === start) {
          const key = [...path].sort().join(',');
          if (!reported.has(key)) {
            reported.add(key);
            problems.push(`a cycle between the sub-folders of ${folder}/: ${[...path, start].join(' → ')}`);
          }
        } else if (!path.includes(next)) stack.push([next, [...path, next]]);
      }
    }
  }
}

if (problems.length) {
  console.error(`Import boundaries violated:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('import boundaries: ok');
