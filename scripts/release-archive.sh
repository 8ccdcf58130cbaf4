#!/usr/bin/env bash
# Makes the release archive `cargo binstall squall-cli` downloads (the layout is in
# crates/squall-cli/Cargo.toml, [package.metadata.binstall]) and prints its path:
#   target/dist/squall-VERSION-TARGET.tar.gz, holding squall-VERSION-TARGET/squall and the README.
#   scripts/release-archive.sh [--binary PATH] [--target TRIPLE] [--out DIR]
# --binary defaults to the release build for --target (built if missing); --target to this host;
# --out to target/dist.
# The GitHub Action installs from these archives too (action.yml).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary= target=$(rustc -vV | sed -n 's/^host: //p') out=$root/target/dist
while [ $# -gt 0 ]; do
  case $1 in
    --binary) binary=${2:?--binary needs a path}; shift ;;
    --target) target=${2:?--target needs a triple}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    *) echo "release-archive: unknown argument $1 (--binary PATH, --target TRIPLE, --out DIR)" >&2; exit 2 ;;
  esac
  shift
done
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/crates/squall-cli/Cargo.toml" | head -1)
if [ -z "$binary" ]; then
  (cd "$root" && cargo build --release -p squall-cli --target "$target" >&2)
  binary=$root/target/$target/release/squall
fi
name=squall-$version-$target
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/$name" "$out"
executable=squall
case $target in *windows*) executable=squall.exe ;; esac
cp "$binary" "$staging/$name/$executable"
cp "$root/README.md" "$staging/$name/"
tar -C "$staging" -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
