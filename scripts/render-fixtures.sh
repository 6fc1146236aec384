#!/usr/bin/env bash
# Re-renders the small screenshots under tests/fixtures/screens with headless Chromium, from pages
# in this repository, so the image tests need nothing outside the checkout. Run after changing
# demo/index.html or tests/pages/app, then commit the PNGs (MANIFEST.tsv lists what each one is).
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/fixtures/screens
browser=${CHROME:-$(command -v chromium || command -v google-chrome)}
profile=$(mktemp -d); trap 'rm -rf "$profile"' EXIT
mkdir -p "$out"
printf 'file\twidth\theight\tcss_width\tcss_height\tdevice_pixel_ratio\tpage\n' >"$out/MANIFEST.tsv"
# file  page  css width  css height  dpr  description
while read -r file page w h dpr desc; do
  "$browser" --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$profile" --window-size="$w,$h" --force-device-scale-factor="$dpr" \
    --screenshot="$PWD/$out/$file" "file://$PWD/$page" >/dev/null 2>&1
  printf '%s\t%d\t%d\t%d\t%d\t%d\t%s\n' "$file" $((w * dpr)) $((h * dpr)) "$w" "$h" "$dpr" \
    "$desc" >>"$out/MANIFEST.tsv"
done <<'PAGES'
demo-720p.png demo/index.html 1280 720 1 Demo dashboard
app-768p.png tests/pages/app/index.html 1366 768 1 Notes app, home
demo-1440p-dpr2.png demo/index.html 1280 720 2 Demo dashboard, HiDPI
form-900p-dpr2.png tests/pages/app/form.html 1440 900 2 Notes app, form, HiDPI
PAGES
ls -l "$out"
