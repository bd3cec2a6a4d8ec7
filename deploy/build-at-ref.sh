#!/usr/bin/env bash
# Builds armada-temporal as it was at a git ref (default: 0171bf6, the tree design, the commit
# before issue 35's one-workflow redesign), once per commit, into .tools/builds/<sha>/ (git-ignored
# with .tools/), and prints that directory: its own dist/ (worker, bridge, armadactl, workflow
# bundle). The benchmarks measure it beside HEAD (bench/run.sh); the cluster lane's upgrade drill
# runs a canary on it while HEAD's workers take over (test/cluster/upgrade.test.ts).
# `git archive` rather than a worktree: nothing is registered in the repository, and the directory
# can simply be deleted. node_modules and the local tools are this checkout's when the lockfile is
# the same (a symlink); otherwise `npm ci` there. The ref must be in this clone's history.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
ref=${1:-0171bf6}
sha=$(git rev-parse --verify --quiet "$ref^{commit}") || {
  echo "build-at-ref: $ref is not a commit of this clone (a shallow clone? fetch its history)" >&2
  exit 1
}
dir="$root/.tools/builds/$sha"
mkdir -p "$root/.tools/builds"
# One build at a time (a test run and a benchmark may start together).
exec 8>"$root/.tools/builds/.lock"
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
