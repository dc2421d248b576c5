#!/usr/bin/env bash
# chromium_svg.sh TLBSIM - a smoke test of the hand-written SVG charts in a
# real browser: each kind (plot's line chart, compare --svg's bar chart,
# sensitivity's tornado) is rendered by headless Chromium to a PNG, which
# must be the window's size and not blank: several colours, and drawn
# (non-background) pixels in the top, middle and bottom thirds; and every
# text must lie inside its chart, with no two labels of one row overlapping
# (measured by Chromium's layout), long column names included.
# Exits 77 (CTest SKIP_RETURN_CODE) when Chromium is not installed (Debian
# package `chromium`); TLBSIM_CHROMIUM names the browser (`none`: skip).
set -u
bin=$1
browser=
for b in ${TLBSIM_CHROMIUM:-chromium chromium-browser google-chrome}; do
	if command -v "$b" >/dev/null 2>&1; then
		browser=$(command -v "$b")
		break
	fi
done
if [ -z "$browser" ]; then
	echo "chromium_svg: SKIP: no chromium on PATH (apt-get install chromium)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "chromium_svg: FAIL: $*"; fail=1; }
cd "$tmp" || exit 1

"$bin" sweep mmap8 --iters 40 --profile x86-24 --grid threads=1,2,4 --policy nested=v2 \
	--policy nested=fullmm --seeds 2 -o s.csv 2>/dev/null || failmsg "sweep exit $?"
"$bin" plot s.csv --x threads --y wall --by policy -o line.svg || failmsg "plot exit $?"
"$bin" compare mmap8 --iters 40 --threads 4 --profile x86-24 --policy nested=v2 \
	--policy nested=fullmm --seeds 2 --svg bars.svg >/dev/null 2>&1 || failmsg "compare --svg exit $?"
"$bin" sensitivity mmap8 --iters 20 --threads 3 -D jitter=0 --svg tornado.svg >/dev/null 2>&1 ||
	failmsg "sensitivity --svg exit $?"

# the check of a screenshot: size, colours, drawn pixels (PNG decoded with zlib)
cat >"$tmp/pngcheck.py" <<'PY'
import struct, sys, zlib
path, kind, want_w, want_h = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = open(path, "rb").read()
def bad(msg):
    print("chromium_svg: %s: %s" % (kind, msg))
    if kind != "blank":
        print("chromium_svg: FAIL: %s" % kind)
    sys.exit(1)
if data[:8] != b"\x89PNG\r\n\x1a\n":
    bad("not a PNG")
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, typ = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if typ == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif typ == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = ihdr
if (w, h) != (want_w, want_h):
    bad("%dx%d, want %dx%d" % (w, h, want_w, want_h))
