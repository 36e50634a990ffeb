#!/usr/bin/env bash
# Makes data/fonts/kibitz-sans.ttf, the font built into the binary for the
# text of its plots (stats --plots, train's loss plot): DejaVu Sans cut to
# Latin-1 and a few signs, so a plot has its text on a server with no fonts.
# Needs Debian's fonts-dejavu-core and fonttools (pip install fonttools).
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:-/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf}
pyftsubset "$src" \
    --unicodes="U+0020-007E,U+00A0-00FF,U+2013,U+2014,U+2026,U+2212,U+2264,U+2265" \
    --name-IDs='*' --no-hinting --desubroutinize --layout-features='' \
    --output-file=data/fonts/kibitz-sans.ttf
sha256sum data/fonts/kibitz-sans.ttf
