/**
 * How the client is built for npm (`npm run build` in client/, which `npm pack` and `npm publish` run first):
 * ESM and CommonJS JavaScript (ES2022 syntax, ES2020 library) with their own `.d.ts`/`.d.cts`, for a platform that is only the
 * web's (fetch, Web Crypto) so that no Node.js built-in can slip in. Output in client/dist/ (never committed).
 */
import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: ['index.ts'],
  format: ['esm', 'cjs'],
  platform: 'neutral',
  // Every runtime the client is for (Node.js ≥ 20, Deno, Bun, workers) runs ES2022 syntax (private class
  // fields); the API it uses is ES2020's (tsconfig.json's lib), so consumers compiling for ES2020 see no newer types.
  target: 'es2022',
  tsconfig: 'tsconfig.json',
  dts: true,
  outDir: 'dist',
  clean: true,
  sourcemap: false,
  // The doc comments are for editors, which read them in the .d.ts files (kept there); in the JavaScript they
  // only made the package bigger (a third of its unpacked size). Annotations (/* @__PURE__ */) stay.
  outputOptions: { comments: { jsdoc: false, legal: true, annotation: true } },
});
