#!/usr/bin/env bash
# plot.sh TLBSIM - tlbsim plot and compare --svg (src/cli/chart.c):
#   * the SVG parses as XML; it has two axes, one polyline per --by value
#     with one point per x value in x order, a legend entry per series
#     naming it, error bars when the CSV has METRIC_ci95, a y label with the
#     unit; the line that the CSV says is higher is drawn higher;
#   * --facet draws one panel per value; rows that differ in a column the
#     plot does not separate are refused (exit 2, naming the column);
#   * compare --svg: one bar per metric and column, a legend entry per column;
#   * bad input: one line, exit 2;
#   * if a Chromium is installed (never required), each chart renders to a
#     PNG that is not blank.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "plot: FAIL: $*"; fail=1; }
cd "$tmp" || exit 1
"$bin" sweep mmap8 --iters 60 --profile x86-24 --grid threads=1,2,4,8 --policy nested=v2 \
	--policy nested=fullmm --seeds 2 -o s.csv 2>/dev/null || failmsg "sweep exit $?"
"$bin" plot s.csv --x threads --y wall --by policy -o s.svg || failmsg "plot exit $?"
"$bin" plot s.csv --x threads --y wall --by policy >s2.svg || failmsg "plot to stdout exit $?"
cmp -s s.svg s2.svg || failmsg "plot -o and stdout differ"
"$bin" sweep mmap8 --iters 30 --grid threads=1,2,4 --grid profile=x86-24,arm64-4k \
	--policy nested=v2 --policy nested=fullmm --policy nested=prefix -o f.csv 2>/dev/null ||
	failmsg "facet sweep exit $?"
"$bin" plot f.csv --x threads --y ipi_sent --by policy --facet profile -o f.svg ||
	failmsg "facet plot exit $?"
"$bin" plot f.csv --x threads --y sys --by policy --where profile=arm64-4k --logx -o w.svg ||
	failmsg "--where/--logx plot exit $?"
"$bin" compare mmap8 --iters 60 --threads 4 --profile x86-24 --policy nested=v2 \
	--policy nested=fullmm --policy nested=prefix --svg c.svg >c.txt 2>c.err ||
	failmsg "compare --svg exit $?"
grep -q "^tlbsim: chart: c.svg$" c.err || failmsg "compare --svg does not name the chart: $(cat c.err)"
"$bin" compare mmap8 --iters 60 --threads 4 --profile x86-24 --policy nested=v2 \
	--policy nested=fullmm --policy nested=prefix --json >c.json || failmsg "compare --json exit"

python3 - <<'PY' || fail=1
import csv, json, re, sys
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
bad = 0
def fail(m):
    global bad
    print("plot: FAIL: " + m); bad = 1
def load(p):
    root = ET.parse(p).getroot()
    if root.tag != NS + "svg":
        fail("%s: root is %s" % (p, root.tag))
    return root
def cls(root, tag, c):
    return [e for e in root.iter(NS + tag) if e.get("class") == c]
def text(e):
    return "".join(e.itertext())

# s.svg: wall vs threads by policy, two seeds
rows = list(csv.DictReader(open("s.csv")))
pols = list(dict.fromkeys(r["policy"] for r in rows))
xs = sorted(set(int(r["threads"]) for r in rows))
root = load("s.svg")
if len(cls(root, "line", "axis")) != 2:
    fail("s.svg: %d axes" % len(cls(root, "line", "axis")))
lines = cls(root, "polyline", "series")
if len(lines) != len(pols):
    fail("s.svg: %d polylines for %d policies" % (len(lines), len(pols)))
legend = [text(e) for e in cls(root, "text", "legend")]
if legend != pols:
    fail("s.svg: legend %r, policies %r" % (legend, pols))
titles = [text(l) for l in lines]
if titles != pols:
    fail("s.svg: series titles %r" % titles)
if not cls(root, "line", "err"):
    fail("s.svg: no error bars though the CSV has wall_ns_ci95")
yl = [text(e) for e in cls(root, "text", "ylabel")]
if not yl or not re.match(r"wall \((ns|µs|ms|s), simulated\)$", yl[0]):
    fail("s.svg: y label %r" % yl)
pts = {}
for l in lines:
    p = [tuple(map(float, q.split(","))) for q in l.get("points").split()]
    if len(p) != len(xs) or [a for a, _ in p] != sorted(a for a, _ in p):
        fail("s.svg: %s has points %r" % (text(l), p))
    pts[text(l)] = p
