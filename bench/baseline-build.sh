#!/usr/bin/env bash
# Builds the baseline build of `npm run bench`: the checkout at BENCH_BASELINE_REF (default 0171bf6, the
# commit before issue 35's redesign), once per commit, into .tools/bench-baseline/<sha>/ (git-ignored
# with .tools/), and prints that directory. `git archive` rather than a worktree: nothing is
# registered in the repository, and the directory can simply be deleted. node_modules and the local
# tools are this checkout's when the lockfile is the same (a symlink); otherwise `npm ci` there.
# BENCH_BASELINE_REF=none prints nothing (no baseline).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
ref=${BENCH_BASELINE_REF:-0171bf6}
[[ $ref == none ]] && exit 0
sha=$(git rev-parse --verify "$ref^{commit}")
dir="$root/.tools/bench-baseline/$sha"
mkdir -p "$root/.tools/bench-baseline"
# One build at a time (two benchmark runs may start together).
exec 8>"$root/.tools/bench-baseline/.lock"
flock 8
if [[ ! -f $dir/dist/.built ]]; then
  rm -rf "$dir"
  mkdir -p "$dir/.tools"
  git archive "$sha" | tar -x -C "$dir"
  if git diff --quiet "$sha" HEAD -- package-lock.json; then
    ln -s "$(readlink -f node_modules)" "$dir/node_modules"
  else
    (cd "$dir" && npm ci --no-audit --no-fund >&2)
  fi
  ln -s "$root/.tools/bin" "$dir/.tools/bin"
  (cd "$dir" && bash deploy/build.sh >&2)
fi
echo "$dir"
