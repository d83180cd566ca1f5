#!/usr/bin/env bash
# The system tools the test suites use, and the Debian package of each.
# As root with apt-get (CI, a fresh container) the missing ones are installed;
# anywhere else this prints what is missing and which suites will skip, and
# exits 0: a suite whose tool is missing skips with one line naming the package.
# Used by `npm test` (pretest) and by .ci/run. ROTREE_NO_INSTALL=1 only reports.
set -u
tools=(
  "nginx nginx real nginx mirrors (test/server, test/edge, the matrix)"
  "chromium chromium the browser suites (test/browser, the matrix's browser column)"
  "curl curl the gateway's client tests"
  "wget wget the gateway's client tests"
  "rclone rclone push and the gateway's client tests"
  "openssl openssl HTTPS + HTTP/2 tests"
  "varnishd varnish the CDN-edge tests"
  "caddy caddy the Caddy tests"
  "litmus litmus WebDAV conformance"
  "mount.davfs davfs2 mounting the gateway"
  "age age opening a private tree's keyring with the reference tool"
  "h2load nghttp2-client DEPLOY.md's load-testing recipe (test/edge/load-recipe.test.js)"
)
have () { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]; }
missing=(); why=()
for t in "${tools[@]}"; do
  set -- $t; bin=$1; pkg=$2; shift 2
  if [ "$bin" = chromium ] && [ -n "${CHROMIUM_PATH:-}" ] && [ -x "$CHROMIUM_PATH" ]; then continue; fi
  if [ "$bin" = nginx ] && [ -n "${NGINX_PATH:-}" ] && [ -x "$NGINX_PATH" ]; then continue; fi
  have "$bin" || { missing+=("$pkg"); why+=("$pkg: $*"); }
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ -z "${ROTREE_NO_INSTALL:-}" ]; then
  echo "rotree tests: installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" && exit 0
  echo "rotree tests: apt-get failed; the suites below will skip"
fi
echo "rotree tests: missing system packages (apt-get install ${missing[*]}); these suites will skip:"
printf '  %s\n' "${why[@]}"
exit 0
