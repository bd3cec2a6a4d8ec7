# Shared by the npm scripts: bring node_modules in line with package-lock.json when it is
# missing or older, so `npm start` and `npm test` work on a fresh clone.
#
# `npm install`, not `npm ci`: the registry these machines reach does not serve the other
# platforms' optional binaries (@swc/core-darwin-*, ...), so the lock file has no entries for
# them and `npm ci` refuses it as out of sync. `npm install` installs exactly the locked
# versions here and leaves package-lock.json unchanged.
ensure_node_modules() {
  if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
    npm install --no-audit --no-fund
  fi
}
