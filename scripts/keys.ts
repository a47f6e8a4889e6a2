import { runScript } from './local/run-script.js'

// `npm run keys`: the commands live in local/keys-cli.ts (tested in-process); the script only sets the exit status.
process.exitCode = await runScript(async () => (await import('./local/keys-cli.js')).keysCli)
