# Shared by the npm scripts: bring node_modules in line with package-lock.json when it is
# missing or older, so `npm start` and `npm test` work on a fresh clone.
ensure_node_modules() {
  if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
    npm ci --no-audit --no-fund
  fi
}
