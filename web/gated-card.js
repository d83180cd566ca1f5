// The app's card for a gated tree (docs/FORMAT.md §12.10–12.11, docs/WEB.md
// "Gated trees in the browser"): when a mirror's edge wants a token the page
// has no grant for, the card asks for the grant file and the holder's key
// file; checked against the tree in the address (web/grant.js), they are kept
// in this module's memory only and every Tree the app opens reads through
// them, its edge tokens fetched and renewed by rotree-client's gatedTransport.
// The panel names the grant's holder and expiry. Picking a file again
// replaces it; a grant the browser or the mirror refuses gets its own line
// (explain.js grantRefusal), and no mirror is blamed.
import { GATED_TEXT, GATED_TODO, grantRefusal } from './explain.js'
import { readGrantPart, checkGrant, treeOf, gatedOptions, edgeRefused, needsGrant } from './grant.js'
import { parseFragment } from './address.js'
import { setVerdict, renderPanel, fingerprint } from './panel.js'
import { proseNode } from './names.js'

const $ = id => document.getElementById(id)

// memory only: never storage, never the address (docs/WEB.md)
const gate = {
  held: null, // checkGrant's value: the grant every Tree reads through
  parts: { grant: null, key: null }, // { text, name } of each file picked, until both are
  problem: '' // the line about the files last picked or refused
}
let app = null // { clearContent, tree, reopen }

/** Options for the next Tree: reading through the grant held, if any. */
export const gateOptions = () => gatedOptions(gate.held)

/** The card: the tree is gated and this page holds no grant it reads with. */
export function showGated (err) {
  app.clearContent()
  if (edgeRefused(err) && gate.held) {
    // the mirror refused the grant held: it is dropped, and said so
    gate.problem = grantRefusal({ grant: gate.held.grantName, key: gate.held.keyName }, err)
    gate.held = null
  }
  $('gated-text').textContent = GATED_TEXT
  $('gated-todo-text').textContent = GATED_TODO
  problem(gate.problem)
  $('gated').hidden = false
  setVerdict('locked', 'Gated tree: no grant in this page reads it', 'Gated tree')
  document.body.dataset.state = 'gated'
  showGrant()
  renderPanel(app.tree())
}

/**
 * After a failure: when it is a gated edge refusing this page (no grant, or
 * the grant held), the card is shown and true returned; else false.
 * @param {() => boolean} current false once the page has moved on
 */
export async function gatedFailure (err, current) {
  if (!edgeRefused(err) && (gate.held || !(await needsGrant(err)))) return false
  if (current()) showGated(err)
  return true
}

/** The panel's line about the grant held, if any. */
export function showGrant () {
  const h = gate.held
  $('grant').hidden = h === null
  if (h === null) return
  $('grant-holder').replaceChildren(fingerprint(h.holder))
  $('grant-expires').textContent = new Date(h.expiresMs).toLocaleString()
  $('grant-expires').title = h.expires
  $('grant-name').textContent = h.grantName
}

function problem (text) {
  $('gated-problem').replaceChildren(proseNode(text))
  $('gated-problem').hidden = !text
}

/** A file picked in the card: once both are there, checked against the tree in the address and held. */
async function picked (kind, input) {
  const file = input.files?.[0]
  input.value = '' // the page keeps the text it read, not a handle on the file
  if (!file) return
  const names = { grant: gate.parts.grant?.name, key: gate.parts.key?.name, [kind]: file.name }
  try {
    gate.parts[kind] = { text: await readGrantPart(file, kind), name: file.name }
  } catch (err) {
    gate.problem = grantRefusal(names, err)
    return problem(gate.problem)
  }
  const { grant, key } = gate.parts
  if (!grant || !key) return problem(gate.problem = '')
  const addr = parseFragment(location.hash)
  try {
    gate.held = checkGrant({ grantText: grant.text, grantName: grant.name, keyText: key.text, keyName: key.name }, treeOf(addr?.key ?? ''))
    gate.problem = ''
  } catch (err) {
    gate.problem = grantRefusal(names, err)
    return problem(gate.problem)
  }
  app.reopen()
}

/**
 * @param {{ clearContent: () => void, tree: () => any, reopen: () => void }} o
 *   reopen: open the tree again (with the grant now held) and show the address
 */
export function wireGrant (o) {
  app = o
  $('grant-file').addEventListener('change', ev => picked('grant', ev.target))
  $('grant-key-file').addEventListener('change', ev => picked('key', ev.target))
  $('forget-grant').addEventListener('click', () => {
    gate.held = null
    gate.parts = { grant: null, key: null }
    app.reopen()
  })
}
