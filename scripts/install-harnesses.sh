#!/usr/bin/env bash
# Installs the exact pinned versions of the four coding-agent CLIs hoh drives.
# Target: $HOH_TOOLS (default <repo>/.tools/harnesses). Idempotent: a package
# whose installed version already matches its pin is not reinstalled.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${HOH_TOOLS:-$repo_root/.tools/harnesses}"

# Pins: keep in step with the adapters' Version() constants.
pins=(
  "@openai/codex@0.171.0"
  "opencode-ai@1.18.33"
  "@mariozechner/pi-coding-agent@0.73.1"
  "@anthropic-ai/claude-code@2.1.197"
)

command -v npm >/dev/null || { echo "install-harnesses: npm not found (apt-get install nodejs npm)" >&2; exit 1; }
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
ls "$tools/node_modules/.bin" | grep -E '^(codex|opencode|pi|claude)$' | sed "s|^|  $tools/node_modules/.bin/|"
