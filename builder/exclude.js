// `rotree build --exclude PATTERN`: entries of SRC left out of the tree, by
// patterns in the form of .gitignore lines (git-scm.com/docs/gitignore):
//
//   *.log          a name anywhere: a pattern without a slash matches the last
//                  component of a path, at any depth
//   node_modules/  a trailing slash: directories only (and what is under them)
//   /build         a leading slash: relative to SRC's top only
//   docs/*.tmp     a slash inside: relative to SRC's top, as if it began with /
//   **/cache       ** as a whole component: any number of directories (also none)
//   a/**/b, logs/**
//   * ? [a-z] [!a]  within one component; \* \? \[ a literal character
//
// An excluded directory is never opened, so nothing under it is read. Not
// supported, and refused rather than misread: negation (`!pattern`, which
// .gitignore uses to take an entry back), and empty or comment lines.
import { UsageError } from 'rotree-client/errors'

/**
 * @param {string[]} patterns
 * @returns {{ test: (rel: string, isDir: boolean) => boolean } | null} rel: a path in the tree
 *   ('/a/b'); null when there are no patterns
 */
export function compileExcludes (patterns = []) {
  if (!patterns.length) return null
  const rules = patterns.map(compile)
  return {
    test (rel, isDir) {
      const path = rel.slice(1)
      const base = path.slice(path.lastIndexOf('/') + 1)
      for (const r of rules) {
        if (r.dirOnly && !isDir) continue
        if (r.re.test(r.anchored ? path : base)) return true
      }
      return false
    }
  }
}

function compile (pattern) {
  if (typeof pattern !== 'string' || pattern === '' || pattern.startsWith('#')) throw new UsageError(`--exclude ${JSON.stringify(pattern)}: expected a pattern such as *.log, node_modules/ or /build`)
  if (pattern.startsWith('!')) throw new UsageError(`--exclude ${pattern}: negation (!) is not supported; write the patterns that leave entries out`)
  let p = pattern
  const dirOnly = p.endsWith('/')
  if (dirOnly) p = p.slice(0, -1)
  const anchored = p.includes('/')
  if (p.startsWith('/')) p = p.slice(1)
  if (p === '' || p.split('/').some(c => c === '' || c === '.' || c === '..')) throw new UsageError(`--exclude ${pattern}: empty, . or .. path components`)
  return { dirOnly, anchored, re: new RegExp('^' + toRegex(p) + '$') }
}

/** A pattern's components as a regular expression over a slash-separated path. */
function toRegex (p) {
  const parts = p.split('/')
  let out = ''
  for (let i = 0; i < parts.length; i++) {
    const c = parts[i]; const last = i === parts.length - 1
    if (c !== '**') out += component(c) + (last ? '' : '/')
    else if (!last) out += '(?:[^/]*/)*' // **/b, a/**/b: any number of directories, none included
    else out += i === 0 ? '.*' : '.+' // ** alone: everything; a/**: everything below a
  }
  return out
}

function component (c) {
  let out = ''
  for (let i = 0; i < c.length; i++) {
    const ch = c[i]
    if (ch === '\\' && i + 1 < c.length) { out += escape(c[++i]); continue }
    if (ch === '*') { out += '[^/]*'; continue }
    if (ch === '?') { out += '[^/]'; continue }
    if (ch === '[') {
      const end = c.indexOf(']', i + 2)
      if (end > 0) {
        let set = c.slice(i + 1, end)
        const negated = set.startsWith('!') || set.startsWith('^')
        if (negated) set = set.slice(1)
        out += '[' + (negated ? '^/' : '') + set.replace(/[\\\]^]/g, m => '\\' + m) + ']'
        i = end
        continue
      }
    }
    out += escape(ch)
  }
  return out
}

const escape = ch => ch.replace(/[.*+?^${}()|[\]\\/]/g, m => '\\' + m)