if depth != 8 or ctype not in (2, 6) or interlace:
    bad("unexpected PNG format: depth %d colour type %d interlace %d" % (depth, ctype, interlace))
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
rows, prev = [], bytearray(stride)
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
colours, drawn = set(), [0, 0, 0]
bg = rows[0][0:3]
for y, line in enumerate(rows):
    for x in range(0, stride, bpp):
        px = line[x:x + 3]
        colours.add(px)
        if px != bg:
            drawn[min(2, y * 3 // h)] += 1
if len(colours) < 3:
    bad("blank: %d colour(s)" % len(colours))
if sum(drawn) < 2000:
    bad("almost blank: %d drawn pixels" % sum(drawn))
# the chart fills the page: something drawn in at least two thirds of it
if sum(1 for d in drawn if d > 50) < 2:
    bad("drawn pixels only in one band: %r" % drawn)
print("chromium_svg: %s: %dx%d, %d colours, %d drawn pixels" % (kind, w, h, len(colours), sum(drawn)))
PY

# a blank page (only a background) must be rejected: the check can fail
printf '<svg xmlns="http://www.w3.org/2000/svg" width="900" height="600"><rect width="900" height="600" fill="#fff"/></svg>\n' >blank.svg
W=900 H=600
for kind in blank line bars tornado; do
	[ -s "$kind.svg" ] || { failmsg "$kind.svg not written"; continue; }
	# HOME and the profile directory in $tmp: nothing is left behind
	HOME=$tmp timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
		--user-data-dir="$tmp/profile-$kind" --hide-scrollbars --window-size=$W,$H \
		--screenshot="$tmp/$kind.png" "file://$tmp/$kind.svg" >"$tmp/$kind.log" 2>&1
	rc=$?
	if [ ! -s "$kind.png" ]; then
		failmsg "$kind: no screenshot (chromium exit $rc): $(tail -n 3 "$tmp/$kind.log")"
		continue
	fi
	if [ "$kind" = blank ]; then
		python3 "$tmp/pngcheck.py" "$kind.png" "$kind" $W $H >"$tmp/blank.out" &&
			failmsg "a blank page passed the check: $(cat "$tmp/blank.out")"
		grep -q "blank" "$tmp/blank.out" || failmsg "the blank page was not called blank"
		continue
	fi
	python3 "$tmp/pngcheck.py" "$kind.png" "$kind" $W $H || fail=1
done

# every text inside the canvas and no two axis labels, group names or legend
# entries on one line overlapping, as Chromium lays the text out: the charts
# above, and the same with long column names (three knobs a column), must
# fit; a text wider than its canvas must not pass
long1=nested=v2,tlb_flush_cond=end,spurious_flush=skip_tried
long2=nested=fullmm,tlb_flush_cond=bits,spurious_flush=local
"$bin" sweep mmap8 --iters 10 --profile x86-24 --grid threads=1,2 --policy $long1 --policy $long2 \
	--seeds 1 -o long.csv 2>/dev/null || failmsg "sweep (long names) exit $?"
"$bin" plot long.csv --x threads --y wall --by policy -o longline.svg || failmsg "plot (long names) exit $?"
"$bin" compare mmap8 --iters 20 --profile x86-24 --policy $long1 --policy $long2 --seeds 1 \
	--svg longbars.svg >/dev/null 2>&1 || failmsg "compare --svg (long names) exit $?"
"$bin" sensitivity mmap8 --iters 5 --threads 2 --profile x86-24 -D jitter=0 --policy $long1 \
	--policy $long2 --svg longtornado.svg >/dev/null 2>&1 || failmsg "sensitivity --svg (long names) exit $?"
printf '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50"><text x="10" y="20">a text far too long for its chart</text></svg>\n' >overflow.svg
cat >"$tmp/fit.py" <<'PY'
import re, sys
svg = re.sub(r'^<\?xml[^>]*>\s*', '', open(sys.argv[1], encoding="utf-8").read())
page = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">
<div id="box">%s</div>
<script>
var svg = document.querySelector('#box svg');
var W = +svg.getAttribute('width'), H = +svg.getAttribute('height');
var sr = svg.getBoundingClientRect(), bad = [], lab = [];
svg.querySelectorAll('text').forEach(function (t) {
  var r = t.getBoundingClientRect();
  var x0 = r.left - sr.left, x1 = r.right - sr.left, y0 = r.top - sr.top, y1 = r.bottom - sr.top;
  if (x0 < -1 || y0 < -1 || x1 > W + 1 || y1 > H + 1)
    bad.push('outside ' + W + 'x' + H + ': ' + t.textContent + ' at x ' + x0.toFixed(0) + '..' + x1.toFixed(0));
  var c = t.getAttribute('class');
  if (c == 'group' || c == 'tick' || c == 'legend')
    lab.push({c: c, y: Math.round(y0), x0: x0, x1: x1, s: t.textContent});
});
for (var i = 0; i < lab.length; i++)
  for (var j = i + 1; j < lab.length; j++) {
    var a = lab[i], b = lab[j];
    if (a.c == b.c && a.y == b.y && a.x0 < b.x1 - 0.5 && b.x0 < a.x1 - 0.5)
      bad.push('overlap: ' + a.s + ' and ' + b.s);
  }
document.body.setAttribute('data-fit', bad.length ? 'BAD ' + bad.join('; ') : 'OK');
</script></body></html>"""
open(sys.argv[2], "w", encoding="utf-8").write(page % svg)
PY
for kind in overflow line bars tornado longline longbars longtornado; do
	[ -s "$kind.svg" ] || { failmsg "$kind.svg not written"; continue; }
	python3 "$tmp/fit.py" "$kind.svg" "$kind.html" || { failmsg "$kind: fit page"; continue; }
	HOME=$tmp timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
		--user-data-dir="$tmp/profile-fit-$kind" --dump-dom "file://$tmp/$kind.html" \
		>"$tmp/$kind.dom" 2>"$tmp/$kind.fitlog"
	res=$(grep -o 'data-fit="[^"]*"' "$tmp/$kind.dom" | head -n 1)
	case "$kind:$res" in
	overflow:*BAD*outside*) echo "chromium_svg: overflow: caught" ;;
	overflow:*) failmsg "a text wider than its canvas passed the fit check: $res" ;;
	*:'data-fit="OK"') echo "chromium_svg: $kind: every text fits" ;;
	*) failmsg "$kind: ${res:-no result (chromium: $(tail -n 2 "$tmp/$kind.fitlog"))}" ;;
	esac
done

if [ $fail = 0 ]; then
	echo "chromium_svg: PASS"
	exit 0
fi
exit 1
