#!/usr/bin/env bash
# sweep.sh TLBSIM - tlbsim sweep and tlbsim merge (docs/output.md "sweep"):
#   * one row per grid point and policy, the configuration columns then every
#     metric (METRIC_mean/METRIC_ci95 with --seeds > 1); the values are those
#     of `run --csv` of the same configuration;
#   * the file is the same for -j 1 and -j 3, for --shard K/3 + merge (in any
#     order), and after a resume of a stopped sweep (rows removed, or stopped
#     by --time-limit);
#   * resume runs only the missing rows; a file of other columns is refused;
#     -w, -D and --kernel outside the grid are in the rows, a profile file
#     that is not a built-in's cannot resume;
#   * --json has the same rows;
#   * the row order is total (numbers and text in one column, nan, inf), and
#     one configuration given twice (threads=01,1; D:syscall_ns=01,1; a --policy twice) is
#     refused, and so is a workload parameter its workload refuses, before any
#     run.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "sweep: FAIL: $*"; fail=1; }
cd "$tmp" || exit 1
A=(mmap8 --iters 40 --profile x86-24 --grid threads=1,2,4 --grid D:zero_4k_ns=500,1000
   --policy nested=v2 --policy nested=fullmm,nested_check=off)

"$bin" sweep "${A[@]}" -j 1 -o j1.csv 2>e1 || failmsg "sweep -j 1 exit $?"
"$bin" sweep "${A[@]}" -j 3 >j3.csv 2>e3 || failmsg "sweep -j 3 to stdout exit $?"
cmp -s j1.csv j3.csv || failmsg "-j 1 and -j 3 differ"
grep -q "j1.csv: 12 row(s), 12 run now, 0 already there" e1 || failmsg "summary: $(cat e1)"
[ -s e3 ] && failmsg "stdout sweep wrote to stderr: $(cat e3)"
ls | grep -q tmp && failmsg "a temporary file was left: $(ls)"

python3 - j1.csv <<'PY' || fail=1
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head, body = rows[0], rows[1:]
bad = 0
want = ["workload", "profile", "cpus", "threads", "iters", "D:zero_4k_ns", "policy", "seed",
        "seeds", "wall_ns"]
if head[:10] != want:
    print("sweep: FAIL: header starts %r" % head[:10]); bad = 1
if len(body) != 12 or any(len(r) != len(head) for r in body):
    print("sweep: FAIL: %d rows" % len(body)); bad = 1
pts = sorted((int(r[3]), int(r[5]), r[6]) for r in body)
exp = sorted((t, z, p) for t in (1, 2, 4) for z in (500, 1000)
             for p in ("nested=v2", "nested=fullmm,nested_check=off"))
if pts != exp:
    print("sweep: FAIL: points %r" % pts); bad = 1
keys = [(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5]), r[6]) for r in body]
if keys != sorted(keys):
    print("sweep: FAIL: rows not sorted by configuration"); bad = 1
z = {(int(r[3]), int(r[5]), r[6]): int(r[head.index("sys_ns")]) for r in body}
# a dearer page zeroing costs system time (a direct check that D: reached the runs)
if not all(z[(t, 1000, p)] > z[(t, 500, p)] for t in (1, 2, 4) for p in ("nested=v2",)):
    print("sweep: FAIL: D:zero_4k_ns did not change sys_ns: %r" % z); bad = 1
sys.exit(bad)
PY

# the values are those of a single run of the same configuration
"$bin" run mmap8 --iters 40 --profile x86-24 --threads 2 -D zero_4k_ns=1000 \
	--policy nested=fullmm,nested_check=off --csv >one.csv || failmsg "run --csv exit $?"
python3 - j1.csv one.csv <<'PY' || fail=1
import csv, sys
s = list(csv.DictReader(open(sys.argv[1])))
o = list(csv.DictReader(open(sys.argv[2])))[0]
row = [r for r in s if r["threads"] == "2" and r["D:zero_4k_ns"] == "1000"
       and r["policy"] == "nested=fullmm,nested_check=off"][0]
