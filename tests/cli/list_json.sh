#!/usr/bin/env bash
# list_json.sh TLBSIM - `tlbsim list WHAT --json` is one valid JSON object
# {"WHAT": [...]} naming the same items, in the same order, as the text list.
set -u
bin=$1
fail=0
failmsg() { echo "list_json: FAIL: $*"; fail=1; }
for w in workloads policies profiles params kernels; do
	"$bin" list $w >/tmp/list_text.$$ || failmsg "list $w exit $?"
	"$bin" list $w --json >/tmp/list_json.$$ || failmsg "list $w --json exit $?"
	python3 - "$w" /tmp/list_text.$$ /tmp/list_json.$$ <<'PY' || fail=1
import json, re, sys
w, text, js = sys.argv[1], open(sys.argv[2]).read().splitlines(), json.load(open(sys.argv[3]))
if list(js) != [w]:
    print("list_json: FAIL: %s: keys %r" % (w, list(js))); sys.exit(1)
items = js[w]
key = "version" if w == "kernels" else "name"
names = [i[key] for i in items]
if w == "policies":
    want = [l.split(":")[0] for l in text if not l.startswith(" ")]
elif w == "params":
    want = [l.split()[0] for l in text[1:]]
else:
    want = [l.split()[0] for l in text if not l.startswith(" ")]
if names != want:
    print("list_json: FAIL: %s: %r, text has %r" % (w, names[:5], want[:5])); sys.exit(1)
if w == "workloads" and not all("params" in i and "default_profile" in i for i in items):
    print("list_json: FAIL: workloads lack params/default_profile"); sys.exit(1)
if w == "policies" and not all(i["default"] in [v["name"] for v in i["values"]] for i in items):
    print("list_json: FAIL: a policy default is not one of its values"); sys.exit(1)
PY
done
rm -f /tmp/list_text.$$ /tmp/list_json.$$
if [ $fail = 0 ]; then
	echo "list_json: PASS"
	exit 0
fi
exit 1
