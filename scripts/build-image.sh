#!/usr/bin/env bash
# Builds squall's container image with podman, no registry needed, and writes it as an archive
# that `docker load` and `podman load` read; prints the archive's path.
#   scripts/build-image.sh [--binary PATH] [--format oci|docker] [--out DIR] [--tag NAME]
# --binary defaults to the release build (built if missing); --format to oci (an OCI archive;
# docker keeps the image's HEALTHCHECK, which the OCI format has no field for); --out to
# target/dist; --tag to squall:VERSION. PODMAN_ROOT (default target/podman) holds podman's
# storage, so a build touches nothing outside the repository.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary= format=oci out=$root/target/dist tag=
while [ $# -gt 0 ]; do
  case $1 in
    --binary) binary=${2:?--binary needs a path}; shift ;;
    --format) format=${2:?--format needs oci or docker}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --tag) tag=${2:?--tag needs a name}; shift ;;
    *) echo "build-image: unknown argument $1 (--binary PATH, --format oci|docker, --out DIR, --tag NAME)" >&2; exit 2 ;;
  esac
  shift
done
case $format in oci | docker) ;; *) echo "build-image: --format is oci or docker, not $format" >&2; exit 2 ;; esac
command -v podman > /dev/null || { echo "build-image: podman is missing (apt-get install podman)" >&2; exit 2; }
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/crates/squall-cli/Cargo.toml" | head -1)
tag=${tag:-squall:$version}
if [ -z "$binary" ]; then
  (cd "$root" && cargo build --release -p squall-cli >&2)
  binary=$root/target/release/squall
fi
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/rootfs/usr/local/bin" "$out"
# The judge writes each verdict's evidence under /tmp: writable by any user, as on any system.
mkdir -m 1777 "$context/rootfs/tmp"
cp "$binary" "$context/rootfs/usr/local/bin/squall"
# The libraries the executable links, at the paths it looks them up at (the loader's included).
for library in $(ldd "$binary" | grep -o '/[^ ]*'); do
  mkdir -p "$context/rootfs$(dirname "$library")"
  cp -L "$library" "$context/rootfs$library"
done
cp "$root/image/Containerfile" "$context/"
storage=${PODMAN_ROOT:-$root/target/podman}
podman=(podman --root "$storage/storage" --runroot "$storage/run" --storage-driver vfs)
# An OCI build drops the HEALTHCHECK, and podman says so once per stage: known, and documented.
"${podman[@]}" build --quiet --format "$format" --tag "$tag" "$context" 2> >(grep -v 'HEALTHCHECK is not supported' >&2) > /dev/null
archive=$out/squall-$version-$format.tar
rm -f "$archive"
"${podman[@]}" save --quiet --format "$format-archive" --output "$archive" "$tag"
echo "$archive"
