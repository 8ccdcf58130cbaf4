#!/usr/bin/env bash
# Packs squall's npm packages into target/npm and prints their paths: squall-judge (the JS
# helper, integrations/js) and squall-PLATFORM, which carries the executable for one platform
# (from the template integrations/js/platform/).
#   scripts/build-npm.sh [--binary PATH] [--platform OS-CPU]
# --binary defaults to the release build (target/release/squall, built if missing); --platform to
# this machine's, as Node names it (linux-x64, darwin-arm64, win32-x64, ...). The other
# platforms' packages are packed the same way on (or cross-compiled for) those platforms.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary= platform=$(node -p 'process.platform + "-" + process.arch')
while [ $# -gt 0 ]; do
  case $1 in
    --binary) binary=${2:?--binary needs a path}; shift ;;
    --platform) platform=${2:?--platform needs OS-CPU}; shift ;;
    *) echo "build-npm: unknown argument $1 (--binary PATH, --platform OS-CPU)" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$binary" ]; then
  binary=$root/target/release/squall
  [ -x "$binary" ] || (cd "$root" && cargo build --release -p squall-cli >&2)
fi
os=${platform%%-*} cpu=${platform#*-}
out=$root/target/npm
package=$out/squall-$platform
rm -rf "$package" && mkdir -p "$package/bin"
for file in package.json README.md; do
  sed -e "s/PLATFORM/$platform/g" -e "s/\"OS\"/\"$os\"/" -e "s/\"CPU\"/\"$cpu\"/" \
    "$root/integrations/js/platform/$file" > "$package/$file"
done
executable=squall
[ "$os" = win32 ] && executable=squall.exe
cp "$binary" "$package/bin/$executable"
chmod 755 "$package/bin/$executable"
(cd "$out" && npm pack --silent "$root/integrations/js" && npm pack --silent "$package") | sed "s|^|$out/|"
