import { modelsCli } from './local/models-cli.js'

// `npm run models`: the commands live in local/models-cli.ts (tested in-process); the script only sets the exit status.
process.exitCode = await modelsCli(process.argv.slice(2))
