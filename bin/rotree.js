#!/usr/bin/env node
import { main } from '../cli/main.js'

process.stdout.on('error', err => { if (err.code === 'EPIPE') process.exit(0); throw err })
const code = await main(process.argv.slice(2))
process.exitCode = code
