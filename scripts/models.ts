import { runScript } from './local/run-script.js'

// `npm run models`: the commands live in local/models-cli.ts (tested in-process); the script only sets the exit status.
process.exitCode = await runScript(async () => (await import('./local/models-cli.js')).modelsCli)