diff = [k for k in o if k not in ("policy",) and o[k] != row.get(k)]
if diff:
    print("sweep: FAIL: sweep row and run --csv differ in %r" % diff[:5]); sys.exit(1)
PY

# shards + merge, in any order
for k in 1 2 3; do
	"$bin" sweep "${A[@]}" --shard $k/3 -o s$k.csv 2>/dev/null || failmsg "shard $k/3 exit $?"
done
"$bin" merge s3.csv s1.csv s2.csv -o m.csv || failmsg "merge exit $?"
cmp -s m.csv j1.csv || failmsg "merged shards differ from the whole sweep"
"$bin" merge s2.csv s1.csv s2.csv s3.csv >m2.csv || failmsg "merge with a repeated file exit $?"
cmp -s m2.csv j1.csv || failmsg "merge to stdout with a repeated shard differs"
n1=$(($(wc -l <s1.csv) - 1))
[ "$n1" = 4 ] || failmsg "shard 1/3 has $n1 rows, want 4"

# resume: rows removed from the file are run again, the others kept
head -n 5 j1.csv >r.csv
"$bin" sweep "${A[@]}" -o r.csv 2>er || failmsg "resume exit $?"
grep -q "12 row(s), 8 run now, 4 already there" er || failmsg "resume summary: $(cat er)"
cmp -s r.csv j1.csv || failmsg "resumed file differs"
# a row of the file is kept as it is (not run again): mark one
sed 's/^\(mmap8,x86-24,24,1,40,500,nested=v2,1,1\),[0-9]*/\1,7/' j1.csv >k.csv
"$bin" sweep "${A[@]}" -o k.csv 2>/dev/null || failmsg "resume of a full file exit $?"
grep -q '^mmap8,x86-24,24,1,40,500,nested=v2,1,1,7,' k.csv || failmsg "resume ran a row again"

# what makes results differ outside the grid is in the file: -D and -w as
# constant D:NAME / w:NAME columns, --kernel in the policy label, so resume
# does not reuse rows made with other values (syscall_ns=100 rows were kept
# for a -D syscall_ns=900000 sweep: "0 run now, 2 already there")
R=(mmap8 --iters 20 --grid threads=1,2)
"$bin" sweep "${R[@]}" -D syscall_ns=100 -w size=64K -o dd.csv 2>/dev/null || failmsg "-D sweep exit $?"
head -1 dd.csv | grep -q '^workload,profile,cpus,threads,iters,w:size,D:syscall_ns,policy,' ||
	failmsg "-D/-w columns: $(head -1 dd.csv | cut -d, -f1-9)"
cp dd.csv dd0.csv
"$bin" sweep "${R[@]}" -D syscall_ns=900000 -o dd.csv >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "columns are not this sweep's" e && cmp -s dd.csv dd0.csv ||
	failmsg "resume without -w: $(cat e)"
"$bin" sweep "${R[@]}" -w size=64K -D syscall_ns=900000 -o dd.csv 2>e || failmsg "-D resume exit $?"
grep -q "4 row(s), 2 run now, 0 already there" e || failmsg "other -D value reused rows: $(cat e)"
"$bin" sweep "${R[@]}" -w size=64K -D syscall_ns=900000 >dd9.csv 2>/dev/null
[ "$(grep -c ',900000,' dd.csv)" = 2 ] && grep -q "$(sed -n 3p dd9.csv)" dd.csv ||
	failmsg "-D syscall_ns=900000 rows are not a fresh sweep's"
"$bin" sweep "${R[@]}" --kernel 4.14 --policy nested=v2 >kp.csv 2>/dev/null || failmsg "--kernel exit $?"
grep -q ',"kernel=4.14,nested=v2",' kp.csv || failmsg "--kernel label: $(sed -n 2p kp.csv | cut -d, -f1-8)"
# a profile file is a name in the file: resume with one whose values are
# not the built-in's is refused; one that is the built-in resumes
"$bin" list profiles --dump falkor-46 >same.prof
sed 's/^\(syscall_ns *= *\).*/\1900000/' same.prof >other.prof
"$bin" sweep "${R[@]}" -o pf.csv 2>/dev/null || failmsg "profile sweep exit $?"
"$bin" sweep "${R[@]}" --profile same.prof -o pf.csv 2>e && grep -q "0 run now, 2 already there" e ||
	failmsg "resume with a dumped built-in profile: $(cat e)"
