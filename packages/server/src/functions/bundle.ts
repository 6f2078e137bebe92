/**
 * One function's bundle: its entry, the runtime around it (runtime.ts) and every import it
 * makes (TypeScript, the project's node_modules, Supabase's `npm:` and esm.sh specifiers) in one
 * ES module file a worker thread can load. esbuild is imported here, on the first bundle: a
 * project without functions never loads it.
 */
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';

/** runtime.js beside this file once built (loaded as it is), else runtime.ts (the sources run: tests), bundled once. */
const RUNTIME_JS = fileURLToPath(new URL('./runtime.js', import.meta.url));
const RUNTIME_TS = fileURLToPath(new URL('./runtime.ts', import.meta.url));

/**
 * The runtime module the functions' bundles import (they do not each carry it, nor the SDK it
 * imports: a function's bundle is its own code, bundled in milliseconds). Built, that is
 * runtime.js as it is; from the sources, runtime.ts bundled once into `outDir`.
 * @example const runtime = await prepareRuntime('/tmp/plinth-fn');
 */
export async function prepareRuntime(outDir: string): Promise<string> {
  if (existsSync(RUNTIME_JS)) return RUNTIME_JS;
  if (!existsSync(RUNTIME_TS)) throw new BundleError('the functions runtime (functions/runtime.js) is missing from this build of Plinth');
  const esbuild = await import('esbuild');
  const path = join(outDir, 'runtime.mjs');
  await esbuild.build({
    entryPoints: [RUNTIME_TS],
    outfile: path,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
  });
  return path;
}

/** A failure to bundle: the esbuild messages as `file:line:column: text` lines, for the log. */
export class BundleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BundleError';
  }
}

export interface Bundle {
  /** The ES module file written. */
  path: string;
  /** The project's files it was made of (node_modules left out): a change of one of them is a new version. */
  inputs: string[];
}

/**
 * What a deployed bundle imports the runtime as (`plinth functions deploy`): the server that
 * stores it puts its own runtime's URL there (`withRuntime`).
 */
export const DEPLOYED_RUNTIME = 'plinth:functions-runtime';

/**
 * A deployed bundle made loadable by this server: its runtime import pointed at this server's runtime.
 * @example writeFileSync(path, withRuntime(code, await prepareRuntime(dir)));
 */
export function withRuntime(code: string, runtime: string): string {
  return code.split(JSON.stringify(DEPLOYED_RUNTIME)).join(JSON.stringify(pathToFileURL(runtime).href));
}

/**
 * Bundles the function `file` into `outDir`.
 * @example const { path } = await bundleFunction('/app/functions/hello.ts', 'hello', '/tmp/plinth-fn');
 */
export async function bundleFunction(file: string, name: string, outDir: string, runtime: string): Promise<Bundle> {
  const { code, inputs } = await bundleCode(file, name, pathToFileURL(runtime).href);
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const path = join(outDir, `${name}-${hash}.mjs`);
  writeFileSync(path, code);
  return { path, inputs };
}

/**
 * The function `file` bundled in memory, its runtime imported from `runtimeUrl` (a file URL, or
 * DEPLOYED_RUNTIME for a bundle sent to a server).
 * @example const { code } = await bundleCode('/app/functions/hello.ts', 'hello', DEPLOYED_RUNTIME);
 */
export async function bundleCode(file: string, name: string, runtimeUrl: string): Promise<{ code: Uint8Array; inputs: string[] }> {
  const esbuild = await import('esbuild');
  const workDir = dirname(file);
  let result: Awaited<ReturnType<typeof esbuild.build>>;
  try {
    result = await esbuild.build({
      stdin: {
        // The runtime first: it installs Deno's shim before the function's module runs.
        contents: `import { start } from ${JSON.stringify(runtimeUrl)};\nimport * as mod from ${JSON.stringify(file)};\nstart(mod);\n`,
        resolveDir: workDir,
        sourcefile: `${name}.entry.js`,
        loader: 'js',
      },
      absWorkingDir: workDir,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      write: false,
      metafile: true,
      sourcemap: 'inline',
      sourcesContent: false,
      logLevel: 'silent',
      // CommonJS packages bundled into an ES module still call require() for Node's modules.
      banner: {
        js: "import { createRequire as __plinthCreateRequire } from 'node:module'; const require = __plinthCreateRequire(import.meta.url);",
      },
      plugins: [denoSpecifiers(), external(runtimeUrl)],
    });
  } catch (err) {
    const errors = (err as { errors?: Array<{ text: string; location?: { file: string; line: number; column: number } | null }> }).errors;
    if (!errors) throw err;
    throw new BundleError(
      errors.map((e) => (e.location ? `${e.location.file}:${e.location.line}:${e.location.column}: ${e.text}` : e.text)).join('\n'),
    );
  }
  const code = result.outputFiles?.[0]?.contents;
  if (!code) throw new BundleError('esbuild wrote no output');
  const inputs = Object.keys(result.metafile?.inputs ?? {})
    .filter((p) => !p.includes(':') || isAbsolute(p))
    .map((p) => resolve(workDir, p))
    .filter((p) => !p.includes(`${sep}node_modules${sep}`));
  return { code, inputs };
}

/** The runtime's URL stays an import (the worker loads it from the server's files). */
function external(url: string): Plugin {
  const filter = new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  return { name: 'plinth-runtime-external', setup: (build) => build.onResolve({ filter }, () => ({ path: url, external: true })) };
}

/** `npm:stripe@14/sub` → `stripe/sub`; `npm:@scope/pkg@1` → `@scope/pkg`. */
export function npmPackagePath(spec: string): string {
  const m = /^(@[^/@]+\/[^/@]+|[^/@]+)(?:@[^/]*)?(\/.*)?$/.exec(spec);
  return m ? m[1] + (m[2] ?? '') : spec;
}

/**
 * Supabase's specifiers resolved in the project's node_modules, as a Deno-less shim:
 * `npm:` and `https://esm.sh/` imports become the npm package of that name (the version
 * installed in the project wins; install it with npm), type-only `.d.ts` imports
 * (`jsr:@supabase/functions-js/edge-runtime.d.ts`) become an empty module, and other `jsr:`
 * or URL imports are refused with the fix.
 */
function denoSpecifiers(): Plugin {
  return {
    name: 'plinth-deno-specifiers',
    setup(build) {
      build.onResolve({ filter: /\.d\.ts$/ }, (args) => ({ path: args.path, namespace: 'plinth-empty' }));
      build.onLoad({ filter: /.*/, namespace: 'plinth-empty' }, () => ({ contents: '', loader: 'js' }));
      build.onResolve({ filter: /^(npm:|https:\/\/esm\.sh\/)/ }, async (args) => {
        const bare = args.path.startsWith('npm:') ? args.path.slice(4) : args.path.slice('https://esm.sh/'.length).split('?')[0];
        const target = npmPackagePath(bare.replace(/^\//, ''));
        const found = await build.resolve(target, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer });
        if (found.errors.length)
          return {
            errors: [
              {
                text: `"${args.path}" is the npm package "${target}", which is not installed: run npm install ${target
                  .split('/')
                  .slice(0, target.startsWith('@') ? 2 : 1)
                  .join('/')} in the project`,
              },
            ],
          };
        return { path: found.path, external: found.external, sideEffects: found.sideEffects };
      });
      build.onResolve({ filter: /^(jsr:|https?:)/ }, (args) => ({
        errors: [
          {
            text: `"${args.path}" needs Deno's module loader, which Plinth does not have: install the package with npm and import it as "npm:<name>"`,
          },
        ],
      }));
    },
  };
}
