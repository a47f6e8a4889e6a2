// Test files share their worker process (vitest.config.ts: `isolate: false`). This setup file runs first for every
// file, before any of Loom's modules is imported (a file that reset the module registry has them read the environment
// again): it gives the file the environment the worker had before its first file, so a variable a file set never
// reaches the next one. test/setup-common.ts does the same for `config` and the caches.
const BASELINE = Symbol.for('loom.test.env')
const holder = globalThis as { [BASELINE]?: NodeJS.ProcessEnv }
holder[BASELINE] ??= { ...process.env }
const baseline = holder[BASELINE]
// Vitest's own variables (VITEST_*) are its to set per file.
const ours = (name: string) => !name.startsWith('VITEST')
for (const name of Object.keys(process.env)) if (ours(name) && !(name in baseline)) delete process.env[name]
for (const [name, value] of Object.entries(baseline)) if (ours(name)) process.env[name] = value
