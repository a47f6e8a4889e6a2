import { keysCli } from './local/keys-cli.js'

// `npm run keys`: the commands live in local/keys-cli.ts (tested in-process); the script only sets the exit status.
process.exitCode = await keysCli(process.argv.slice(2))
