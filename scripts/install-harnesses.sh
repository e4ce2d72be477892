#!/usr/bin/env bash
# Installs the exact pinned versions of the coding-agent CLIs hoh drives
# (`go run ./cmd/hoh harnesses` lists them).
# Target: $HOH_TOOLS (default <repo>/.tools/harnesses). Idempotent: a package
# whose installed version already matches its pin is not reinstalled.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${HOH_TOOLS:-$repo_root/.tools/harnesses}"

command -v npm >/dev/null || { echo "install-harnesses: npm not found (apt-get install nodejs npm)" >&2; exit 1; }
command -v go >/dev/null || { echo "install-harnesses: go not found (the pins come from the harness catalogue)" >&2; exit 1; }

# Pins (package@version) come from the harness catalogue
# (adapters/harness/catalogue), the one list the adapters check against.
pins_text="$(cd "$repo_root" && go run ./cmd/hoh harnesses pins)"
mapfile -t pins <<<"$pins_text"
[ "${#pins[@]}" -gt 0 ] && [ -n "${pins[0]}" ] || { echo "install-harnesses: the catalogue lists no pins" >&2; exit 1; }
mkdir -p "$tools"
[ -f "$tools/package.json" ] || echo '{"name":"hoh-harnesses","private":true}' >"$tools/package.json"

installed_version() { # $1 = package name; prints the installed version or nothing
  local pj="$tools/node_modules/$1/package.json"
  [ -f "$pj" ] && node -e 'process.stdout.write(require(process.argv[1]).version)' "$pj" || true
}

missing=()
for pin in "${pins[@]}"; do
  name="${pin%@*}"; want="${pin##*@}"
  have="$(installed_version "$name")"
  if [ "$have" = "$want" ]; then
    echo "install-harnesses: $name $want already installed"
  else
    missing+=("$pin")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-harnesses: installing ${missing[*]} into $tools"
  # Installing all at once keeps npm from pruning packages installed earlier.
  all=("${pins[@]}")
  npm install --prefix "$tools" --save-exact --no-audit --no-fund --loglevel=error "${all[@]}"
fi

for pin in "${pins[@]}"; do
  name="${pin%@*}"; want="${pin##*@}"
  have="$(installed_version "$name")"
  [ "$have" = "$want" ] || { echo "install-harnesses: $name is '$have', want $want" >&2; exit 1; }
done
echo "install-harnesses: CLIs are in $tools/node_modules/.bin (set HOH_TOOLS=$tools to point hoh elsewhere)"