cp pf.csv pf0.csv
"$bin" sweep "${R[@]}" --profile other.prof -o pf.csv >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "cannot resume into it with --profile other.prof" e &&
	cmp -s pf.csv pf0.csv || failmsg "resume with another profile of the same name: $(cat e)"

# a sweep stopped by --time-limit writes complete rows; resuming completes it
B=(mmap8 --iters 40000 --grid threads=1,2,4,8,16 -j 1)
"$bin" sweep "${B[@]}" --time-limit 1 -o t.csv 2>et
rc=$?
[ $rc = 0 ] || failmsg "time-limited sweep exit $rc"
grep -q "stopped early (time limit)" et || failmsg "no note of the time limit: $(cat et)"
n=$(($(wc -l <t.csv) - 1))
[ "$n" -lt 5 ] || failmsg "the time limit did not stop the sweep ($n rows)"
python3 -c "import csv,sys; r=list(csv.reader(open('t.csv'))); sys.exit(any(len(x)!=len(r[0]) for x in r))" ||
	failmsg "time-limited file has a short row"
"$bin" sweep "${B[@]}" -o t.csv 2>/dev/null || failmsg "resume after time limit exit $?"
"$bin" sweep "${B[@]}" -j 2 -o full.csv 2>/dev/null || failmsg "full sweep exit $?"
cmp -s t.csv full.csv || failmsg "stopped + resumed sweep differs from a whole one"

# seeds: mean and ci95 columns; JSON rows
"$bin" sweep mmap8 --iters 30 --grid threads=1,3 --seeds 3 -o st.csv 2>/dev/null || failmsg "seeds exit"
head -1 st.csv | grep -q ",seeds,wall_ns_mean,wall_ns_ci95,user_ns_mean," || failmsg "seeds header"
"$bin" sweep mmap8 --iters 30 --grid threads=1,3 --seeds 3 --json >st.json || failmsg "json exit"
python3 - st.csv st.json <<'PY' || fail=1
import csv, json, sys
c = list(csv.DictReader(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))["rows"]
if len(c) != 2 or len(j) != 2:
    print("sweep: FAIL: seeds rows %d / %d" % (len(c), len(j))); sys.exit(1)
for a, b in zip(c, j):
    if list(a.keys()) != list(b.keys()):
        print("sweep: FAIL: JSON keys differ from CSV columns"); sys.exit(1)
    if abs(float(a["wall_ns_mean"]) - b["wall_ns_mean"]) > 0.001 or b["seeds"] != 3 or b["threads"] != int(a["threads"]):
        print("sweep: FAIL: JSON values differ"); sys.exit(1)
if float(c[0]["wall_ns_ci95"]) <= 0:
    print("sweep: FAIL: zero ci95 over 3 jittered seeds"); sys.exit(1)
PY

# a file of other columns is refused, and left as it was
cp st.csv keep.csv
"$bin" sweep "${A[@]}" -o st.csv >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] || failmsg "other columns: $(cat e)"
cmp -s st.csv keep.csv || failmsg "a refused file was changed"
"$bin" merge j1.csv st.csv >/dev/null 2>e
[ $? = 2 ] && grep -q "columns differ" e || failmsg "merge of different columns: $(cat e)"

: >empty.csv
"$bin" sweep mmap8 --iters 30 --grid threads=1,2 -o empty.csv 2>/dev/null || failmsg "an empty -o file was refused"
[ "$(wc -l <empty.csv)" = 3 ] || failmsg "an empty -o file did not get the rows"
# a directory as -o, or as merge's input: the error says so (it used to
# call the directory an empty file)
mkdir adir
"$bin" sweep mmap8 --iters 30 --grid threads=1 -o adir >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "adir: Is a directory" e || failmsg "-o DIR: $(cat e)"
"$bin" merge j1.csv adir >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "adir: Is a directory" e || failmsg "merge DIR: $(cat e)"