# at the largest x, the policy with the larger wall is drawn higher (smaller y)
big = {r["policy"]: float(r["wall_ns_mean"]) for r in rows if int(r["threads"]) == xs[-1]}
hi = max(big, key=big.get); lo = min(big, key=big.get)
if big[hi] > big[lo] and not pts[hi][-1][1] < pts[lo][-1][1]:
    fail("s.svg: %s (wall %g) is not drawn above %s (wall %g)" % (hi, big[hi], lo, big[lo]))

# f.svg: a panel per profile, a line per policy in each
frows = list(csv.DictReader(open("f.csv")))
profs = list(dict.fromkeys(r["profile"] for r in frows))
fpols = list(dict.fromkeys(r["policy"] for r in frows))
root = load("f.svg")
pt = [text(e) for e in cls(root, "text", "panel-title")]
if pt != ["profile " + p for p in profs]:
    fail("f.svg: panels %r" % pt)
n = len(cls(root, "polyline", "series"))
if n != len(profs) * len(fpols):
    fail("f.svg: %d polylines, want %d" % (n, len(profs) * len(fpols)))
if len(cls(root, "line", "axis")) != 2 * len(profs):
    fail("f.svg: axes per panel")
if cls(root, "line", "err"):
    fail("f.svg: error bars without a ci95 column")

root = load("w.svg")
if len(cls(root, "polyline", "series")) != len(fpols):
    fail("w.svg: --where did not keep one profile")
if not any("log" in text(e) for e in cls(root, "text", "xlabel")):
    fail("w.svg: x label does not say log scale")

# c.svg: compare's grouped bars
runs = json.load(open("c.json"))["runs"]
root = load("c.svg")
cpols = ["nested=v2", "nested=fullmm", "nested=prefix"]
legend = [text(e) for e in cls(root, "text", "legend")]
if legend != cpols:
    fail("c.svg: legend %r" % legend)
groups = [text(e) for e in cls(root, "text", "group")]
bars = cls(root, "rect", "bar")
if not groups or len(bars) != len(groups) * len(cpols):
    fail("c.svg: %d bars for %d groups" % (len(bars), len(groups)))
if "wall" not in groups:
    fail("c.svg: no wall group: %r" % groups)
# the wall bars' heights are in the ratio of the columns' mean walls
g = groups.index("wall")
hs = [float(b.get("height")) for b in bars[g * 3:(g + 1) * 3]]
walls = [r["stats"]["wall_ns"]["mean"] for r in runs]
for h, w in zip(hs, walls):
    if abs(h / hs[0] - w / walls[0]) > 0.02 * max(1, w / walls[0]):
        fail("c.svg: wall bar heights %r, walls %r" % (hs, walls)); break
if len(cls(root, "line", "axis")) != 2:
    fail("c.svg: axes")
sys.exit(bad)
PY

# rows the plot does not separate: refused, naming the column
"$bin" sweep mmap8 --iters 20 --grid threads=1,2 --grid cpus=4,8 -o a.csv 2>/dev/null || failmsg "sweep a"
"$bin" plot a.csv --x threads --y wall >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "differ in cpus" e || failmsg "ambiguous rows: $(cat e)"
"$bin" plot a.csv --x threads --y wall --by cpus -o ok.svg || failmsg "--by cpus exit $?"
printf 'workload,x,wall_ns\nm,1,abc\n' >n.csv
printf 'a,"b\n' >q.csv
for args in "nosuch.csv --x threads --y wall" "s.csv --x nosuch --y wall" "s.csv --x threads --y nosuch" \
	"s.csv --x threads" "s.csv --y wall" "s.csv --x threads --y wall --by nosuch" \
	"s.csv --x threads --y wall --where policy" "s.csv --x threads --y wall --where policy=none" \
	"n.csv --x x --y wall" "q.csv --x a --y b" "s.csv --x policy --y wall --logx" \
	"s.csv --x threads --y wall --bogus" "s.csv --x threads --y wall -o /nonexistent/x.svg" \
	"s.csv --x threads --y wall --by"; do
	"$bin" plot $args >o 2>e
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <e)" = 1 ] && [ ! -s o ] || failmsg "plot $args: exit $rc, $(cat e)"
done
"$bin" compare mmap8 --iters 5 --policy nested=v2 --policy nested=fullmm --svg /nonexistent/c.svg \
	>o 2>e
rc=$?
[ $rc != 0 ] && [ "$(wc -l <e)" = 1 ] || failmsg "compare --svg to a missing directory: exit $rc"

