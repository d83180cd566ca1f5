// Media types by file extension: one table for the gateway's responses, the
// Service Worker's and the web app's previews (this file is served to browsers
// as it is, so it imports nothing). A tree stores bytes, not types: like any
// static server we guess from the name, and send `nosniff` so the browser does
// not guess again. Text types say UTF-8 (a guess, but the one every modern
// toolchain makes); anything unknown is application/octet-stream.

const TEXT = '; charset=utf-8'

const TYPES = new Map(Object.entries({
  // web
  html: 'text/html' + TEXT,
  htm: 'text/html' + TEXT,
  xhtml: 'application/xhtml+xml',
  css: 'text/css' + TEXT,
  js: 'text/javascript' + TEXT,
  mjs: 'text/javascript' + TEXT,
  cjs: 'text/javascript' + TEXT,
  map: 'application/json' + TEXT,
  json: 'application/json' + TEXT,
  webmanifest: 'application/manifest+json' + TEXT,
  wasm: 'application/wasm',
  xml: 'application/xml' + TEXT,
  rss: 'application/rss+xml',
  atom: 'application/atom+xml',
  svg: 'image/svg+xml',
  // text
  txt: 'text/plain' + TEXT,
  text: 'text/plain' + TEXT,
  md: 'text/markdown' + TEXT,
  markdown: 'text/markdown' + TEXT,
  csv: 'text/csv' + TEXT,
  tsv: 'text/tab-separated-values' + TEXT,
  ics: 'text/calendar' + TEXT,
  asc: 'text/plain' + TEXT,
  sig: 'application/pgp-signature',
  sha256: 'text/plain' + TEXT,
  sha512: 'text/plain' + TEXT,
  yaml: 'application/yaml' + TEXT,
  yml: 'application/yaml' + TEXT,
  toml: 'application/toml' + TEXT,
  // images
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/vnd.microsoft.icon',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  // fonts
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  // audio, video
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  wav: 'audio/wav',
  flac: 'audio/flac',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  webm: 'video/webm',
  ogv: 'video/ogg',
  // documents
  pdf: 'application/pdf',
  epub: 'application/epub+zip',
  // archives and packages
  zip: 'application/zip',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  bz2: 'application/x-bzip2',
  xz: 'application/x-xz',
  zst: 'application/zstd',
  tar: 'application/x-tar',
  '7z': 'application/x-7z-compressed',
  deb: 'application/vnd.debian.binary-package',
  rpm: 'application/x-rpm',
  jar: 'application/java-archive',
  apk: 'application/vnd.android.package-archive',
  iso: 'application/x-iso9660-image',
  dmg: 'application/x-apple-diskimage',
  exe: 'application/vnd.microsoft.portable-executable',
  msi: 'application/x-msi'
})) // a Map: a name like 'x.constructor' must not find Object's own properties

export const DEFAULT_TYPE = 'application/octet-stream'

/** Extension of the last path component, lowercased ('' for none, or a dotfile like ".profile"). */
export function extension (path) {
  const name = path.slice(path.lastIndexOf('/') + 1)
  const dot = name.lastIndexOf('.')
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : ''
}

/** @param {string} path a file name or path @returns {string} */
export function contentType (path) { return TYPES.get(extension(path)) ?? DEFAULT_TYPE }

// Images an <img> can show. SVG is safe there: an <img> never runs its scripts.
const IMAGE = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'ico', 'svg'])
export function isImage (path) { return IMAGE.has(extension(path)) }
