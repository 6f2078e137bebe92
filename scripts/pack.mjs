#!/usr/bin/env node
// `npm run package [-- --out DIR]`: the two tarballs a user installs, built from this checkout:
//   plinth-<version>.tgz       the server and its CLI (packages/server), with the built console
//                              and its own copies of @plinth/sdk and @plinth/shared (bundled:
//                              neither needs a registry), and a built dist (no build at the user's)
//                              with the embedded database's template, packed;
//   plinth-sdk-<version>.tgz   the client SDK (packages/sdk), for the app's own code.
// Both are what `npm publish <tarball>` would publish. The server's package is packed from a
// staging folder (.tmp/pack/stage): npm packs bundled dependencies only from a real
// node_modules folder, which a workspace does not have.
// `--guard` is packages/server's prepack: packing that folder directly would miss the console.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
if (process.argv.includes('--guard')) {
  process.stderr.write(
    `pack: pack the plinth package with npm run package in ${root} (it adds the console and the bundled @plinth packages)\n`,
  );
  process.exit(1);
}
const outFlag = process.argv.indexOf('--out');
const out = resolve(outFlag > 0 ? process.argv[outFlag + 1] : join(root, '.tmp', 'pack'));
const stage = join(root, '.tmp', 'pack-stage', 'plinth');

const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
/** The files npm would pack from a package folder (its `files`, package.json, README, LICENSE). */
const packed = (dir) => JSON.parse(npm(['pack', '--dry-run', '--json', '--ignore-scripts'], dir))[0].files.map((f) => f.path);
const copy = (from, to, files) => {
  for (const f of files) {
    mkdirSync(dirname(join(to, f)), { recursive: true });
    cpSync(join(from, f), join(to, f));
  }
};

execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--if-stale'], { stdio: 'inherit' });

rmSync(stage, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const server = join(root, 'packages', 'server');
copy(server, stage, packed(server));
cpSync(join(root, 'LICENSE'), join(stage, 'LICENSE'));
cpSync(join(root, 'packages', 'console', 'dist'), join(stage, 'console'), { recursive: true });
for (const name of ['sdk', 'shared']) {
  const dir = join(root, 'packages', name);
  copy(dir, join(stage, 'node_modules', '@plinth', name), packed(dir));
}
// The embedded database's template (db/template.ts), packed: a new project of the installed
// package copies it instead of running initdb and every migration (~9 s on a 2-core machine).
const templateDir = dirname(execFileSync(process.execPath, [join(root, 'scripts', 'pglite-template.mjs')], { encoding: 'utf8' }).trim());
const { packTemplate, templateArchive } = await import(new URL('../packages/server/dist/db/template.js', import.meta.url).href);
packTemplate(templateDir, templateArchive(join(stage, 'dist', 'pglite-template'), basename(templateDir)));
// The staged package.json: no scripts (the guard above is for the workspace folder only), the template.
const manifest = JSON.parse(readFileSync(join(stage, 'package.json'), 'utf8'));
delete manifest.scripts;
manifest.files.push('dist/pglite-template/*.tar.gz');
writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

const tarballs = [
  JSON.parse(npm(['pack', '--json', '--pack-destination', out], stage))[0],
  JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', out], join(root, 'packages', 'sdk')))[0],
];
for (const t of tarballs) {
  process.stdout.write(`${join(out, t.filename)}  (${(t.size / 1024 / 1024).toFixed(1)} MiB, ${t.entryCount} files)\n`);
}