# ranges too narrow for their magnitude: x values one ulp apart, a single
# point at 1e20 (1e20 + 1 == 1e20), a flat negative line at -1e20, values
# near the double's limit. Each plot ends (a tick loop stepping by less than
# an ulp never did), and its x ticks are distinct labels.
printf 'x,wall_ns\n1,5\n1.0000000000000002,6\n' >d1.csv
printf 'x,wall_ns\n1e20,5\n' >d2.csv
printf 'x,wall_ns\n1,-1e20\n2,-1e20\n' >d3.csv
printf 'x,wall_ns\n1,5\n2,1e300\n3,-1e300\n' >d4.csv
printf 'x,wall_ns\n-1e300,5\n1e300,6\n' >d7.csv
printf 'x,wall_ns_mean,wall_ns_ci95\n1,1e300,1e300\n2,-1e300,1e300\n' >d8.csv
# text that is not well-formed UTF-8 (a title cut inside a character by the
# 511-byte limit, a stray byte, a surrogate) is written as U+FFFD: the SVG
# stays XML
"$bin" plot s.csv --x threads --y wall --by policy -o u8.svg \
	--title "$(printf 'a\xffb\xc3\xa9c\xed\xa0\x80d\xf0\x9f\x98\x80e\xc3')" 2>e || failmsg "plot --title bytes: $(cat e)"
"$bin" plot s.csv --x threads --y wall --by policy -o u8long.svg \
	--title "$(python3 -c 'print("\u00e9" * 300)')" 2>e || failmsg "plot --title long: $(cat e)"
python3 - u8.svg u8long.svg <<'PY' || failmsg "titles not well-formed UTF-8"
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
t = ET.parse(sys.argv[1]).getroot().find(ns + "text").text
if t != "a\ufffdb\u00e9c\ufffd\ufffd\ufffdd\U0001f600e\ufffd":
    print("plot: title %r" % t); sys.exit(1)
t = ET.parse(sys.argv[2]).getroot().find(ns + "text").text
if not t.startswith("\u00e9" * 200) or set(t) - {"\u00e9", "\ufffd"}:
    print("plot: long title %r" % t[-20:]); sys.exit(1)
PY

# a spreadsheet's UTF-8 byte order mark is not part of the first column's
# name; a value too small for a normal double (strtod's ERANGE) is a number
printf '\xef\xbb\xbfx,wall_ns\n1,2\n2,3\n' >d5.csv
# the mark before a quoted first name (Python's utf-8-sig with QUOTE_ALL):
# it was "a quote inside an unquoted field"
printf '\xef\xbb\xbf"x","wall_ns"\n1,2\n2,3\n' >d9.csv
printf 'x,wall_ns\n1,1e-320\n2,-1e-320\n' >d6.csv
# a first character U+FF38 (bytes ef bc b8) is no byte order mark: its name stays
printf '\xef\xbc\xb8,wall_ns\n1,2\n2,3\n' >fw.csv
"$bin" plot fw.csv --x "$(printf '\xef\xbc\xb8')" --y wall_ns -o fw.svg 2>e ||
	failmsg "plot of a first name starting with byte 0xef: $(cat e)"