# progress: a bar on stderr when it is a terminal (under script(1)), none otherwise
if command -v script >/dev/null; then
	script -qec "'$bin' sweep mmap8 --iters 30 --grid threads=1,2,3 -o pr.csv" /dev/null >pty.txt 2>&1
	grep -q "3/3 runs" pty.txt || failmsg "no progress on a terminal: $(head -c 300 pty.txt)"
	script -qec "'$bin' compare mmap8 --iters 30 --policy nested=v2 --policy nested=fullmm" /dev/null >ptc.txt 2>&1
	grep -q "10/10 runs" ptc.txt || failmsg "compare shows no progress on a terminal"
fi
"$bin" sweep mmap8 --iters 30 --grid threads=1,2,3 -o pr2.csv 2>e
grep -q "runs," e && failmsg "progress on a stderr that is not a terminal"

# the row order is one total order (numbers by value before text): a column
# of numbers and text (w:size=8192,12288,16K) was sorted into a different
# order by each resume, and shards merged in two orders gave two files
M=(mmap8 --iters 20 --threads 2 --grid w:size=8192,12288,16K)
"$bin" sweep "${M[@]}" -o mx.csv 2>/dev/null || failmsg "mixed sweep exit $?"
cp mx.csv mx1.csv
for i in 1 2 3; do
	"$bin" sweep "${M[@]}" -o mx.csv 2>/dev/null || failmsg "mixed resume exit $?"
	cmp -s mx.csv mx1.csv || failmsg "resume $i rewrote the rows in another order"
done
[ "$(cut -d, -f6 mx1.csv | tr '\n' ' ')" = "w:size 8192 12288 16K " ] ||
	failmsg "mixed order: $(cut -d, -f6 mx1.csv | tr '\n' ' ')"
for k in 1 2 3; do
	"$bin" sweep "${M[@]}" --shard $k/3 -o ms$k.csv 2>/dev/null || failmsg "mixed shard $k"
done
"$bin" merge ms1.csv ms2.csv ms3.csv >mf.csv && "$bin" merge ms3.csv ms2.csv ms1.csv >mr.csv ||
	failmsg "mixed merge exit"
cmp -s mf.csv mx1.csv && cmp -s mr.csv mx1.csv || failmsg "shards merged in two orders differ"
# nan and inf cells: a file merged with itself has its rows once
python3 - mx1.csv >nn.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(rows[0])
for v in ("10", "9", "1e1", "010", "-1", "1.5", "nan", "inf", "abc"):
    r = list(rows[1]); r[3] = v; w.writerow(r)
PY
"$bin" merge nn.csv nn.csv nn.csv >nm.csv || failmsg "merge of nan/inf rows exit $?"
[ "$(cut -d, -f4 nm.csv | tr '\n' ' ')" = "threads -1 1.5 9 010 10 1e1 inf abc nan " ] ||
	failmsg "nan/inf rows merged as: $(cut -d, -f4 nm.csv | tr '\n' ' ')"

# resume reads the file as merge does: a row there twice is kept once, two
# different results for one configuration are refused and the file left
# as it was (both were kept and written back)
cp mx1.csv rd.csv
sed -n 2p mx1.csv >>rd.csv
"$bin" sweep "${M[@]}" -o rd.csv 2>/dev/null || failmsg "resume of a repeated row exit $?"
cmp -s rd.csv mx1.csv || failmsg "resume kept a repeated row"
cp mx1.csv rc.csv
sed -n 2p mx1.csv | sed 's/^\(\([^,]*,\)\{9\}\)[0-9]*/\1999/' >>rc.csv
cp rc.csv rc0.csv
"$bin" sweep "${M[@]}" -o rc.csv >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "cannot resume from it: two different results" e &&
	cmp -s rc.csv rc0.csv || failmsg "resume of two results for one configuration: $(cat e)"

