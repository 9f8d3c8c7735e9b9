// Packages whose `main` esbuild cannot bundle, mapped to a build of theirs it can: what every
// bundle of the project's code (scripts/build.mjs, scripts/vscode/build-tests.mjs) resolves them to.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const BUNDLE_ALIASES = {
  // jsonc-parser's main build is UMD, whose require() of its own files esbuild cannot follow.
  'jsonc-parser': require.resolve('jsonc-parser/lib/esm/main.js'),
};