# a value too large for a double is refused
printf 'x,wall_ns\n1,1e400\n' >big.csv
"$bin" plot big.csv --x x --y wall_ns >o 2>e
rc=$?
[ $rc = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "1e400' is not a finite number" e ||
	failmsg "plot of 1e400: exit $rc, $(cat e)"
# finite values beyond 1e300 are refused too: an axis from -1.7e308 to
# 1.7e308 has no finite length, and the points were drawn off the chart
# (x = inf, y = -48912 px)
printf 'x,wall_ns\n1.7976931348623157e308,1\n-1.7976931348623157e308,2\n' >hx.csv
printf 'x,wall_ns\n1,1.7e308\n' >hy.csv
printf 'x,wall_ns_mean,wall_ns_ci95\n1,1,1e301\n' >hc.csv
printf 'x,wall_ns_mean,wall_ns_ci95\n1,1,abc\n' >hb.csv
printf 'x,wall_ns\n1e400,1\n2,2\n' >hi.csv
printf 'x,wall_ns\ninf,1\n2,2\n' >hn.csv
for h in hx:x hy:wall_ns hc:wall_ns_ci95 hb:wall_ns_ci95 hi:x hn:x; do
	"$bin" plot ${h%%:*}.csv --x x --y wall_ns -o ${h%%:*}.svg >o 2>e
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "row 2: ${h#*:} '" e && [ ! -e ${h%%:*}.svg ] ||
		failmsg "plot of ${h%%:*}.csv: exit $rc, $(cat e)"
done
for d in d1 d2 d3 d4 d5 d6 d7 d8 d9; do
	timeout 20 "$bin" plot $d.csv --x x --y wall_ns -o $d.svg 2>e
	rc=$?
	[ $rc = 0 ] || { failmsg "plot of $d.csv: exit $rc $(cat e)"; continue; }
	python3 - $d.svg <<'PY' || failmsg "plot of $d.csv: $(cat e)"
import math, re, sys
s = open(sys.argv[1]).read()
if re.search(r"nan|inf", s, re.I):
    print("plot: a coordinate or label is not a number"); sys.exit(1)
ticks = re.findall(r'<text class="tick" x="[^"]*" y="[^"]*" text-anchor="middle">([^<]*)<', s)
if len(ticks) < 2 or len(set(ticks)) != len(ticks):
    print("plot: x tick labels %r are not distinct" % ticks); sys.exit(1)
# every point and error bar inside the picture
w, h = (float(v) for v in re.search(r'<svg[^>]* width="([^"]*)" height="([^"]*)"', s).groups())
pts = [tuple(map(float, p.split(","))) for m in re.findall(r'points="([^"]*)"', s) for p in m.split()]
pts += [(float(a), float(b)) for a, b in re.findall(r'<circle[^>]* cx="([^"]*)" cy="([^"]*)"', s)]
pts += [(float(a), float(b)) for a, b in re.findall(r'<line class="err"[^>]* x1="([^"]*)" y1="([^"]*)"', s)]
if not pts or any(not (0 <= x <= w and 0 <= y <= h) for x, y in pts):
    print("plot: a point outside the %gx%g chart: %r" % (w, h, [p for p in pts if not (0 <= p[0] <= w and 0 <= p[1] <= h)][:3])); sys.exit(1)
PY
done

# a headless Chromium, when one is installed, renders each chart (not required)
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chrome" ]; then
	for f in s f c; do
		timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--window-size=1300,900 --screenshot="$tmp/$f.png" "file://$tmp/$f.svg" \
			>/dev/null 2>&1 || failmsg "chromium could not render $f.svg"
		python3 - "$tmp/$f.png" <<'PY' || fail=1
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
if d[:8] != b"\x89PNG\r\n\x1a\n":
    print("plot: FAIL: %s is not a PNG" % sys.argv[1]); sys.exit(1)
i, idat = 8, b""
while i < len(d):
    n, t = struct.unpack(">I4s", d[i:i + 8])
    if t == b"IDAT":
        idat += d[i + 8:i + 8 + n]
    i += 12 + n
raw = zlib.decompress(idat)
if len(set(raw[j] for j in range(0, len(raw), 7))) < 8:
    print("plot: FAIL: %s looks blank" % sys.argv[1]); sys.exit(1)
PY
	done
	echo "plot: chromium render checked"
else
	echo "plot: chromium not installed: render smoke test skipped"
fi

# x values equal as numbers are one x (1 and 1.0 were drawn as a vertical
# jump at x=1; only equal texts were refused)
printf 'x,wall_ns\n1,5\n1.0,9\n2,6\n' >"$tmp/numx.csv"
"$bin" plot "$tmp/numx.csv" --x x --y wall -o "$tmp/numx.svg" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -q "rows x=1 and x=1.0 are one x" "$tmp/e" &&
	[ ! -e "$tmp/numx.svg" ] || failmsg "1 and 1.0 as x: exit $rc, $(cat "$tmp/e")"

# a legend of 64 series stays inside the canvas, and faceted panels' legends
# do not overlap (beyond about 17 series the entries ran off the canvas and
# onto the next panel's)
python3 -c "
print('x,f,s,wall_ns')
for f in ('a', 'b'):
    for s in range(64):
        for x in (1, 2): print(f'{x},{f},ser{s},{x + s}')" >"$tmp/many.csv"
for facet in "--where f=a" "--facet f"; do
	"$bin" plot "$tmp/many.csv" --x x --y wall --by s $facet -o "$tmp/many.svg" 2>"$tmp/e" ||
		failmsg "64 series $facet: $(cat "$tmp/e")"
	python3 - "$tmp/many.svg" <<'PY' || failmsg "64 series $facet: legend outside the canvas or overlapping"
import re, sys
s = open(sys.argv[1]).read()
h = float(re.search(r'<svg[^>]* height="([^"]*)"', s).group(1))
pos = re.findall(r'class="legend" x="([^"]*)" y="([^"]*)"', s)
sys.exit(0 if pos and all(float(y) < h for _, y in pos) and len(set(pos)) == len(pos) else 1)
PY
done

if [ $fail = 0 ]; then
	echo "plot: PASS"
	exit 0
fi
exit 1
