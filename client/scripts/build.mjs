// Builds the installable package: client/src to client/dist (ESM JavaScript and .d.ts, as tsconfig.build.json says) and to
// client/dist/cjs (the same as CommonJS, for `require` and for TypeScript projects that compile to CommonJS), and copies the
// repository's LICENSE and NOTICE in, which Apache-2.0 (section 4) asks every copy to carry.
// Plain JavaScript, so any Node the package supports can run it (npm runs it before `npm pack`); TypeScript is the repository's.
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const configPath = fileURLToPath(new URL('../tsconfig.build.json', import.meta.url));

/**
 * tsc rewrites `./x.ts` to `./x.js` in the JavaScript but not in the .d.ts (microsoft/TypeScript#61037). TypeScript 5 reads
 * either, but older compilers and some editors look for a `./x.ts` that the package does not ship, so the .d.ts name the
 * .js files too, as hand-written ESM declarations do. Only relative specifiers of our own modules are touched.
 */
function declarationsNamingJs(text) {
  return text.replace(/((?:from|import)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]*)\.ts\2/g, '$1$2$3.js$2');
}

function fail(diagnostics) {
  const host = { getCanonicalFileName: (name) => name, getCurrentDirectory: ts.sys.getCurrentDirectory, getNewLine: () => '\n' };
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
  process.exit(1);
}

const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) });
if (config === undefined) fail([]);
if (config.errors.length > 0) fail(config.errors);

// A module renamed or removed in src must not live on in a stale dist file that the package would still ship.
rmSync(config.options.outDir, { recursive: true, force: true });

function emit(options) {
  const program = ts.createProgram({ rootNames: config.fileNames, options });
  const problems = ts.getPreEmitDiagnostics(program);
  if (problems.length > 0) fail(problems);
  const emitted = program.emit(undefined, (file, text, bom) => ts.sys.writeFile(file, file.endsWith('.d.ts') ? declarationsNamingJs(text) : text, bom));
  if (emitted.diagnostics.length > 0) fail(emitted.diagnostics);
}

emit(config.options);

/**
 * CommonJS beside it: a TypeScript project with `module: node16` that compiles to CommonJS (Node 20's common base
 * configuration) refuses an ESM-only package (TS1479), and a Node 20 older than 20.19 cannot `require` one. dist/cjs holds
 * a package.json saying "commonjs", so Node and TypeScript read its .js and .d.ts as CommonJS. An application that loads the
 * package both ways gets two copies (an error from one is not an instance of the other's class): client/README.md says so.
 */
const cjsDir = join(config.options.outDir, 'cjs');
emit({
  ...config.options,
  outDir: cjsDir,
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  // It forbids `import` in a file compiled to CommonJS; the ESM build above keeps it.
  verbatimModuleSyntax: false,
});
writeFileSync(join(cjsDir, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);

const clientDir = fileURLToPath(new URL('..', import.meta.url));
for (const file of ['LICENSE', 'NOTICE']) copyFileSync(join(clientDir, '..', file), join(clientDir, file));