# one configuration twice is refused: its row would be written twice, a file
# shards and merge (one row each) could not reproduce
"$bin" sweep mmap8 --iters 20 --grid threads=01,1 -o dup.csv >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "values 01 and 1 give the same configuration" e &&
	[ ! -e dup.csv ] || failmsg "threads=01,1: $(cat e)"
# the same for a D: key: 01 and 1 are one number (both ran, two rows)
"$bin" sweep mmap8 --iters 20 --grid D:syscall_ns=01,1 -o dup.csv >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "values 01 and 1 give the same configuration" e &&
	[ ! -e dup.csv ] || failmsg "D:syscall_ns=01,1: $(cat e)"
# --json of a D: value given with a leading zero is JSON (it printed 0150)
"$bin" sweep mmap8 --iters 2 --grid D:syscall_ns=0150,100 --json >dz.json 2>e &&
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert sorted(r["D:syscall_ns"] for r in d["rows"]) == [100, 150]' dz.json ||
	failmsg "--json with D:syscall_ns=0150: $(head -c 300 dz.json) $(cat e)"
"$bin" sweep mmap8 --iters 20 --grid threads=1 --policy nested=v2 --policy nested=v2 -o dup.csv \
	>/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "policy nested=v2 given twice" e &&
	[ ! -e dup.csv ] || failmsg "--policy twice: $(cat e)"

# a workload parameter its workload refuses is found before anything runs: no
# file, nothing on stdout (the 8K row ran and was written, then exit 2)
"$bin" sweep mmap8 --iters 5 --threads 2 --grid w:size=8K,abc -o wp.csv >wp.out 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "sweep at w:size=abc: workload parameter size=abc" e &&
	[ ! -e wp.csv ] || failmsg "w:size=8K,abc: $(cat e)"
"$bin" sweep mmap8 --iters 5 --threads 2 --grid w:size=8K,abc >wp.out 2>e
[ $? = 2 ] && [ ! -s wp.out ] || failmsg "w:size=8K,abc to stdout printed $(head -c 200 wp.out)"
rm -f wp.csv
"$bin" sweep mmap8 --iters 5 -w map=bogus --grid threads=1 -o wp.csv >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "map=bogus: want shared or private" e &&
	[ ! -e wp.csv ] || failmsg "-w map=bogus: $(cat e)"

# empty lines (a final newline added by echo, one between rows) hold no
# row: merge and resume read the file as it was ("4: 1 fields, the header
# has 69")
{ cat mx1.csv; echo; } >el.csv
{ head -n 2 mx1.csv; echo; tail -n +3 mx1.csv; } >el2.csv
"$bin" merge el.csv el2.csv >elm.csv 2>e && cmp -s elm.csv mx1.csv || failmsg "merge of empty lines: $(cat e)"
"$bin" sweep "${M[@]}" -o el.csv 2>e && grep -q "0 run now, 3 already there" e && cmp -s el.csv mx1.csv ||
	failmsg "resume from a file with an empty line: $(cat e)"

printf 'a,b\n1,2\n' >x.csv
"$bin" merge x.csv >/dev/null 2>e
[ $? = 2 ] && grep -q "not a tlbsim result file" e || failmsg "merge of a foreign CSV: $(cat e)"
# a wall_ns column after other configuration columns than tlbsim's: the
# message about two results for one configuration read fields before or
# past the row (ASan heap-buffer-overflow in unique_rows; "threads=(null)")
for h in 'x,wall_ns' 'wall_ns,x' 'a,b,c,wall_ns' 'a,b,c,d,e,f,g,h,wall_ns'; do
	n=$(echo "$h" | tr -cd , | wc -c)
	{ echo "$h"; for v in 2 3; do printf '1,%.0s' $(seq $n); echo $v; done; } >f.csv
	"$bin" merge f.csv >/dev/null 2>e
	[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q "f.csv: not a tlbsim result file" e ||
		failmsg "merge of '$h': $(cat e)"
done

if [ $fail = 0 ]; then
	echo "sweep: PASS"
	exit 0
fi
exit 1
