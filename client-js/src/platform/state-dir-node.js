// Where a Node reader keeps its state by default: apart from platform-node.js,
// whose transports the publishing side's imports of rotree-client/trust need
// not load (docs/BENCHMARKS.md P6, notes: a one-file rebuild is mostly start-up).
import { homedir } from 'node:os'
import { join } from 'node:path'

/** README "The command line": $ROTREE_STATE, else $XDG_STATE_HOME/rotree, else ~/.local/state/rotree */
export function defaultStateDir (env = process.env) {
  if (env.ROTREE_STATE) return env.ROTREE_STATE
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'rotree')
  return join(homedir(), '.local', 'state', 'rotree')
}

export function stateLocation (dir) { return join(dir, 'seq.db') }
