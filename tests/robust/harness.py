#!/usr/bin/env python3
"""Randomized robustness harness for the tlbsim command line.

Draws configurations of `tlbsim list|run|compare|check` (valid and invalid)
from a seeded PRNG, runs each under the given binary (normally the ASan+UBSan
build) with a wall-time cap and a memory cap, and checks the documented
contracts of the command line:

  * exit status 0, 1 (check, or run/compare --fail-on-violation) or 2; never
    3 (unless a small --max-memory ran out, as documented), a signal or a
    sanitizer exit;
  * exit 2: nothing on stdout, exactly one line on stderr;
  * no sanitizer report (AddressSanitizer, LeakSanitizer, UBSan) on stderr;
  * --json output (exit 0/1) is exactly one UTF-8 JSON document + newline;
  * run/compare JSON: user_ns + sys_ns + idle_ns == wall_ns * cpus (partial
    runs too), and the echoed configuration (workload, cpus, seed, iters,
    duration, policy with the workload's own defaults, params, overrides)
    matches what was asked for;
  * check JSON: violation is null exactly when the exit status is 0;
  * a sample of valid configurations is run twice: byte-identical stdout
    (check: timing figures masked; time-limited explorations skipped; the
    host seconds on the first line of a run/compare table masked);
  * a sample of checks that find a violation is replayed with --replay TOKEN:
    exit 1, same invariant, same token;
  * --trace FILE: after exit 1 the file is complete Chrome-trace JSON;
  * an oracle of which inputs are documented as invalid: deliberately bad
    input must exit 2, plainly valid input must not;
  * compare tables: the column labels tell the runs apart.

Configurations are a list of option groups (an option and its value), so a
failing configuration can be minimised by dropping groups while the same
failure signature reproduces. Everything about configuration i is derived
from (--seed, i) only, so the results do not depend on --jobs.

Usage: see tests/robust/README.md or --help.
"""

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import random
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_BIN = os.path.join(ROOT, "build", "asan", "tlbsim")

INT64_MAX = 2**63 - 1
MAX_WPARAMS = 16
MAX_OVERRIDES = 64
MAX_COMPARE = 16

# ---------------------------------------------------------------------------
# What the binary offers (parsed from `tlbsim list ...`, with built-in
# fallbacks so a broken listing is itself reported rather than fatal).
# ---------------------------------------------------------------------------

WIS_ANON = {"mode": "processes", "size": "128M"}
WIS_FILE = {"mode": "processes", "fs": "ext4", "size": "128M"}


def _wis(params):
    return {"profile": "arm64-4k", "threads": None, "fixed": False, "iters": 1, "check_cpus": 2,
            "check_iters": 1, "check_wparams": {"size": "16K"}, "timed": True,
            "default_policy": {"fault_retry": "dirty_throttle"}, "params": dict(params)}


FALLBACK = {
    "workloads": {
        "mmap8": {"profile": "falkor-46", "threads": 16, "fixed": False, "iters": 100000,
                  "check_cpus": 4, "check_iters": 1, "check_wparams": {}, "timed": False,
                  "default_policy": {}, "params": {"size": "16M", "touch": "1", "map": "shared"}},
        "mmap5": {"profile": "falkor-46", "threads": 2, "fixed": True, "iters": 20,
                  "check_cpus": 4, "check_iters": 1, "check_wparams": {"loops": "2"},
                  "timed": False, "default_policy": {},
                  "params": {"size": "4096", "loops": "500"}},
        "madv_race": {"profile": "x86-24", "threads": 3, "fixed": True, "iters": 1,
                      "check_cpus": 4, "check_iters": 1, "check_wparams": {}, "timed": False,
                      "default_policy": {}, "params": {"advice": "dontneed", "writes": "4"}},
        "lazy_tables": {"profile": "x86-24", "threads": 2, "fixed": True, "iters": 1,
                        "check_cpus": 4, "check_iters": 1, "check_wparams": {}, "timed": False,
                        "default_policy": {}, "params": {}},
        "page_fault1": _wis(WIS_ANON),
        "page_fault2": _wis(WIS_FILE),
        "page_fault3": _wis(WIS_FILE),
        "page_fault4": _wis(WIS_FILE),
        "tlb_flush1": _wis(WIS_FILE),
        "tlb_flush2": _wis({"mode": "processes", "size": "1M"}),
        "tlb_flush3": _wis(WIS_FILE),
    },
    "knobs": {
        "nested": ["prefix", "v1", "v2", "fullmm", "need_flush_all", "keep_bits"],
        "nested_check": ["off", "on"],
        "x86_lazy": ["freed_tables", "never", "defer"],
        "fault_retry": ["none", "dirty_throttle", "completed"],
        "spurious_flush": ["broadcast", "skip_tried", "skip_af_update", "noop", "local"],
        "vmap_purge": ["nodes", "global"],
        "kasan_flush": ["per_area", "per_node", "per_node_late"],
        "x86_flush_local": ["first", "concurrent"],
        "x86_tlb_gen": ["mm_gen", "new_gen"],
        "x86_cpumask": ["eager", "lazy"],
        "x86_should_flush": ["not_lazy", "loaded_mm"],
        "x86_table_free": ["page", "rcu"],
        "x86_flush": ["ipi", "invlpgb"],
    },
    "profiles": {
        "x86-24": {"arch": "x86", "page": 4096, "cpus": 24},
        "falkor-46": {"arch": "arm64", "page": 65536, "cpus": 46},
        "arm64-4k": {"arch": "arm64", "page": 4096, "cpus": 46},
        "arm64-16k": {"arch": "arm64", "page": 16384, "cpus": 46},
        "x86-256": {"arch": "x86", "page": 4096, "cpus": 256},
        "arm64-128": {"arch": "arm64", "page": 4096, "cpus": 128},
        "kvm16": {"arch": "x86", "page": 4096, "cpus": 16},
        "milan-72": {"arch": "x86", "page": 4096, "cpus": 72},
    },
}


def _list(binary, what):
    try:
        p = subprocess.run([binary, "list", what], capture_output=True, timeout=60,
                           env=child_env(binary, 4096))
        return p.stdout.decode("utf-8", "replace") if p.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _kvs(txt):
    """'a=b,c=d' -> {'a': 'b', 'c': 'd'}"""
    out = {}
    for part in txt.split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def load_catalog(binary):
    """What the binary offers, from `tlbsim list ...` (the fallback above when a
    listing cannot be parsed, so that a broken listing is reported by the
    configurations rather than stopping the harness)."""
    cat = json.loads(json.dumps(FALLBACK))
    txt = _list(binary, "workloads")
    wls = {}
    cur = None
    for line in txt.splitlines():
        m = re.match(r"^(\S+)\s+(.*)$", line)
        if m and not line.startswith(" "):
            cur = {"profile": None, "threads": 1, "fixed": False, "iters": 1, "check_cpus": 4,
                   "check_iters": 1, "check_wparams": {}, "default_policy": {},
                   "timed": "will-it-scale" in m.group(2), "params": {}}
            wls[m.group(1)] = cur
            continue
        if cur is None:
            continue
        # "default profile P, tasks 16|fixed threads 2|tasks one per CPU, iters N;
        #  check instance: iters N, cpus N[, k=v,...]"
        m = re.search(r"default profile (\S+), (fixed threads|tasks|threads) (\d+|one per CPU), "
                      r"(?:iters|rounds \(--iters\)) (\d+); check instance: iters (\d+), "
                      r"cpus (\d+)(?:, (.*))?$", line)
        if m:
            cur["profile"] = m.group(1)
            cur["fixed"] = m.group(2) == "fixed threads"
            cur["threads"] = None if m.group(3) == "one per CPU" else int(m.group(3))
            cur["iters"] = int(m.group(4))
            cur["check_iters"] = int(m.group(5))
            cur["check_cpus"] = int(m.group(6))
            cur["check_wparams"] = _kvs(m.group(7) or "")
            continue
        m = re.match(r"^\s+kernel: (\S+)", line)
        if m:
            cur["default_policy"] = _kvs(m.group(1))
            continue
        m = re.match(r"^\s+-w (\w+)=(\S*)\t", line)
        if m:
            cur["params"][m.group(1)] = m.group(2)
    if wls and all(w["profile"] for w in wls.values()):
        cat["workloads"] = wls
    txt = _list(binary, "policies")
    knobs = {}
    for line in txt.splitlines():
        m = re.match(r"^  (\w+)=(\S+)", line)
        if m:
            knobs.setdefault(m.group(1), []).append(m.group(2))
    if knobs:
        cat["knobs"] = knobs
    txt = _list(binary, "profiles")
    profs = {}
    for line in txt.splitlines():
        m = re.match(r"^(\S+)\s+(.*)$", line)
        if not m:
            continue
        desc = m.group(2)
        pm = re.search(r"(\d+)K pages", desc)
        cm = re.search(r"(\d+)-CPU", desc)
        profs[m.group(1)] = {
            "arch": "x86" if "x86" in desc else "arm64",
            "page": int(pm.group(1)) * 1024 if pm else 4096,
            "cpus": int(cm.group(1)) if cm else 1,
        }
    if profs:
        for name, fb in FALLBACK["profiles"].items():
            if name in profs and fb["page"] != profs[name]["page"]:
                profs[name]["page"] = fb["page"]
        cat["profiles"] = profs
    txt = _list(binary, "params")
    params = {}
    for line in txt.splitlines()[1:]:
        f = line.split()
        if len(f) >= 4 and re.fullmatch(r"-?\d+", f[2]) and re.fullmatch(r"-?\d+", f[3]):
            params[f[0]] = {"unit": f[1], "x86": int(f[2]), "arm64": int(f[3])}
    if not params:
        params = {n: {"unit": "ns", "x86": 100, "arm64": 100} for n in (
            "syscall_ns", "tlbi_op_ns", "rcu_grace_ns", "cr3_flush_ns")}
        params.update({"tlb_sets": {"unit": "sets", "x86": 128, "arm64": 128},
                       "tlb_ways": {"unit": "ways", "x86": 8, "arm64": 8},
                       "wc_sets": {"unit": "sets", "x86": 8, "arm64": 8},
                       "wc_ways": {"unit": "ways", "x86": 4, "arm64": 4},
                       "livelock_faults": {"unit": "faults", "x86": 1000, "arm64": 1000}})
    cat["params"] = params
    return cat


# ---------------------------------------------------------------------------
# Child environment and execution with time and memory caps.
# ---------------------------------------------------------------------------

def is_asan(binary):
    try:
        with open(binary, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


def child_env(binary, mem_mb, leaks=True):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": "/tmp"}
    # ASan reserves terabytes of shadow address space, so RLIMIT_AS cannot be
    # used with it; its own RSS watchdog (hard_rss_limit_mb) is the memory cap.
    # exitcode=86 keeps sanitizer deaths apart from check's exit 1;
    # allocator_may_return_null=1 makes a huge malloc return NULL as glibc
    # would, so the program's own out-of-memory handling is what gets tested.
    env["ASAN_OPTIONS"] = ("detect_leaks=%d:abort_on_error=0:exitcode=86:"
                           "allocator_may_return_null=1:hard_rss_limit_mb=%d:"
                           "handle_abort=1:symbolize=1" % (1 if leaks else 0, mem_mb))
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1:exitcode=87"
    return env


def env_prefix(opts):
    env = child_env(opts["binary"], opts["mem_mb"])
    return "ASAN_OPTIONS=%s UBSAN_OPTIONS=%s" % (env["ASAN_OPTIONS"], env["UBSAN_OPTIONS"])


def run_capped(argv, opts, cwd, leaks=True):
    """Run argv (list of str; surrogate-escaped bytes allowed) with the caps.

    Returns a dict: rc (exit status, or -signal), timeout, maxrss_kb, out, err
    (bytes), secs."""
    env = child_env(opts["binary"], opts["mem_mb"], leaks)
    asan = opts["asan"]
    mem_bytes = opts["mem_mb"] * 1024 * 1024

    def preexec():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if not asan:    # plain builds: an address-space limit is the memory cap
            resource.setrlimit(resource.RLIMIT_AS, (mem_bytes * 4, mem_bytes * 4))

    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        try:
            p = subprocess.Popen([opts["binary"]] + argv, stdin=subprocess.DEVNULL, stdout=fo,
                                 stderr=fe, env=env, cwd=cwd, preexec_fn=preexec,
                                 start_new_session=True)
        except (OSError, ValueError) as e:
            return {"rc": 127, "timeout": False, "maxrss_kb": 0, "out": b"",
                    "err": ("harness: cannot execute: %s\n" % e).encode(), "secs": 0.0}
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(p.pid, signal.SIGKILL)   # the child's own process group
            except ProcessLookupError:
                pass
        timer = threading.Timer(opts["timeout"], kill)
        timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        rc = os.waitstatus_to_exitcode(status)
        p.returncode = rc
        secs = time.monotonic() - t0
        fo.seek(0)
        fe.seek(0)
        return {"rc": rc, "timeout": timed_out.is_set(), "maxrss_kb": ru.ru_maxrss,
                "out": fo.read(), "err": fe.read(), "secs": secs}


# ---------------------------------------------------------------------------
# Configurations: a command and a list of option groups.
# A group is {"k": kind, "t": [tokens], "v": value, ...}.
# ---------------------------------------------------------------------------

WEIRD_NAMES = ["", "MMAP8", "mmap", "mmap88", "nosuch", "-", "mmap8 ", " mmap8", "mmap8\n",
               "mmap5\x1b[31m", "madv\trace", "lazy_tables\r", "mmap8\xff", "\udcff\udcfe",
               "m" * 5000, "mmap8=1", "../mmap8", "%s%n%s", "\u00e9t\u00e9", "page_fault",
               "page_fault5", "tlb_flush", "tlb_flush0", "PAGE_FAULT1", "will-it-scale"]
WEIRD_PROFILES = ["", "X86-24", "x86", "falkor", "arm64-64k", "falkor-46 ", "nosuch\n",
                  "\udcff", "p" * 3000, "%n"]
BAD_INTS = ["", "abc", "4x", "0x10", "1e3", "1.5", "--1", "9223372036854775808",
            "99999999999999999999999", "-9223372036854775809", "\udcff", "5\n", "\u0665",
            "5 ", "- 5", "-0", "18446744073709551616"]
# integers the documentation calls invalid ("digits only"): leading
# whitespace or a sign (these were accepted once)
NONCANON_INTS = [" 5", "+5", "\t3", "+1", " +2", "\n4"]
WIS = ("page_fault", "tlb_flush")


def is_wis(cat, wl):
    d = cat["workloads"].get(wl)
    return bool(d and d.get("timed"))


def mkopt(rng, name, value, abbrevs=()):
    """Tokens for --name VALUE: separate, --name=VALUE, or an abbreviation."""
    r = rng.random()
    if r < 0.1:
        return ["--%s=%s" % (name, value)], False
    if r < 0.14 and abbrevs:
        return ["--" + rng.choice(abbrevs), value], True
    return ["--" + name, value], False


class Gen:
    """Draws one configuration."""

    def __init__(self, cat, seed, index):
        self.cat = cat
        self.rng = random.Random("tlbsim-robust:%d:%d" % (seed, index))
        self.index = index
        # fault rate of this configuration: plainly valid (half of them, so
        # that the simulator itself is exercised), a few faults, or chaos
        r = self.rng.random()
        self.mode = "valid" if r < 0.5 else "light" if r < 0.82 else "chaos"
        self.odd = {"valid": 0.0, "light": 0.05, "chaos": 0.2}[self.mode]

    def good(self):
        """True unless this draw should be odd (per the configuration's mode)."""
        return self.rng.random() >= self.odd

    # -- small helpers --
    def p(self, x):
        return self.rng.random() < x

    def ch(self, seq):
        return self.rng.choice(seq)

    def int_value(self, valid, edges):
        """A value for an integer option: mostly from valid, sometimes an edge
        value (given by the caller, so that nothing valid but slow sneaks
        in), a non-canonical integer (' 5', '+5') or junk."""
        if self.good():
            return str(self.ch(valid))
        r = self.rng.random()
        if r < 0.35:
            return str(self.ch(list(edges) + [-1, INT64_MAX + 1, 2**64]))
        if r < 0.65:
            return self.ch(NONCANON_INTS)
        return self.ch(BAD_INTS)

    def group(self, k, tokens, v=None, **kw):
        g = {"k": k, "t": tokens, "v": v}
        g.update(kw)
        return g

    def opt_group(self, k, name, value, abbrevs=(), **kw):
        toks, ab = mkopt(self.rng, name, value, abbrevs)
        return self.group(k, toks, value, abbrev=ab, **kw)

    # -- workload parameters --
    def wparam_value(self, wl, name, page):
        rng = self.rng
        r = rng.random()
        wis = is_wis(self.cat, wl)
        if name == "size":
            if wl == "mmap5":
                good = ["4096", "1", "4K", "8K", "16K", "64K", "65536", "128K", "4KiB", "4KB",
                        "64k", "1M"]
            elif wis:
                # cheap: a few hundred pages per task at most
                good = ["4096", "16K", "16384", "64K", "64KiB", "128K", "256K", "1M", "2MB",
                        "4M"]
            else:
                good = ["4096", "1", "64K", "1M", "2M", "16M", "16MiB", "16MB", "32M", "256K",
                        "1G"]
            odd = ["0", "1T", "1TiB", "2T", "1099511627776", "1099511627777",
                   "18446744073709551615", "18446744073709551616", "17179869184T", "-1", "+5",
                   " 5", "5 ", "abc", "", "16Mb", "16Mib", "16 M", "0x10", "1e3", "4K4", "K",
                   "16MX", "\u0663", "1.5M", "\udcff", "00000000000000000000016M", "16M\n"]
            if wis:
                # below one page, and past the 64G maximum
                odd += ["1", "4095", "1K", "64G", "65G", "68719476736", "68719476737"]
            if self.good():
                return self.ch(good)
            if r < 0.2 and wl == "mmap8":
                return self.ch(["1T", "64G"])        # huge: touch decides the cost
            return self.ch(odd)
        if name == "touch":
            if self.good():
                return self.ch(["0", "1", "2", "4", "16", "32", "64"])
            return self.ch(["256", "4096", "4294967296", "18446744073709551615",
                            "18446744073709551616", "-1", "+1", " 1", "", "abc", "1K", "0x1",
                            "007", "\udcff"])
        if name == "map":
            if self.good():
                return self.ch(["shared", "private"])
            return self.ch(["SHARED", "", "shared ", "anon", "priv", "private\n", "\udcff"])
        if name == "loops":
            if self.good():
                return self.ch(["1", "2", "3", "5", "10", "50"])
            return self.ch(["0", "100000001", "-1", "+5", " 5", "", "abc", "1e3",
                            "18446744073709551616", "\udcff"])
        if name == "advice":
            if self.good():
                return self.ch(["dontneed", "free"])
            return self.ch(["FREE", "", "willneed", "dontneed ", "free\x1b", "\udcff"])
        if name == "writes":
            if self.good():
                return self.ch(["1", "2", "4", "16", "100", "1000"] if wl == "madv_race" else
                               ["1", "2", "4", "16", "100"])
            return self.ch(["0", "1000000", "1000001", "4096", "4097", "-1", "+4", " 4", "",
                            "abc", "18446744073709551616"])
        if name == "mode":
            if self.good():
                return self.ch(["processes", "threads"])
            return self.ch(["process", "thread", "THREADS", "", "threads ", "fork", "\udcff"])
        if name == "fs":
            if self.good():
                return self.ch(["ext4", "tmpfs"])
            return self.ch(["EXT4", "xfs", "", "tmpfs\n", "shmem", "ext3", "\udcff"])
        if name == "zap":
            if self.good():
                return self.ch(["munmap", "dontneed"])
            return self.ch(["MUNMAP", "", "unmap", "dontneed ", "free", "abc", "\udcff"])
        if name in ("pages", "flushes"):
            if self.good():
                return self.ch(["1", "2", "3", "8", "64"])
            return self.ch(["0", "4097", "-1", "+2", " 2", "", "abc", "1e3", "\udcff"])
        if name == "kasan":
            if self.good():
                return self.ch(["on", "off"])
            return self.ch(["ON", "1", "0", "", "yes", "on ", "\udcff"])
        if name == "jobs":
            if self.good():
                return self.ch(["1", "2", "5", "20", "100"])
            return self.ch(["1000001", "-1", "+5", "", "abc", "18446744073709551616",
                            "\udcff"])
        if name in ("job_ms", "job_sigma"):
            if self.good():
                return self.ch(["0.001", "0.1", "1", "1.5", "2.25", "0.5"] if name == "job_ms"
                               else ["0", "0.5", "1", "1.25", "3", "0.001"])
            return self.ch(["0", "0.0001", "600001", "-1", "-0.5", ".5", "5.", "1e3", "",
                            "abc", "1,5", " 1", "1.2.3", "\udcff", "\u0661"] if name == "job_ms"
                           else ["3.001", "4", "-1", ".5", "1.", "0.0001", "", "abc", "\udcff"])
        if name == "ws_pages":
            if self.good():
                return self.ch(["0", "1", "2", "16", "64"])
            return self.ch(["1048577", "-1", "+1", "", "abc", "\udcff"])
        if name == "procs":
            if self.good():
                return self.ch(["1", "2", "3"])
            return self.ch(["0", "9", "-1", "", "abc", "\udcff"])
        if name == "run_test_mask":
            if self.good():
                return self.ch(["1", "8", "16", "32", "64", "25", "121"])
            return self.ch(["0", "128", "-1", "0x7", "", "abc", "\udcff", "\xff"])
        if name == "test_loop_count":
            if self.good():
                return self.ch(["1", "2", "3", "10"])
            return self.ch(["0", "100000001", "-1", "", "abc", "\udcff"])
        if name == "nr_pages":
            if self.good():
                return self.ch(["1", "2", "16"])
            return self.ch(["0", "65537", "-1", "", "abc", "\udcff"])
        if name == "nr_threads":
            if self.good():
                return self.ch(["1", "2", "3", "4"])
            return self.ch(["65536", "-1", "", "abc", "\udcff"])
        if name == "tries":
            if self.good():
                return self.ch(["1", "2", "16", "64"])
            return self.ch(["0", "100001", "-1", "", "abc", "\udcff"])
        # a parameter this harness does not know: generic values
        return self.ch(["0", "1", "2", "16", "", "abc", "-1", "\udcff"])

    def wparam_groups(self, wl, page, n):
        cat = self.cat
        out = []
        params = list(cat["workloads"].get(wl, {}).get("params", {}).keys())
        for _ in range(n):
            r = self.rng.random()
            if params and self.good():
                name = self.ch(params)
                val = self.wparam_value(wl, name, page)
            elif r < 0.5 or not params:
                # a parameter of another workload, or an unknown one
                others = [p for w in cat["workloads"].values() for p in w["params"]]
                name = self.ch(others + ["nosuch", "SIZE", "x" * 47, "x" * 48])
                val = self.ch(["1", "4096", "shared", "threads", "tmpfs"])
            else:
                # malformed NAME=VALUE
                tok = self.ch(["size", "=4096", "size=", "", "size==4K", "=", "size=" + "1" * 80,
                               "size=" + "1" * 79, "\udcff=1", "touch=1=2", "mode", "fs=",
                               "mode==threads"])
                out.append(self.group("w", self.wtokens(tok), tok, raw=True))
                continue
            if name == "touch" and self.p(0.1):
                # exactly the number of pages, or one more
                size = "16M"
                out.append(self.group("w", self.wtokens("size=" + size), "size=" + size,
                                      name="size", val=size))
                pages = (16 << 20) // page
                val = str(pages + self.ch([0, 1]))
            kv = "%s=%s" % (name, val)
            out.append(self.group("w", self.wtokens(kv), kv, name=name, val=val))
            if self.p(0.04):
                # the same name again (a later -w replaces the earlier one)
                val2 = self.wparam_value(wl, name, page) if name in params else val
                kv2 = "%s=%s" % (name, val2)
                out.append(self.group("w", self.wtokens(kv2), kv2, name=name, val=val2))
        return out

    def wtokens(self, kv):
        return ["-w" + kv] if self.p(0.1) else ["-w", kv]

    # -- cost parameters --
    def param_value(self, name, d, dflt):
        """A value for -D name: mostly valid for its unit (tlbsim_resolve's
        param_check), sometimes at or past its bound."""
        unit = d["unit"]
        odd = not self.good()
        if unit == "bool":
            return self.ch(["2", "-1", "10"] if odd else ["0", "1"])
        if unit == "sets":
            return self.ch(["3", "0", "131072", "-8", "1e3"] if odd else
                           ["1", "2", "8", "64", "128", "1024", "4096", "65536", str(dflt)])
        if unit == "ways":
            return self.ch(["0", "65", "-1", "+8"] if odd else
                           ["1", "2", "4", "8", "16", "64", str(dflt)])
        if name == "livelock_faults":
            return self.ch(["0", "1", "-1", "100000001"] if odd else
                           ["2", "3", "64", "1000", "1000000", "100000000", str(dflt)])
        if unit == "percent":
            return self.ch(["101", "1000", "-1"] if odd else ["0", "1", "10", "50", "100",
                                                               str(dflt)])
        if name == "ram_mb":
            return self.ch(["0", "1073741825", "-1"] if odd else
                           ["1", "16", "1024", "65536", "1073741824", str(dflt)])
        if name == "writeback_bw_mbs":
            return self.ch(["0", "1000001", "-1"] if odd else ["1", "10", "500", "1000000"])
        if name == "fault_around_bytes":
            return self.ch(["1073741825", "-1", "99999999999"] if odd else
                           ["0", "4096", "65536", "1048576", "1073741824", str(dflt)])
        if name == "jitter":
            return self.ch(["51", "100", "-1"] if odd else ["0", "1", "5", "20", "50"])
        if name == "asid_bits":
            return self.ch(["0", "1", "17", "1000000", "-1"] if odd else
                           ["2", "7", "8", "9", "16", "16"])
        if name == "kasan_slowdown":
            return self.ch(["0", "101", "-1"] if odd else ["1", "2", "3", "10", "100"])
        if name == "watchdog_thresh_s":
            return self.ch(["61", "1000", "-1"] if odd else ["0", "1", "10", "60"])
        if name == "global_asids":
            return self.ch(["65001", "1000000", "-1"] if odd else ["0", "1", "100", "2039", "65000"])
        if name == "flush_ceiling":
            return self.ch(["68719476737", "-1"] if odd else
                           ["0", "1", "33", "1000", "68719476736", str(dflt)])
        if odd:
            return self.ch(["1000000001", "10000000000", str(INT64_MAX), "9223372036854775808",
                            "-1", "abc", "", "1e3", "0x10", " 5", "+5", "5ns"])
        val = self.ch(["0", "0", str(dflt), str(dflt), str(dflt * 10 + 1),
                       str(dflt * 1000 + 7), "1", "1000000", "1000000000", "999999999"])
        if name == "rcu_grace_ns" and int(val) >= 100000000 and not self.p(0.15):
            val = str(dflt)     # tables pile up for a long grace period: keep it rare
        return val

    def dparam_groups(self, arch, n, wis=False):
        out = []
        params = self.cat["params"]
        names = sorted(params)
        for _ in range(n):
            if self.good():
                name = self.ch(names)
                d = params[name]
                dflt = d["x86" if arch == "x86" else "arm64"]
                val = self.param_value(name, d, dflt)
                if wis and d["unit"] == "ns" and re.fullmatch(r"[0-9]+", val) and \
                        int(val) >= 1000000 and not self.p(0.1):
                    # a delayed task keeps the others looping: keep it cheap
                    val = str(dflt)
                kv = "%s=%s" % (name, val)
                out.append(self.group("D", self.dtokens(kv), kv, name=name, val=val))
                if self.p(0.05):
                    # the same parameter again (a later -D replaces the earlier one)
                    val2 = self.param_value(name, d, dflt)
                    kv2 = "%s=%s" % (name, val2)
                    out.append(self.group("D", self.dtokens(kv2), kv2, name=name, val=val2))
            else:
                tok = self.ch(["nosuch=1", "TLBI_OP_NS=1", "tlbi_op_ns", "=5", "tlbi_op_ns=",
                               "", "x" * 64 + "=1", "tlbi_op_ns=" + "1" * 96, "\udcff=1",
                               "cr3_flush_ns==5", "spurious_flush=1", "fault_retry=0"])
                out.append(self.group("D", self.dtokens(tok), tok, raw=True))
        return out

    def dtokens(self, kv):
        return ["-D" + kv] if self.p(0.1) else ["-D", kv]

    # -- policy knobs --
    def policy_value(self, knob=None):
        """K=V, sometimes several knobs K=V,K=V (--policy takes a list)."""
        knobs = self.cat["knobs"]
        if self.good():
            k = knob or self.ch(sorted(knobs))
            val = "%s=%s" % (k, self.ch(knobs[k]))
            if knob is None and self.p(0.2):
                k2 = self.ch(sorted(knobs))
                val += "%s%s=%s" % (self.ch([",", ",", ",,"]), k2, self.ch(knobs[k2]))
            return val
        return self.ch(["nested=bogus", "foo=bar", "nested", "=prefix", "nested=",
                        "nested==v2", "NESTED=v2", "nested=V2", "nested=prefix ",
                        "nested_check=maybe", "x86_lazy=always", "nested=\udcff",
                        "nested=" + "v" * 96, "n" * 64 + "=1", ",", "nested=v2,",
                        ",nested=v2", "nested=v2,bogus=1", "nested=v2;x86_lazy=never",
                        "fault_retry=retry", "spurious_flush=", "nested=v2," * 30,
                        "spurious_flush=local,nested"])

    def policy_group(self, val):
        toks, ab = mkopt(self.rng, "policy", val, ("pol", "poli"))
        return self.group("policy", toks, val, abbrev=ab)

    # -- odd argv additions --
    def odd_groups(self, cmd):
        out = []
        if self.mode == "valid" or (self.mode == "light" and self.p(0.6)):
            return out
        choice = self.rng.random()
        if choice < 0.12:
            out.append(self.group("unknown_opt", [self.ch(["--bogus", "-x", "--json=yes",
                                                           "--no-such-option", "-", "---",
                                                           "--\udcff", "--cpus\x1b[0m=2",
                                                           "-W", "--=", "-wD", "--task",
                                                           "--du"])]))
        elif choice < 0.22:
            out.append(self.group("missing_value",
                                  [self.ch(["--cpus", "-w", "-D", "--policy", "--threads",
                                            "--tasks", "--iters", "--seed", "--profile",
                                            "--max-memory", "--time-limit"]
                                           + (["--runs", "--depth", "--strategy",
                                               "--replay", "--trace", "--invariant",
                                               "--max-steps"] if cmd == "check" else
                                              ["--duration"]))],
                                  tail=True))
        elif choice < 0.34:
            out.append(self.group("extra_pos", [self.ch(["mmap8", "extra", "", "\udcff",
                                                         "a\nb"])]))
        elif choice < 0.42:
            out.append(self.group("help", [self.ch(["-h", "--help", "--he"])]))
        elif choice < 0.52 and cmd == "check":
            out.append(self.group("unknown_opt", [self.ch(["--t", "--s", "--m"])]))  # ambiguous
        elif choice < 0.52:
            # ambiguous in run/compare: --seed/--seeds
            out.append(self.group("unknown_opt", [self.ch(["--se", "--see"]), "7"]))
        elif choice < 0.6:
            # an option of the other commands
            if cmd == "check":
                out.append(self.group("unknown_opt", [self.ch(["--duration", "0.001"])])
                           if self.p(0.5) else
                           self.group("unknown_opt", ["--fail-on-violation"]))
            else:
                out.append(self.group("unknown_opt", [self.ch(["--strategy", "--runs",
                                                               "--replay", "--max-steps",
                                                               "--no-minimise", "--depth"]),
                                                      "1"]))
        return out

    # -- commands --
    def common(self, cmd):
        """Workload and the options shared by run, compare and check."""
        cat = self.cat
        groups = []
        wls = sorted(cat["workloads"])
        if self.good() or self.p(0.6):
            wl = self.ch(wls)
        else:
            wl = self.ch(WEIRD_NAMES)
        wdesc = cat["workloads"].get(wl)
        wis = is_wis(cat, wl)
        fixed = bool(wdesc and wdesc.get("fixed"))
        prof = None
        if self.p(0.45):
            prof = self.ch(sorted(cat["profiles"])) if self.good() or self.p(0.5) else \
                self.ch(WEIRD_PROFILES)
            groups.append(self.opt_group("profile", "profile", prof, ("prof", "pro")))
        pinfo = cat["profiles"].get(prof or (wdesc or {}).get("profile", ""), None)
        page = pinfo["page"] if pinfo else 4096
        arch = pinfo["arch"] if pinfo else "arm64"
        cpus_given = False
        if self.p(0.45) or (wis and cmd != "check" and self.p(0.5)):
            cvals = [1, 1, 2, 3, 4, 4, 8, 16, 24, 46, 64, 1024]
            if wis and cmd != "check":
                cvals = [1, 2, 3, 4, 8]      # one task per CPU by default
            v = self.int_value(cvals, [0, 1025, 4096, 100000])
            groups.append(self.opt_group("cpus", "cpus", v, ("cpu", "cp")))
            cpus_given = True
        heavy = wl == "mmap8"
        # --threads (or its alias --tasks): refused by workloads with a
        # fixed thread structure, so rarely given to them
        if (not fixed or self.p(0.15)) and (self.p(0.5) or (heavy and cmd != "check") or
                                            (wis and cmd != "check" and not cpus_given)):
            tvals = [1, 1, 2, 3, 4, 8, 16, 32, 64] if cmd != "check" else [1, 2, 3, 4]
            if wis:
                tvals = [1, 2, 3, 4, 8, 16] if cmd != "check" else [1, 2, 3]
            v = self.int_value(tvals, [0, 4097, 100000])
            if cmd == "check" and wl == "mmap8" and self.p(0.05):
                v = self.ch(["32", "64"])
            name = "tasks" if (wis and self.p(0.6)) or self.p(0.1) else "threads"
            groups.append(self.opt_group("threads", name, v, ("thread", "thr", "tas")))
        # --iters bounds the cost of mmap8 (default 100000): always given there
        duration = wis and cmd != "check" and self.p(0.3)
        if duration:
            v = self.ch(["0.001", "0.002", "0.0005", "0.000001", "0.01"]) if self.good() else \
                self.ch(["0", "0.0000001", "3601", "1e-3", ".5", "5.", "", "abc", "0.0000000001",
                         "-1", "+0.001", " 0.001", "1,5"])
            groups.append(self.opt_group("duration", "duration", v, ("dur", "du"), keep=True))
            if self.p(0.1):
                # --duration and --iters together: refused
                groups.append(self.opt_group("iters", "iters", "1", ("it", "iter")))
        elif heavy and cmd != "check":
            v = self.int_value([1, 1, 2, 3, 5], [0, 1000000001])
            if re.fullmatch(r"[0-9]+", v) and int(v) > 5:
                v = "3"
            groups.append(self.opt_group("iters", "iters", v, ("it", "iter"), keep=True))
        elif self.p(0.4):
            v = self.int_value([1, 1, 2, 3], [0, 1000000001])
            if re.fullmatch(r"[0-9]+", v) and int(v) > 5:
                v = "3"
            groups.append(self.opt_group("iters", "iters", v, ("it", "iter")))
        if self.p(0.3):
            v = self.int_value([0, 1, 2, 7, 12345, INT64_MAX, 2**32, "007"],
                               [-1, INT64_MAX + 1])
            # run/compare also have --seeds: there --se and --see are ambiguous
            groups.append(self.opt_group("seed", "seed", v,
                                         ("se", "see") if cmd == "check" else ()))
        nw = self.ch([0, 0, 1, 1, 2, 3])
        if self.p(0.02):
            nw = self.ch([12, 16] if self.mode == "valid" else [12, 13, 16, 17])
        groups += self.wparam_groups(wl if wdesc else self.ch(wls), page, nw)
        nd = self.ch([0, 0, 0, 1, 1, 2, 3])
        if self.p(0.02):
            nd = self.ch([40, 63] if self.mode == "valid" else [63, 64, 65])
        groups += self.dparam_groups(arch, nd, wis)
        if self.p(0.5):
            groups.append(self.group("json", [self.ch(["--json"] * 9 + ["--js"])]))
        if self.p(0.03):
            groups.append(self.group("json", ["--json"]))     # duplicate
        if self.p(0.06):
            v = self.ch(["64M", "256M", "1G", "1G", "4G", "1P"]) if self.good() else \
                self.ch(["63M", "1", "0", "2P", "abc", "", "1.5G", "-1G"])
            groups.append(self.opt_group("maxmem", "max-memory", v, ("max-mem",)))
        return wl, groups

    def bound_cost(self, wl, groups, cmd):
        """Keep plainly valid configurations cheap: mmap5 loops x rounds, and
        the will-it-scale mapping size x tasks (default 128M on every CPU)."""
        if cmd == "check":
            return
        if wl == "mmap5":
            has_iters = any(g["k"] == "iters" for g in groups)
            has_loops = any(g.get("name") == "loops" for g in groups)
            if not has_iters:
                groups.append(self.opt_group("iters", "iters", self.ch(["1", "2"]), keep=True))
            if not has_loops:
                kv = "loops=%s" % self.ch(["1", "5", "20"])
                groups.append(self.group("w", self.wtokens(kv), kv, name="loops",
                                         val=kv.split("=")[1], keep=True))
        def bound(name, vals):
            if not any(g.get("name") == name for g in groups):
                kv = "%s=%s" % (name, self.ch(vals))
                groups.append(self.group("w", self.wtokens(kv), kv, name=name,
                                         val=kv.split("=")[1], keep=True))
        if wl == "kbuild":
            bound("jobs", ["1", "3", "10", "20"])
            bound("ws_pages", ["1", "4", "16"])
        if wl == "test_vmalloc":
            bound("test_loop_count", ["1", "3", "10"])
            bound("nr_threads", ["1", "2", "4"])
            bound("run_test_mask", ["1", "8", "16", "32", "64", "121"])
        if is_wis(self.cat, wl):
            if not any(g.get("name") == "size" for g in groups):
                kv = "size=%s" % self.ch(["16K", "64K", "256K", "1M"])
                groups.append(self.group("w", self.wtokens(kv), kv, name="size",
                                         val=kv.split("=")[1], keep=True))
            if not any(g["k"] in ("cpus", "threads") for g in groups):
                groups.append(self.opt_group("threads", "tasks", self.ch(["1", "2", "4", "8"]),
                                             keep=True))

    def gen_run(self, cmd):
        wl, groups = self.common(cmd)
        if cmd == "run":
            for _ in range(self.ch([0, 0, 1, 1, 2, 3])):
                groups.append(self.policy_group(self.policy_value()))
        else:
            n = self.ch([2, 2, 2, 3, 3, 4, 4])
            if self.p(0.04) and self.mode != "valid":
                n = self.ch([0, 1, 16, 17])
            mixed = self.p(0.4)
            knob = self.ch(sorted(self.cat["knobs"]))
            for _ in range(n):
                groups.append(self.policy_group(self.policy_value(None if mixed else knob)))
        if self.p(0.1):
            groups.append(self.group("fov", ["--fail-on-violation"]))
        self.bound_cost(wl, groups, cmd)
        return wl, groups

    def gen_check(self):
        wl, groups = self.common("check")
        for _ in range(self.ch([0, 1, 1, 2, 3])):
            groups.append(self.policy_group(self.policy_value()))
        if self.p(0.4):
            # a pre-fix policy, so that violations (minimisation, the trace,
            # --trace files, replay tokens) are exercised as well
            groups.append(self.policy_group(self.ch(["nested=prefix", "nested=need_flush_all",
                                                     "nested_check=off", "x86_lazy=never",
                                                     "nested=keep_bits"])))
        if self.p(0.6):
            v = self.ch(["random", "pct", "dfs"]) if self.good() else \
                self.ch(["", "PCT", "bfs", "random ", "\udcff"])
            groups.append(self.opt_group("strategy", "strategy", v, ("str", "stra")))
        if self.p(0.4):
            v = self.int_value([1, 2, 3, 4, 8, 16], [0, 17, 100])
            groups.append(self.opt_group("depth", "depth", v, ("dep", "de")))
        if self.p(0.1):
            v = self.int_value([100, 1000, 5000, 200000], [0, 99, 1000000001])
            groups.append(self.opt_group("maxsteps", "max-steps", v, ("max-s",)))
        # the exploration budget: --runs and/or --time-limit (keep both small)
        r = self.rng.random()
        if r < 0.7:
            v = self.int_value([1, 2, 10, 50, 100, 300, 1000], [0, 1000000001])
            if re.fullmatch(r"[0-9]+", v) and int(v) > 1000:
                v = "1000"
            groups.append(self.opt_group("runs", "runs", v, ("ru", "run"), keep=True))
            if self.p(0.6):
                groups.append(self.opt_group("tlimit", "time-limit", self.ch(["1", "2", "5"]),
                                             ("time", "ti"), keep=True))
        else:
            # decimals are valid (0.001..86400 s); "1.5" among BAD_INTS is then
            # a valid limit too, checked by c_seconds below
            v = self.int_value(["1", "0.5", "1", "2"], [0, 86401])
            if re.fullmatch(r"[0-9]+", v) and int(v) > 3:
                v = "1"
            groups.append(self.opt_group("tlimit", "time-limit", v, ("time", "ti"), keep=True))
            if self.p(0.5):
                groups.append(self.opt_group("runs", "runs", "100000", ("ru",), keep=True))
        if is_wis(self.cat, wl) and not any(g["k"] == "tlimit" for g in groups):
            # a will-it-scale task waits in a loop for the others: schedules
            # that starve one run to --max-steps; keep the search short
            groups.append(self.opt_group("tlimit", "time-limit", self.ch(["1", "2"]),
                                         ("time", "ti"), keep=True))
        if self.p(0.2):
            v = self.ch(["I1", "I1-realized", "I2", "I3", "stale-walk", "livelock"]) \
                if self.good() else self.ch(["i1", "", "I4", "I1 ", "stale_walk", "\udcff"])
            groups.append(self.opt_group("invariant", "invariant", v, ("inv", "in")))
        if self.p(0.2):
            groups.append(self.group("nomin", [self.ch(["--no-minimise"] * 4 + ["--no"])]))
        if self.p(0.15):
            if self.mode == "valid":
                kind = self.ch(["long_utf8", "long_name", "normal", "normal", "normal"])
            else:
                kind = "normal" if self.good() else self.ch(
                    ["dir", "nonexistent", "empty", "long_utf8", "nonutf8", "dash", "newline",
                     "long_name", "too_long_name"])
            groups.append(self.group("trace", None, None, trace=kind))
        if self.p(0.05) and self.mode != "valid":
            tok = self.ch(["garbage", "", "t2.", "t2.22980109", "t2.22980109.", "t2.zzzzzzzz.0.0",
                           "t1.22980109.-1e-1-a-1", "t2.22980109.-1e-1-a-1.6eebbd2f",
                           "t2.22980109.-1e-1-a-1.00000000", "t2.22980109..811c9dc5",
                           "t2.22980109." + "y" * 5000 + ".00000000", "\udcff",
                           "t2.22980109.-1e-1-a-1.6eebbd2f\n",
                           "t2.22980109.-ffffffffffffffffffff-.00000000"])
            groups.append(self.opt_group("replay", "replay", tok, ("rep", "repl")))
        return wl, groups

    def gen_other(self):
        """list / help / version / unknown commands. Returns (argv, expect, note)."""
        cat = self.cat
        r = self.rng.random()
        lists = ["workloads", "policies", "profiles", "params"]
        if r < 0.45:
            # `list WHAT --json` prints the list as JSON
            return ["list", self.ch(lists)] + (["--json"] if self.p(0.3) else []), "ok", None
        if r < 0.6:
            return ["list", self.ch(["", "workload", "WORKLOADS", "nosuch", "params\n",
                                     "\udcff", "--bogus"])], "error", "list: unknown list"
        if r < 0.66:
            return ["list"], "error", "list without a list name"
        if r < 0.72:
            return (["list", self.ch(lists)] + (["--json"] if self.p(0.3) else [])
                    + [self.ch(["extra", "workloads", "--jsonx", "--js", ""])],
                    "error", "list with an extra argument")
        if r < 0.8:
            return [self.ch(["--help", "-h", "help", "--version"])], "ok", None
        if r < 0.84:
            return [self.ch(["run", "compare", "check", "list"]), self.ch(["--help", "-h"])], \
                "ok", None
        if r < 0.88:
            return [], "error", "no arguments"
        argv = [self.ch(["", "RUN", "frobnicate", "-x", "--bogus", "runs", "\udcff",
                         "run\n", "chec", "-", "--"])]
        if self.p(0.3):
            argv.append(self.ch(sorted(cat["workloads"])))
        return argv, "error", "unknown command"

    def run_time_limit(self, cfg):
        """A run stopped by --time-limit: exit 0, its numbers marked partial."""
        wl = self.ch(["mmap8", "mmap8", "page_fault1", "tlb_flush2"])
        if wl == "mmap8":
            base = ["mmap8", "--iters", "1000000000", "--threads", self.ch(["2", "4"])]
        else:
            base = [wl, "-w", "size=64K", "--tasks", "2", "--duration", "3600"]
        base += ["--time-limit", "1"]
        if self.p(0.6):
            base.append("--json")
        cmd = "run" if self.p(0.7) else "compare"
        if cmd == "compare":
            base += ["--policy", "nested=v2", "--policy", "nested=fullmm"]
        cfg["cmd"] = cmd
        cfg["rerun"] = False
        cfg["groups"] = [self.group("wl", [base[0]], base[0])] + [
            self.group("raw_opts", base[1:])]
        cfg["partial_run"] = True
        return cfg

    def config(self):
        r = self.rng.random()
        if r < 0.38:
            cmd = "run"
        elif r < 0.58:
            cmd = "compare"
        elif r < 0.88:
            cmd = "check"
        elif r < 0.94:
            cmd = "replay"
        else:
            cmd = "other"
        cfg = {"index": self.index, "cmd": cmd, "rerun": self.p(0.12),
               "roundtrip": self.p(0.3)}
        if cmd == "other":
            argv, expect, note = self.gen_other()
            cfg["groups"] = [self.group("raw", argv)]
            cfg["expect_other"] = expect
            cfg["note_other"] = note
            return cfg
        if cmd == "replay":
            return self.replay_config(cfg)
        if cmd == "run" and self.p(0.015):
            return self.run_time_limit(cfg)
        if cmd == "check":
            wl, groups = self.gen_check()
        else:
            wl, groups = self.gen_run(cmd)
        groups += self.odd_groups(cmd)
        if cmd == "run" and self.p(0.03):
            # a long but valid command line (the JSON "command" key)
            for _ in range(self.rng.randint(20, 60)):
                groups.append(self.policy_group(self.policy_value()))
        if self.p(0.05):
            # duplicate an option group (last one wins)
            dup = [g for g in groups if g["k"] in ("cpus", "threads", "seed", "profile")]
            if dup:
                groups.append(dict(self.ch(dup)))
        self.rng.shuffle(groups)
        # the workload: mostly first (as documented), sometimes after the
        # options or after "--"
        wg = self.group("wl", [wl], wl)
        r = self.rng.random()
        if r < 0.6:
            groups.insert(0, wg)
        elif r < 0.95:
            groups.insert(self.rng.randint(0, len(groups)), wg)
        else:
            wg["t"] = ["--", wl]
            wg["dashdash"] = True
        tail = [g for g in groups if g.get("tail")]
        groups = [g for g in groups if not g.get("tail")]
        if wg.get("dashdash"):
            groups.append(wg)
        groups += tail
        cfg["groups"] = groups
        return cfg

    def replay_config(self, cfg):
        """Two stages: a check known to find a violation, then --replay with a
        mutation of its token (same options)."""
        base = self.ch([
            ["mmap5", "--profile", "falkor-46", "--policy", "nested=prefix"],
            ["mmap5", "--profile", "arm64-4k", "--policy", "nested=prefix"],
            ["mmap5", "--profile", "x86-24", "--policy", "nested=need_flush_all"],
            ["madv_race", "--policy", "nested_check=off", "-w", "advice=free"],
            ["madv_race", "--policy", "nested_check=off"],
            ["lazy_tables", "--policy", "x86_lazy=never"],
            ["mmap8", "--policy", "nested=prefix", "--runs", "20"],
            ["mmap8", "--policy", "nested=prefix", "--runs", "1", "--no-minimise", "-w",
             "touch=64", "--profile", "arm64-16k"],
        ])
        extra = []
        if self.p(0.3):
            extra += ["--seed", str(self.ch([2, 3, 99]))]
        if self.p(0.2):
            extra += ["--invariant", {"mmap5": "livelock", "madv_race": "I2" if "-w" in base
                                      else "I3"}.get(base[0], "I1")]
        if self.p(0.2) and "--no-minimise" not in base:
            extra += ["--no-minimise"]
        if self.p(0.2):
            extra += ["--strategy", self.ch(["pct", "dfs"])]
        cfg["groups"] = [self.group("raw", base + extra + ["--time-limit", "3"])]
        cfg["mutation"] = self.ch([
            "same", "same", "same", "upper_hash", "plus_run", "space_run", "hex_run",
            "lead_zero_run", "zero_run", "append_digits", "big_digits", "truncate",
            "drop_last", "huge_zero_run", "overflow_run", "bad_char", "double_dash",
            "trailing_dash", "empty_decisions", "short_zero_run", "t1", "bad_sum",
            "resum_append", "resum_truncate", "resum_noncanon", "resum_huge_run",
            "resum_other_hash"])
        cfg["mut_seed"] = self.rng.randrange(2**32)
        cfg["json2"] = self.p(0.5)
        return cfg


TOKEN_RE = re.compile(r"t2\.([0-9a-f]{8})\.([0-9a-z\-]*)\.([0-9a-f]{8})")


def fnv1a(b):
    h = 2166136261
    for c in b:
        h ^= c
        h = (h * 16777619) & 0xffffffff
    return h


def with_sum(h, dec):
    """A token with a correct checksum (what token.c computes)."""
    body = "t2.%s.%s" % (h, dec)
    return "%s.%08x" % (body, fnv1a(body.encode()))


def mutate_token(tok, how, seed):
    """Return (mutated token, expectation) for stage 2 of a replay config.
    expectation: 'same' (exit 1, same violation), 'error' (exit 2), 'any'
    (exit 0, 1 or 2: a well-formed token for a schedule that may or may not
    fit). Tokens are t2.<hash>.<decisions>.<fnv1a>: every edit that keeps the
    old checksum must be refused, and so must a re-summed token that is not
    the encoder's own spelling."""
    rng = random.Random(seed)
    m = TOKEN_RE.fullmatch(tok)
    if not m:
        return tok, "any"
    h, dec, _ = m.group(1), m.group(2), m.group(3)
    runs = [x for x in re.finditer(r"-([0-9a-f]+)-", dec)]

    def edited(new):
        return (new, "same") if new == tok else (new, "error")
    if how == "same":
        return tok, "same"
    if how == "upper_hash":
        return edited(tok.replace(h, h.upper(), 1))
    if how in ("plus_run", "space_run", "hex_run", "lead_zero_run") and runs:
        r = rng.choice(runs)
        pre = {"plus_run": "+", "space_run": " ", "hex_run": "0x", "lead_zero_run": "0"}[how]
        return edited(tok[:3 + 9 + r.start(1)] + pre + tok[3 + 9 + r.start(1):])
    if how == "zero_run":
        return edited(tok.replace(dec, dec + "-0-", 1) if dec else tok)
    if how == "append_digits":
        return edited("t2.%s.%s%s.%s" % (h, dec, "".join(
            rng.choice("0123456789abc") for _ in range(rng.randint(1, 40))), m.group(3)))
    if how == "big_digits":
        return edited("t2.%s.%s.%s" % (h, re.sub(r"[1-9a-x]", lambda _: rng.choice("wxy"), dec),
                                        m.group(3)))
    if how == "truncate":
        return edited(tok[:rng.randint(0, max(0, len(tok) - 1))])
    if how == "drop_last":
        return edited(tok[:-1])
    if how == "huge_zero_run":
        return edited("t2.%s.%s-5f5e100-.%s" % (h, dec, m.group(3)))
    if how == "overflow_run":
        return edited("t2.%s.%s-10000000000000000-.%s" % (h, dec, m.group(3)))
    if how == "bad_char":
        return edited("t2.%s.%sz.%s" % (h, dec, m.group(3)))
    if how == "double_dash":
        return edited("t2.%s.%s--.%s" % (h, dec, m.group(3)))
    if how == "trailing_dash":
        return edited(tok + "-")
    if how == "empty_decisions":
        return edited("t2.%s..%s" % (h, m.group(3)))
    if how == "t1":
        return edited("t1.%s.%s" % (h, dec))
    if how == "bad_sum":
        return edited(tok[:-8] + "%08x" % ((int(tok[-8:], 16) + 1) & 0xffffffff))
    # re-summed edits: the checksum is right, the decoder must judge the rest
    if how == "resum_append":
        return with_sum(h, dec + rng.choice(["1", "2", "y", "z23z", "-4-"])), "any"
    if how == "resum_truncate":
        return with_sum(h, dec[:rng.randint(0, max(0, len(dec) - 1))]), "any"
    if how == "resum_noncanon" and runs:
        # a run of 4+ zeros written as single digits, or with a leading zero:
        # decodes to the same schedule but is not the encoder's spelling
        r = rng.choice(runs)
        n = int(r.group(1), 16)
        alt = "0" * n if n <= 64 else "-0%s-" % r.group(1)
        return with_sum(h, dec[:r.start()] + alt + dec[r.end():]), "error"
    if how == "resum_huge_run":
        return with_sum(h, dec + "-5f5e101-"), "error"         # past TOKEN_MAX_RUN
    if how == "resum_other_hash":
        return with_sum("%08x" % ((int(h, 16) ^ 1)), dec), "error"
    return tok, "same"


def make_config(cat, seed, index):
    return Gen(cat, seed, index).config()


# ---------------------------------------------------------------------------
# argv and the validity model ("meta") of a configuration.
# ---------------------------------------------------------------------------

def cfg_dir(cfg, opts):
    """The configuration's own directory (its --trace files live there, so
    that a leftover temporary file is seen whatever else runs in parallel)."""
    return os.path.join(opts["scratch"], "c%d" % cfg["index"])


def trace_path(cfg, opts):
    d = cfg_dir(cfg, opts)
    i = cfg["index"]
    kinds = {
        "normal": os.path.join(d, "t%d.json" % i),
        "dir": d,
        "nonexistent": "/nonexistent/dir/t%d.json" % i,
        "empty": "",
        # valid UTF-8 that makes the command line cross 1023 bytes inside
        # the run of two-byte characters
        "long_utf8": d + "/." * 400 + "/t%d-" % i + "\u00e9" * 120 + ".json",
        # NAME_MAX (255 bytes): the temporary file must fit next to it
        "long_name": os.path.join(d, "a" * 250 + ".json"),
        "too_long_name": os.path.join(d, "a" * 256 + ".json"),
        "nonutf8": os.path.join(d, "t%d-\udcff.json" % i),
        "dash": "-",
        "newline": os.path.join(d, "t%d\n.json" % i),
    }
    return kinds


def argv_of(cfg, opts):
    if cfg["cmd"] in ("other", "replay"):
        base = [] if cfg["cmd"] == "other" else ["check"]
        return base + [t for g in cfg["groups"] for t in g["t"]]
    out = [cfg["cmd"]]
    for g in cfg["groups"]:
        if g["k"] == "trace":
            p = trace_path(cfg, opts)[g["trace"]]
            out += ["--trace", p]
        else:
            out += g["t"]
    return out


def fsbytes(s):
    return os.fsencode(s)


def c_int(s, lo, hi):
    """Model of parse_uint (src/cli/options.c): decimal digits only (no sign,
    no spaces; leading zeros are fine), lo..hi. Returns ('ok', v) or
    ('bad', why); ('noncanon', v) for a sign or leading whitespace before
    digits, which is invalid as well (kept apart to name it)."""
    if any(ord(c) > 127 for c in s):
        return "bad", "non-ASCII integer"
    if re.fullmatch(r"[ \t\n\v\f\r]*\+?[0-9]+", s) and not re.fullmatch(r"[0-9]+", s):
        return "noncanon", int(s.strip().lstrip("+"))
    if not re.fullmatch(r"[0-9]+", s):
        return "bad", "not an integer"
    v = int(s)
    if v < lo or v > hi:
        return "bad", "out of range"
    return "ok", v


def c_u64(s):
    """parse_u64: first char a digit, strtoull whole string, no ERANGE."""
    if not s or not ("0" <= s[0] <= "9") or not re.fullmatch(r"[0-9]+", s):
        return None
    v = int(s)
    return v if v < 2**64 else None


def c_size(s):
    """parse_size (src/workload/registry.c)."""
    m = re.fullmatch(r"([0-9]+)(.*)", s, re.S)
    if not m or any(ord(c) > 127 for c in s):
        return None
    v = int(m.group(1))
    if v >= 2**64:
        return None
    rest = m.group(2)
    shift = 0
    if rest:
        sh = {"K": 10, "M": 20, "G": 30, "T": 40}.get(rest[0].upper())
        if sh is None:
            return None
        shift = sh
        rest = rest[1:]
        if rest in ("", "iB", "B"):
            rest = ""
    if rest:
        return None
    if shift and v > ((2**64 - 1) >> shift):
        return None
    return v << shift


def c_seconds(s):
    """parse_seconds_ns (options.c): digits[.1-9 digits], in ns; None if bad."""
    m = re.fullmatch(r"([0-9]+)(?:\.([0-9]{1,9}))?", s)
    if not m:
        return None
    whole = m.group(1)
    # the parser gives up past 7 digits of whole seconds
    if len(whole.lstrip("0")) > 7:
        return None
    frac = (m.group(2) or "").ljust(9, "0")
    return int(whole) * 10**9 + int(frac)


def kv_split(s, klen, vlen):
    """split_kv: NAME=VALUE with len(NAME) < klen, 0 < len(VALUE) < vlen (bytes)."""
    if "=" not in s:
        return None
    k, v = s.split("=", 1)
    if not k or len(fsbytes(k)) >= klen or not v or len(fsbytes(v)) >= vlen:
        return None
    return k, v


def policy_kvs(v, knobs):
    """set_policies: 'K=V[,K=V...]' (under 256 bytes; an empty item or a
    knob twice is refused); a list of (K, V), or None when invalid."""
    if len(fsbytes(v)) >= 256:
        return None
    out = []
    for item in v.split(","):
        if not item:
            return None
        kv = kv_split(item, 64, 96)
        if not kv or kv[0] not in knobs or kv[1] not in knobs[kv[0]]:
            return None
        if any(k == kv[0] for k, _ in out):
            return None
        out.append(kv)
    return out or None


def param_ok(name, unit, x):
    """tlbsim_resolve's param_check: None, or why the value is refused."""
    if unit == "bool" and x > 1:
        return "bool"
    if unit == "ns" and x > 1000000000:
        return "absurd (more than 1 s)"
    if name in ("tlb_sets", "wc_sets") and (x < 1 or x > 65536 or x & (x - 1)):
        return "sets"
    if name in ("tlb_ways", "wc_ways") and (x < 1 or x > 64):
        return "ways"
    if name == "livelock_faults" and (x < 2 or x > 100000000):
        return "livelock"
    if name in ("dirty_ratio", "dirty_background_ratio", "dvm_occupancy_pct") and x > 100:
        return "percent"
    if name == "ram_mb" and (x < 1 or x > 2**30):
        return "ram_mb"
    if name == "fault_around_bytes" and x > 2**30:
        return "fault_around_bytes"
    if name == "writeback_bw_mbs" and (x < 1 or x > 1000000):
        return "writeback_bw_mbs"
    if name == "flush_ceiling" and x > 2**36:
        return "flush_ceiling"
    if name == "jitter" and x > 50:
        return "jitter"
    if name == "asid_bits" and (x < 2 or x > 16):
        return "asid_bits"
    if name == "kasan_slowdown" and (x < 1 or x > 100):
        return "kasan_slowdown"
    if name == "watchdog_thresh_s" and x > 60:
        return "watchdog_thresh_s"
    if name == "global_asids" and x > 65000:
        return "global_asids"
    return None


def c_milli(s):
    """parse_milli (src/workload/kbuild.c): digits[.1-3 digits] in
    thousandths; None if malformed."""
    m = re.fullmatch(r"([0-9]+)(?:\.([0-9]{1,3}))?", s)
    if not m:
        return None
    return int(m.group(1)) * 1000 + int((m.group(2) or "").ljust(3, "0"))


def u64_in(v, lo, hi):
    x = c_u64(v)
    return x is not None and lo <= x <= hi


def vmtest_ops(wp, cpus, page):
    """test_vmalloc's work, in area operations of all threads (vmtest.c)."""
    try:
        mask = int(wp.get("run_test_mask", "1"))
        loops = int(wp.get("test_loop_count", "10000"))
        nr_pages = int(wp.get("nr_pages", "1"))
        threads = int(wp.get("nr_threads", "0")) or cpus
    except ValueError:
        return 0
    per = 0
    if mask & 1:
        per += loops * (1 + nr_pages // 8)
    if mask & 2:
        per += 2 * cpus.bit_length() * ((32 << 20) // page) + loops
    if mask & 4:
        per += 15000 + 13 * loops
    per += loops * (7 * bool(mask & 8) + bool(mask & 16) + bool(mask & 32)) + 64 * bool(mask & 64)
    return per * threads


def meta_of(cfg, cat):
    """What the configuration asks for and whether the documentation says it
    is valid. expect: 'ok' (exit 0; check 0 or 1), 'error' (exit 2) or 'unk'."""
    cmd = cfg["cmd"]
    M = {"cmd": cmd, "bad": [], "noncanon": [], "unk": [], "json": False, "workload": None,
         "cpus": None, "threads": None, "iters": None, "seed": None, "profile": None,
         "policy": {}, "policies": [], "wparams": {}, "overrides": {}, "help": False,
         "trace": None, "runs": None, "tlimit": None, "replay": None, "hazard": [],
         "duration": None, "fov": False, "nomin": False, "partial_run": False,
         "maxmem": None}
    if cmd == "other":
        M["expect"] = cfg["expect_other"]
        if cfg.get("note_other"):
            M["bad"].append(cfg["note_other"])
        return M
    if cmd == "replay":
        toks = cfg["groups"][0]["t"]
        M["expect"] = "unk"
        M["json"] = "--json" in toks
        M["workload"] = toks[0]
        M["nomin"] = "--no-minimise" in toks
        for i, t in enumerate(toks[:-1]):
            if t == "--policy":
                for kk, vv in policy_kvs(toks[i + 1], cat["knobs"]) or []:
                    M["policy"][kk] = vv
            elif t == "--seed":
                M["seed"] = int(toks[i + 1])
        return M
    bad, unk = M["bad"], M["unk"]
    wnames = set()
    dnames = set()
    knobs = cat["knobs"]
    for g in cfg["groups"]:
        k, v = g["k"], g.get("v")
        if k == "raw_opts":
            # a fixed, valid option list (run_time_limit)
            M["partial_run"] = True
            M["json"] = "--json" in g["t"]
            toks = g["t"]
            for i, t in enumerate(toks):
                if t == "--policy":
                    kvs = policy_kvs(toks[i + 1], knobs)
                    M["policies"].append(kvs)
                    for kk, vv in kvs:
                        M["policy"][kk] = vv
            continue
        if k == "wl":
            if M["workload"] is not None:
                bad.append("two workloads")
            M["workload"] = v
        elif k == "profile":
            M["profile"] = v
        elif k == "tlimit":
            # cli_parse_time_limit: parse_seconds_ns, 1 ms .. 86400 s
            ns = c_seconds(v)
            if ns is None or ns < 10**6 or ns > 86400 * 10**9:
                bad.append("--time-limit %r" % v)
            else:
                M["tlimit"] = ns / 1e9
        elif k in ("cpus", "threads", "iters", "seed", "runs", "depth", "maxsteps"):
            lo, hi = {"cpus": (1, 1024), "threads": (1, 4096), "iters": (1, 1000000000),
                      "seed": (0, INT64_MAX), "runs": (1, 1000000000),
                      "depth": (1, 16), "maxsteps": (100, 1000000000)}[k]
            st, x = c_int(v, lo, hi)
            if st == "bad":
                bad.append("--%s %r: %s" % (k, v, x))
            elif st == "noncanon":
                M["noncanon"].append("--%s %r" % (k, v))
            else:
                M[k] = x
        elif k == "duration":
            ns = c_seconds(v)
            if cmd == "check":
                bad.append("--duration with check")
            elif ns is None or ns < 1000 or ns > 3600 * 10**9:
                bad.append("--duration %r" % v)
            else:
                M["duration"] = ns
        elif k == "maxmem":
            size = c_size(v)
            if size is None or size < (64 << 20) or size > (1 << 50):
                bad.append("--max-memory %r" % v)
            else:
                M["maxmem"] = size
        elif k == "fov":
            if cmd == "check":
                bad.append("--fail-on-violation with check")
            M["fov"] = True
        elif k == "json":
            M["json"] = True
        elif k == "help":
            M["help"] = True
        elif k == "policy":
            kvs = policy_kvs(v, knobs)
            if kvs is None:
                bad.append("--policy %r" % v)
                continue
            for kk, vv in kvs:
                M["policy"][kk] = vv
            M["policies"].append(kvs)
        elif k == "w":
            kv = kv_split(v, 48, 80)
            if not kv:
                bad.append("-w %r: not NAME=VALUE" % v)
                continue
            wnames.add(kv[0])
            M["wparams"][kv[0]] = kv[1]
        elif k == "D":
            kv = kv_split(v, 64, 96)
            if not kv or kv[0] not in cat["params"]:
                bad.append("-D %r" % v)
                continue
            st, x = c_int(kv[1], 0, INT64_MAX)
            if st == "bad":
                bad.append("-D %r: %s" % (v, x))
                continue
            if st == "noncanon":
                M["noncanon"].append("-D %r" % v)
                continue
            name = kv[0]
            dnames.add(name)
            M["overrides"][name] = x
        elif k == "strategy":
            if v not in ("random", "pct", "dfs"):
                bad.append("--strategy %r" % v)
        elif k == "invariant":
            if v not in ("I1", "I1-realized", "I2", "I3", "stale-walk", "livelock"):
                bad.append("--invariant %r" % v)
        elif k == "nomin":
            M["nomin"] = True
        elif k == "trace":
            M["trace"] = g["trace"]
            if g["trace"] in ("dir", "nonexistent", "empty", "too_long_name"):
                bad.append("--trace %s" % g["trace"])
            elif g["trace"] not in ("normal", "long_utf8", "long_name"):
                unk.append("odd --trace path")
        elif k == "replay":
            M["replay"] = v
            unk.append("--replay")
        elif k in ("unknown_opt", "missing_value"):
            bad.append("option %r" % " ".join(g["t"]))
        elif k == "extra_pos":
            bad.append("extra argument %r" % g["t"][0])
    # the values the run ends up with (a later -D of a name replaces it)
    dbad = []   # refused unless the value is the profile's arch's own (below)
    for name, x in M["overrides"].items():
        why = param_ok(name, cat["params"][name]["unit"], x)
        if why:
            dbad.append((name, x, why))
        if name == "rcu_grace_ns" and x >= 100000000:
            M["hazard"].append("mem: rcu_grace_ns=%d" % x)
    if M["help"]:
        M["expect"] = "unk"
        return M
    if M["workload"] is None:
        bad.append("no workload")
    wl = M["workload"]
    wdesc = cat["workloads"].get(wl)
    if wl is not None and wdesc is None:
        bad.append("unknown workload %r" % wl)
    # distinct names count against the limits (a repeated name replaces)
    if len(wnames) > (MAX_WPARAMS - (4 if cmd == "check" else 0)):
        bad.append("too many -w (%d)" % len(wnames))
    if len(dnames) > (MAX_OVERRIDES - (1 if cmd == "check" else 0)):
        bad.append("too many -D (%d)" % len(dnames))
    if cmd == "compare" and M["seed"] is not None and M["seed"] > INT64_MAX - 4:
        # compare runs seeds S..S+4 by default (the harness never gives --seeds)
        bad.append("compare --seed %d: the default 5 seeds pass INT64_MAX" % M["seed"])
    if cmd == "compare" and not M["partial_run"]:
        npol = len([g for g in cfg["groups"] if g["k"] == "policy"])
        if npol < 2:
            bad.append("compare with fewer than two --policy")
        if npol > MAX_COMPARE:
            bad.append("too many --policy (%d)" % npol)
    if M["replay"] is not None and not TOKEN_RE.fullmatch(M["replay"]):
        bad.append("--replay %r" % M["replay"])
    if wdesc:
        if M["threads"] is not None and wdesc.get("fixed"):
            bad.append("--threads with %s (fixed threads)" % wl)
        if M["duration"] is not None and not wdesc.get("timed"):
            bad.append("--duration with %s" % wl)
        if M["duration"] is not None and M["iters"] is not None:
            bad.append("--duration with --iters")
    prof = M["profile"]
    pinfo = None
    if prof is not None:
        pinfo = cat["profiles"].get(prof)
        if pinfo is None:
            bad.append("unknown profile %r" % prof)
    elif wdesc:
        pinfo = cat["profiles"].get(wdesc["profile"])
    # tlbsim_resolve takes a -D of the arch's own value (x86 asid_bits=0)
    for name, x, why in dbad:
        arch = pinfo.get("arch") if pinfo else None
        if arch in ("x86", "arm64") and cat["params"][name].get(arch) == x:
            continue
        bad.append("-D %s=%d: %s" % (name, x, why))
    if wdesc and pinfo:
        for name in M["wparams"]:
            if name not in wdesc["params"]:
                bad.append("-w %s: no such parameter of %s" % (name, wl))
        wp = dict(wdesc["params"])
        if cmd == "check":
            wp.update(wdesc.get("check_wparams", {}))
        wp.update(M["wparams"])
        page = pinfo["page"]
        cpus = M["cpus"] or (wdesc["check_cpus"] if cmd == "check" else pinfo["cpus"])
        tasks = M["threads"] or wdesc.get("threads") or cpus
        if "size" in wp:
            size = c_size(wp["size"])
            if wdesc.get("timed"):
                if size is None or size < page or size > 64 << 30:
                    bad.append("-w size=%r" % wp["size"])
                    size = None
                elif size * tasks > 256 << 20:
                    M["hazard"].append("time: will-it-scale size=%s x %d tasks" % (
                        wp["size"], tasks))
                    unk.append("big will-it-scale mapping")
            elif size is None or size == 0 or size > 2**40:
                bad.append("-w size=%r" % wp["size"])
                size = None
            elif size >= 2**30:
                unk.append("huge size")
                M["hazard"].append("mem: size=%s" % wp["size"])
            if size is not None and wl == "mmap5" and size // page > 256:
                M["hazard"].append("mem: mmap5 size=%s" % wp["size"])
            if size is not None and "touch" in wp:
                t = c_u64(wp["touch"])
                pages = (size + page - 1) // page
                if t is None or t > pages:
                    bad.append("-w touch=%r" % wp["touch"])
                elif t > 65536:
                    M["hazard"].append("mem: touch=%d" % t)
        if "map" in wp and wp["map"] not in ("shared", "private"):
            bad.append("-w map=%r" % wp["map"])
        if "loops" in wp:
            x = c_u64(wp["loops"])
            if x is None or x == 0 or x > 100000000:
                bad.append("-w loops=%r" % wp["loops"])
        if "advice" in wp and wp["advice"] not in ("dontneed", "free"):
            bad.append("-w advice=%r" % wp["advice"])
        if "writes" in wp:
            x = c_u64(wp["writes"])
            if x is None or x == 0 or x > (1000000 if wl == "madv_race" else 4096):
                bad.append("-w writes=%r" % wp["writes"])
        for n, lo, hi in (("pages", 1, 4096), ("flushes", 1, 4096), ("jobs", 0, 1000000),
                          ("ws_pages", 0, 1 << 20), ("procs", 1, 8), ("run_test_mask", 1, 127),
                          ("test_loop_count", 1, 100000000), ("nr_pages", 1, 65536),
                          ("nr_threads", 0, 16384), ("tries", 1, 100000)):
            if n in wp and not u64_in(wp[n], lo, hi):
                bad.append("-w %s=%r" % (n, wp[n]))
        if "zap" in wp and wp["zap"] not in ("munmap", "dontneed"):
            bad.append("-w zap=%r" % wp["zap"])
        if "kasan" in wp and wp["kasan"] not in ("on", "off"):
            bad.append("-w kasan=%r" % wp["kasan"])
        if "job_ms" in wp:
            x = c_milli(wp["job_ms"])
            if x is None or x < 1 or x > 600000000:
                bad.append("-w job_ms=%r" % wp["job_ms"])
        if "job_sigma" in wp:
            x = c_milli(wp["job_sigma"])
            if x is None or x > 3000:
                bad.append("-w job_sigma=%r" % wp["job_sigma"])
        if wl == "kbuild" and u64_in(wp.get("jobs", "0"), 0, 0):
            slots = M["threads"] or cpus
            its = M["iters"] or wdesc.get("check_iters" if cmd == "check" else "iters") or 1
            if its * slots > 1000000:
                bad.append("kbuild: --iters x slots > 1000000 jobs")
        if wl == "kbuild":
            jobs = c_u64(wp.get("jobs", "0")) or 0
            if not jobs:
                jobs = (M["iters"] or wdesc.get("check_iters" if cmd == "check" else "iters")
                        or 1) * (M["threads"] or cpus)
            ws = c_u64(wp.get("ws_pages", "256")) or 0
            procs = c_u64(wp.get("procs", "3")) or 1
            # every schedule of check runs the whole instance
            if jobs * procs * (ws + 50) > (2000 if cmd == "check" else 20000):
                M["hazard"].append("time: kbuild %d jobs x %d pages" % (jobs, ws))
        if wl == "test_vmalloc" and vmtest_ops(wp, cpus, page) > \
                (3000 if cmd == "check" else 100000):
            M["hazard"].append("time: test_vmalloc %d area operations" %
                               vmtest_ops(wp, cpus, page))
        if "mode" in wp and wp["mode"] not in ("processes", "threads"):
            bad.append("-w mode=%r" % wp["mode"])
        if "fs" in wp and wp["fs"] not in ("ext4", "tmpfs"):
            bad.append("-w fs=%r" % wp["fs"])
        if (wdesc.get("timed") or wl in ("ebizzy", "mprotect_storm")) and \
                M["overrides"].get("sched_slice_ns") == 0 and tasks > cpus:
            # tasks that loop until all have run: a queued one never would
            bad.append("sched_slice_ns=0 with %d tasks on %d CPUs" % (tasks, cpus))
        elif (wdesc.get("timed") or wl in ("ebizzy", "mprotect_storm")) and \
                cmd in ("check", "replay") and tasks > cpus:
            # check mode has no time slices at all (window_need_slices)
            bad.append("check: %d tasks on %d CPUs of a timed workload" % (tasks, cpus))
        # compare runs every column under its 5 default seeds: that many
        # runs of the workload in one command
        runs = 5 * max(len(M["policies"]), 1) if cmd == "compare" else 1
        if wdesc.get("timed") and cmd != "check" and M["duration"] is None and \
                (M["iters"] or 1) * tasks * runs > 64:
            M["hazard"].append("time: will-it-scale %d tasks x %d runs" % (tasks, runs))
        elif wdesc.get("timed") and cmd != "check" and \
                tasks > cpus and (M["iters"] or 1) * tasks * runs * tasks // cpus > 64:
            # more tasks than CPUs: each task keeps looping over its pages
            # until the others have had their turn, so the work grows with
            # tasks / cpus too (config 22764: 16 tasks x 3 rounds on 2 CPUs,
            # 546 K ops, 0.6 s release, past the 20 s cap under ASan). That
            # wait comes before the measured window, so --duration does not
            # bound it (config 46970: a 4-column compare of 8 tasks on 2 CPUs
            # for 0.5 ms, 0.18 s per run at any duration, 20 runs, 3.6 s of
            # release CPU, past the cap under ASan)
            M["hazard"].append("time: will-it-scale %d tasks on %d CPUs x %d runs" % (
                tasks, cpus, runs))
        if wl == "mmap8" and cmd != "check":
            # every iteration of every thread faults `touch` pages in, and
            # costs about two more of them (mmap, madvise, munmap): ASan
            # does ~150 K such pages/s (config 9700, a 4-column compare of
            # touch=4096: 20 runs, 6.5 M pages, past the 20 s cap)
            t = c_u64(wp.get("touch", "1"))
            its = M["iters"] or wdesc.get("iters") or 1
            if t is not None and (t + 2) * tasks * its * runs > 1000000:
                M["hazard"].append("time: mmap8 touch=%d x %d threads x %d iters x %d runs" % (
                    t, tasks, its, runs))
        # not tlbi_recv_ns: its receivers hold up the issuing CPU's DSB, so a
        # long one slows every task alike (configs 66852, 87815: it used to
        # starve one task and the run never ended)
        big = [n for n, x in M["overrides"].items()
               if cat["params"][n]["unit"] == "ns" and x >= 1000000 and n != "tlbi_recv_ns"]
        if wdesc.get("timed") and cmd != "check" and big:
            # a task delayed by a long cost (thread creation, a context
            # switch, a wake-up) keeps the others looping until it finished
            # its first round: simulated milliseconds of work per millisecond
            M["hazard"].append("time: will-it-scale with -D %s=%d" % (
                big[0], M["overrides"][big[0]]))
        # host-memory guard of tlbsim_resolve: cpus x cache entries <= 2^26
        arch = pinfo["arch"]
        p = {n: d["x86" if arch == "x86" else "arm64"] for n, d in cat["params"].items()}
        p.update(M["overrides"])
        try:
            entries = cpus * (p["tlb_sets"] * p["tlb_ways"] + p["wc_sets"] * p["wc_ways"])
            # a leaf TLB's counting filter: at most 2^21 entries (config
            # 61889, 65536 x 64 on 2 CPUs, failed as "out of memory", exit 3)
            if p["tlb_sets"] * p["tlb_ways"] > 2**21:
                bad.append("tlb_sets x tlb_ways %d > 2^21" % (p["tlb_sets"] * p["tlb_ways"]))
            if entries > 2**26:
                bad.append("cache entries %d > 2^26" % entries)
            elif entries > 2**22:
                M["hazard"].append("cache entries %d" % entries)
        except KeyError:
            pass
        # the arm64 ASID allocator wants more user ASIDs than CPUs
        bits = p.get("asid_bits")
        if arch == "arm64" and bits is not None and 2 <= bits <= 16 and \
                (1 << (bits - (1 if p.get("kpti") else 0))) - 1 <= cpus:
            bad.append("asid_bits=%d: too few ASIDs for %d CPUs" % (bits, cpus))
        if M["maxmem"] is not None and M["maxmem"] < (1 << 30):
            # a small --max-memory may refuse a configuration up front (exit 2,
            # "needs about N MiB") or stop it while it runs (exit 3)
            unk.append("small --max-memory")
    if bad:
        M["expect"] = "error"
    elif M["noncanon"]:
        M["expect"] = "error"       # documented as digits only
    elif unk:
        M["expect"] = "unk"
    else:
        M["expect"] = "ok"
    return M


# ---------------------------------------------------------------------------
# Evaluation of one run's results.
# ---------------------------------------------------------------------------

SAN_PATTERNS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                "AddressSanitizer:", "LeakSanitizer", "UndefinedBehaviorSanitizer",
                "WARNING: AddressSanitizer")


def norm(s):
    s = re.sub(r"'[^']*'", "'…'", s)
    s = re.sub(r"0x[0-9a-fA-F]+", "H", s)
    s = re.sub(r"[0-9]+", "N", s)
    return s[:160]


def first_src_frame(err):
    for line in err.splitlines():
        m = re.match(r"\s+#\d+ 0x[0-9a-f]+ in (\S+) (\S+)", line)
        if not m:
            continue
        fn, loc = m.group(1), m.group(2)
        if "libsanitizer" in loc or fn.startswith("__interceptor") or "/src/" not in loc:
            continue
        loc = re.sub(r"^.*/src/", "src/", loc)
        loc = re.sub(r":\d+$", "", loc) if loc.count(":") > 1 else loc
        return "%s %s" % (fn, loc)
    return "?"


def sanitizer_signature(err):
    if "hard rss limit exhausted" in err:
        return None
    m = re.search(r"ERROR: AddressSanitizer: ([\w-]+)", err)
    if m:
        return "AddressSanitizer %s in %s" % (m.group(1), first_src_frame(err))
    if "ERROR: LeakSanitizer" in err:
        return "LeakSanitizer leak allocated in %s" % first_src_frame(err)
    m = re.search(r"(\S+?):(\d+):\d+: runtime error: (.*)", err)
    if m:
        loc = re.sub(r"^.*/src/", "src/", m.group(1))
        return "UBSan at %s:%s: %s" % (loc, m.group(2), norm(m.group(3))[:80])
    for p in SAN_PATTERNS:
        if p in err:
            line = [l for l in err.splitlines() if p in l][0]
            return "sanitizer: %s" % norm(line)[:100]
    return None


def sanitizer_excerpt(err, n=12):
    # pids and ASLR addresses would make the summary differ from run to run
    err = re.sub(r"==\d+==", "==PID==", err)
    err = re.sub(r"#(\d+) 0x[0-9a-f]+ in ", r"#\1 in ", err)
    err = re.sub(r"(address|at pc|bp|sp) 0x[0-9a-f]+", r"\1 0x...", err)
    lines = err.splitlines()
    for i, l in enumerate(lines):
        if any(p in l for p in SAN_PATTERNS):
            keep = [x for x in lines[max(0, i - 1):] if not re.match(r"\s+0x[0-9a-f]+-0x", x)]
            return "\n".join(keep[:n])
    return "\n".join(lines[:n])


def has_bad_control(b):
    body = b[:-1] if b.endswith(b"\n") else b
    return any((c < 0x20 and c != 0x0a) or c == 0x7f for c in body) or b"\n" in body


def n_lines(b):
    if not b:
        return 0
    return b.count(b"\n") + (0 if b.endswith(b"\n") else 1)


def argv_flags(argv):
    tags = []
    bs = [fsbytes(a) for a in argv]
    if any(b"\n" in b or b"\r" in b for b in bs):
        tags.append("argv has a newline/CR")
    if any(any(c < 0x20 or c == 0x7f for c in b) for b in bs):
        tags.append("argv has control characters")
    for b in bs:
        try:
            b.decode("utf-8")
        except UnicodeDecodeError:
            tags.append("argv has non-UTF-8 bytes")
            break
    return tags


def parse_json_strict(out):
    """(obj, None) or (None, why). Exactly one document followed by '\\n';
    UTF-8; duplicate object keys are reported."""
    dups = []

    def hook(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                dups.append(k)
            seen.add(k)
        return dict(pairs)
    try:
        txt = out.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, "stdout is not UTF-8 (%s)" % e.reason
    if not txt.endswith("\n"):
        return None, "JSON output does not end in a newline"
    try:
        obj = json.loads(txt, object_pairs_hook=hook)
    except json.JSONDecodeError as e:
        return None, "stdout is not JSON: %s" % e.msg
    if txt.count("\n") != 1 and not txt.startswith('{"runs":'):
        pass    # compare prints one run per line; run and check print one line
    if dups:
        return obj, "duplicate JSON keys: %s" % ",".join(sorted(set(dups)))
    return obj, None


def mask_timing(out):
    out = re.sub(rb"in [0-9]+\.[0-9]+ s( \([0-9]+ schedules/s, [0-9]+ steps/s\))?",
                 b"in T s", out)
    # run/compare tables: "# simulated times (...); host S s" (the first line)
    out = re.sub(rb"^(# simulated times [^\n]*; host )[0-9]+\.[0-9]+ s$", rb"\1S s", out,
                 flags=re.M)
    return out


def utf8_replace(b):
    """What json_string (src/out/out.c) makes of bytes: valid UTF-8 as is,
    every other byte U+FFFD."""
    out = []
    i = 0
    while i < len(b):
        c = b[i]
        n = 1 if c < 0x80 else 2 if 0xc2 <= c < 0xe0 else 3 if 0xe0 <= c < 0xf0 else \
            4 if 0xf0 <= c <= 0xf4 else 0
        if n:
            try:
                out.append(b[i:i + n].decode("utf-8"))
                i += n
                continue
            except UnicodeDecodeError:
                pass
        out.append("\ufffd")
        i += 1
    return "".join(out)


class Checker:
    def __init__(self, cfg, meta, argv, opts, cat):
        self.cfg, self.meta, self.argv, self.opts, self.cat = cfg, meta, argv, opts, cat
        self.failures = []
        self.leak_seen = False

    def run(self, argv, cmd, allow_exit1, runs):
        """Run argv and apply basic(). A leak report replaces the exit status
        (86) and loses buffered stdout, so after one the command is run again
        with detect_leaks=0 and that run is checked as well."""
        r = run_capped(argv, self.opts, self.opts["scratch"])
        runs.append(r)
        ok = self.basic(r, argv, cmd, allow_exit1)
        if not ok and self.leak_seen:
            self.leak_seen = False
            r = run_capped(argv, self.opts, self.opts["scratch"], leaks=False)
            runs.append(r)
            ok = self.basic(r, argv, cmd, allow_exit1)
        return r, ok

    def fail(self, sig, reason, argv=None, detail=""):
        self.failures.append({"sig": sig, "reason": reason,
                              "argv": list(argv if argv is not None else self.argv),
                              "detail": detail})

    def basic(self, r, argv, cmd, allow_exit1):
        """Checks every run must pass. Returns False if the run died."""
        err = r["err"].decode("utf-8", "replace")
        tags = argv_flags(argv)
        wl = self.meta.get("workload")
        where = "%s %s" % (cmd, wl if isinstance(wl, str) and len(wl) < 20 else "")
        if r["timeout"]:
            self.fail("timeout: %s" % where.strip(),
                      "killed after the %d s wall-time cap" % self.opts["timeout"], argv,
                      "\n".join(err.splitlines()[:5]))
            return False
        if "hard rss limit exhausted" in err or r["maxrss_kb"] > self.opts["mem_mb"] * 1024:
            self.fail("memory cap: %s" % where.strip(),
                      "peak RSS %d MB exceeds the %d MB cap" % (r["maxrss_kb"] // 1024,
                                                                self.opts["mem_mb"]), argv,
                      "\n".join(l for l in err.splitlines()[:3]))
            return False
        sig = sanitizer_signature(err)
        if sig:
            self.fail(sig, "sanitizer report on stderr (exit %d)" % r["rc"], argv,
                      sanitizer_excerpt(err))
            if sig.startswith("LeakSanitizer") and "ERROR: AddressSanitizer" not in err \
                    and "runtime error" not in err:
                self.leak_seen = True
            return False
        rc = r["rc"]
        if rc == 3 and self.meta.get("maxmem") and "out of host memory" in err and \
                "--max-memory" in err and n_lines(r["err"]) == 1 and not r["out"]:
            return True     # documented: a run that outgrows --max-memory stops with exit 3
        if rc < 0:
            signame = signal.Signals(-rc).name if -rc in signal.valid_signals() else str(-rc)
            self.fail("killed by %s: %s" % (signame, where.strip()), "terminated by %s" % signame,
                      argv, "\n".join(err.splitlines()[:8]))
            return False
        if rc not in (0, 1, 2) or (rc == 1 and not allow_exit1):
            first = err.splitlines()[0] if err.splitlines() else ""
            self.fail("exit %d: %s" % (rc, norm(first)), "exit status %d (allowed: 0, %s2)" % (
                rc, "1, " if allow_exit1 else ""), argv, "\n".join(err.splitlines()[:8]))
            return False
        if rc == 2:
            if r["out"]:
                self.fail("exit 2 with output on stdout", "stdout not empty on exit 2", argv,
                          r["out"][:300].decode("utf-8", "replace"))
            nl = n_lines(r["err"])
            if nl != 1 or not err.strip():
                why = "; ".join(t for t in tags if "newline" in t) or norm(
                    err.splitlines()[0] if err.splitlines() else "(empty)")[:60]
                self.fail("exit 2 with %s stderr lines (%s)" % ("0" if nl == 0 else
                                                                 "1" if nl == 1 else "several",
                                                                 why),
                          "exit 2 must print exactly one line on stderr, got %d" % nl, argv,
                          "\n".join(err.splitlines()[:6]))
        if has_bad_control(r["err"]) and n_lines(r["err"]) <= 1:
            self.fail("stderr echoes raw control characters",
                      "stderr contains raw control characters: %r" % r["err"][:200], argv)
        return True

    def check_main(self, r):
        cfg, meta, argv = self.cfg, self.meta, self.argv
        cmd = cfg["cmd"]
        subcmd = argv[0] if argv else ""
        is_check = cmd in ("check", "replay") or (cmd == "other" and subcmd == "check")
        # run/compare exit 1 only with --fail-on-violation (checked below)
        if not self.basic(r, argv, cmd, is_check or meta.get("fov")):
            return
        rc = r["rc"]
        err = r["err"].decode("utf-8", "replace")
        exp = meta["expect"]
        if exp == "error" and rc in (0, 1):
            if meta["bad"]:
                what = meta["bad"][0]
                cls = re.sub(r"'.*", "", what).strip().rstrip(":")
                self.fail("invalid input accepted: %s" % norm(cls)[:60],
                          "documented as invalid (%s) but exit %d" % ("; ".join(meta["bad"]), rc))
            elif meta["noncanon"]:
                self.fail("integer with leading whitespace or '+' accepted",
                          "accepted %s (exit %d)" % (", ".join(meta["noncanon"]), rc))
            else:
                self.fail("invalid input accepted: %s" % cmd, "exit %d, expected 2" % rc)
        if exp == "ok" and rc == 2:
            self.fail("valid input rejected: %s" % norm(err.strip())[:80],
                      "a documented-valid configuration exited 2: %s" % err.strip()[:300])
        if cmd in ("run", "compare") and rc in (0, 1):
            # --fail-on-violation: exit 1 exactly when a run saw a violation
            # (each such run has a "tlbsim: note: run|column N saw" line)
            saw = re.search(r"^tlbsim: note: (run|column) [0-9]+( \(.*\))? saw [0-9]+ invariant", err, re.M)
            if meta.get("fov") and (rc == 1) != bool(saw):
                self.fail("--fail-on-violation exit status does not match the runs",
                          "exit %d, %s" % (rc, "a run saw a violation" if saw else
                                           "no run saw a violation"))
        # stderr hygiene on success
        if rc in (0, 1) and r["err"]:
            lines = err.splitlines()
            if cmd in ("run", "compare"):
                extra = [l for l in lines if not re.match(
                    r"tlbsim: note: ((run|column) [0-9]+( \(.*\))? saw |stopped early \()", l)]
            elif cmd == "check" and meta["trace"] == "dash":
                # --trace - writes the trace to stdout and moves the human
                # report to stderr (docs/checker.md; config 150740)
                extra = []
            else:
                extra = lines
            if extra:
                self.fail("unexpected stderr on exit %d: %s" % (rc, cmd),
                          "stderr on success: %r" % extra[0][:200])
        if meta.get("partial_run") and rc == 0:
            if not re.search(r"^tlbsim: note: stopped early \(time limit\)", err, re.M):
                self.fail("run stopped by --time-limit without the note on stderr",
                          "stderr: %r" % err[:200])
        if cmd == "other":
            if rc == 0 and not r["out"]:
                self.fail("exit 0 without output: %s" % " ".join(argv[:1]), "empty stdout")
            return
        if rc not in (0, 1) or meta["help"]:
            return
        if meta["json"] and cmd != "replay":
            self.check_json(r["out"], rc)
        elif cmd == "compare" and rc == 0:
            self.check_compare_table(r["out"])
        if cmd == "check" and meta["trace"] in ("normal", "long_utf8", "long_name"):
            self.check_trace_file(meta["trace"], rc)
        if cmd == "check":
            self.check_no_tmp_left()

    def check_json(self, out, rc, argv=None):
        argv = argv if argv is not None else self.argv
        tags = argv_flags(argv)
        obj, why = parse_json_strict(out)
        if obj is None:
            self.fail("invalid JSON on stdout (%s)" % ("; ".join(tags) or
                                                        "argv is plain"),
                      why, argv, out[:200].decode("utf-8", "replace"))
            return None
        if why:
            self.fail("JSON object with duplicate keys", why, argv)
        cmd = self.cfg["cmd"]
        meta = self.meta
        # the whole command line; bytes that are not UTF-8 become U+FFFD
        want_cmd = utf8_replace(fsbytes("tlbsim " + " ".join(argv)))
        if isinstance(obj, dict) and "command" in obj:
            got = obj["command"]
            wb = want_cmd.encode("utf-8")
            if got != want_cmd:
                gb = got.encode("utf-8", "surrogateescape") if isinstance(got, str) else b""
                if len(gb) < len(wb) and wb.startswith(gb):
                    self.fail("JSON \"command\" truncated",
                              "command is %d bytes, JSON has %d" % (len(wb), len(gb)), argv)
                else:
                    self.fail("JSON \"command\" differs from the command line",
                              "got %r, want %r" % (got[:200], want_cmd[:200]), argv)
        if cmd in ("run", "compare"):
            runs = [obj] if cmd == "run" else (obj.get("runs") if isinstance(obj, dict) else None)
            if not isinstance(runs, list):
                self.fail("compare JSON without a runs array", "no runs array", argv)
                return obj
            npol = len(meta["policies"])
            if cmd == "compare" and (len(runs) > npol or (len(runs) < npol and not (
                    runs and isinstance(runs[-1], dict) and runs[-1].get("partial")))):
                # a column stopped early ends the table (later ones never ran)
                self.fail("compare JSON has the wrong number of runs",
                          "%d runs for %d --policy" % (len(runs), npol), argv)
            for i, ro in enumerate(runs):
                self.check_run_obj(ro, i, argv)
        elif cmd in ("check", "replay"):
            self.check_check_obj(obj, rc, argv)
        return obj

    def check_run_obj(self, ro, i, argv):
        meta = self.meta
        try:
            m = ro["metrics"]
            if ro.get("seeds", 1) > 1:
                # means are rounded: the identity holds seed by seed
                st = ro["stats"]
                per = [dict((k, st[k]["values"][j]) for k in
                            ("user_ns", "sys_ns", "idle_ns", "wall_ns"))
                       for j in range(len(st["wall_ns"]["values"]))]
            else:
                per = [m]
        except (KeyError, TypeError, IndexError) as e:
            self.fail("run JSON misses a documented key", "missing %s in run %d" % (e, i), argv)
            return
        for pm in per:
            lhs = pm["user_ns"] + pm["sys_ns"] + pm["idle_ns"]
            rhs = pm["wall_ns"] * ro["cpus"]
            if lhs == rhs:
                continue
            over = lhs - rhs
            self.fail("time identity user+sys+idle != wall*cpus (%s)" % (
                "sum too large" if over > 0 else "sum too small"),
                "run %d: user %d + sys %d + idle %d = %d, wall %d x %d cpus = %d (diff %+d)" % (
                    i, pm["user_ns"], pm["sys_ns"], pm["idle_ns"], lhs, pm["wall_ns"], ro["cpus"],
                    rhs, over), argv)
            break
        for key in ("tool", "version", "command", "workload", "params", "profile", "arch",
                    "page_size", "cpus", "threads", "iters", "seed", "policy", "overrides",
                    "first_violation", "partial", "metrics"):
            if key not in ro:
                self.fail("run JSON misses a documented key", "missing %r" % key, argv)
        for key in ("wall_ns", "user_ns", "sys_ns", "idle_ns", "ops", "page_faults",
                    "tlb_misses", "page_walks", "gathers", "nested_finishes", "ipi_sent",
                    "ipi_received", "flush_local_pages", "flush_full", "dvm_wait_ns",
                    "lock_wait_ns", "violations", "events", "tables_freed", "pages_freed",
                    "tlbi"):
            if key not in m:
                self.fail("run JSON misses a documented key", "missing metrics.%s" % key, argv)
        if meta.get("partial_run"):
            if ro.get("partial") not in ("time limit", None) or (
                    ro.get("partial") is None and i == 0 and self.cfg["cmd"] == "run"):
                self.fail("run stopped by --time-limit not marked partial",
                          "partial %r" % ro.get("partial"), argv)
        elif ro.get("partial") is not None:
            self.fail("run marked partial without a reason", "partial %r" % ro.get("partial"),
                      argv)
        if (ro.get("first_violation") is None) != (m.get("violations") == 0):
            self.fail("first_violation does not match metrics.violations",
                      "first_violation %r, violations %r" % (
                          str(ro.get("first_violation"))[:80], m.get("violations")), argv)
        bad = []
        if ro.get("workload") != meta["workload"]:
            bad.append("workload %r != %r" % (ro.get("workload"), meta["workload"]))
        if meta["cpus"] is not None and ro.get("cpus") != meta["cpus"]:
            bad.append("cpus %r != %r" % (ro.get("cpus"), meta["cpus"]))
        if meta["threads"] is not None and ro.get("threads") != meta["threads"]:
            bad.append("threads %r != %r" % (ro.get("threads"), meta["threads"]))
        if meta["iters"] is not None and ro.get("iters") != meta["iters"]:
            bad.append("iters %r != %r" % (ro.get("iters"), meta["iters"]))
        if ro.get("seed") != (meta["seed"] if meta["seed"] is not None else 1):
            bad.append("seed %r != %r" % (ro.get("seed"), meta["seed"]))
        if meta["profile"] is not None and ro.get("profile") != meta["profile"]:
            bad.append("profile %r != %r" % (ro.get("profile"), meta["profile"]))
        if meta["duration"] is not None and ro.get("duration_ns") != meta["duration"]:
            bad.append("duration_ns %r != %r" % (ro.get("duration_ns"), meta["duration"]))
        pol = ro.get("policy") or {}
        if self.cfg["cmd"] == "run":
            want = self.full_policy(meta["policy"])
        else:
            want = self.full_policy(dict(meta["policies"][i])) if i < len(meta["policies"]) \
                else {}
        for k, v in want.items():
            if pol.get(k) != v:
                bad.append("policy %s=%r, want %r" % (k, pol.get(k), v))
        params = ro.get("params") or {}
        for k, v in meta["wparams"].items():
            if params.get(k) != v:
                bad.append("params %s=%r, asked %r" % (k, params.get(k), v))
        ov = ro.get("overrides") or {}
        for k, v in meta["overrides"].items():
            if ov.get(k) != v:
                bad.append("overrides %s=%r, asked %r" % (k, ov.get(k), v))
        if bad:
            self.fail("run JSON does not echo the configuration (%s)" % re.sub(
                r"[ =].*", "", bad[0]), "; ".join(bad), argv)

    def default_knob(self, k):
        return self.opts.get("knob_defaults", {}).get(k)

    def full_policy(self, given):
        """Every knob of a run: the defaults, the workload's own kernel
        defaults (`kernel:` in tlbsim list workloads) for knobs not given, and
        the knobs given."""
        d = dict(self.opts.get("knob_defaults", {}))
        wdesc = self.cat["workloads"].get(self.meta.get("workload") or "", {})
        d.update(wdesc.get("default_policy", {}))
        d.update(given)
        return d

    def check_check_obj(self, obj, rc, argv):
        if not isinstance(obj, dict) or "violation" not in obj:
            self.fail("check JSON misses a documented key", "no 'violation' key", argv)
            return
        v = obj["violation"]
        if (v is None) != (rc == 0):
            self.fail("check JSON violation does not match the exit status",
                      "exit %d with violation %s" % (rc, "null" if v is None else "set"), argv)
        for key in ("tool", "version", "command", "workload", "profile", "cpus", "iters",
                    "seed", "policy", "schedules", "steps", "exhausted"):
            if key not in obj:
                self.fail("check JSON misses a documented key", "missing %r" % key, argv)
        for key in ("cut_schedules", "max_steps", "stopped"):
            if key not in obj:
                self.fail("check JSON misses a documented key", "missing %r" % key, argv)
        if isinstance(v, dict):
            for key in ("invariant", "cpu", "va", "frame", "text", "entry", "flush",
                        "preemptions", "decisions", "minimised", "token", "replay", "trace"):
                if key not in v:
                    self.fail("check JSON misses a documented key", "violation.%s" % key, argv)
            tok = v.get("token", "")
            if tok is None:
                # only a schedule too long for a token (docs/checker.md)
                if v.get("replay") is not None or not isinstance(v.get("decisions"), int) or \
                        v["decisions"] < 10000:
                    self.fail("check JSON token null for a short schedule",
                              "token null, decisions %r, replay %r" % (
                                  v.get("decisions"), str(v.get("replay"))[:60]), argv)
            elif not TOKEN_RE.fullmatch(str(tok)):
                self.fail("check JSON token malformed", "token %r" % str(tok)[:200], argv)
            elif not str(v.get("replay", "")).endswith("--replay " + tok):
                self.fail("check JSON replay does not end in its token",
                          "replay %r" % str(v.get("replay"))[-120:], argv)
            mini = v.get("minimised")
            want = ("off",) if self.meta.get("nomin") or self.meta.get("replay") or \
                "--replay" in argv or "--no-minimise" in argv or "--no" in argv \
                else ("complete", "time limit", "signal")
            if mini not in want:
                self.fail("check JSON minimised is not what was asked",
                          "minimised %r, want one of %s" % (mini, want), argv)
        pol = obj.get("policy") or {}
        bad = ["policy %s=%r, want %r" % (k, pol.get(k), val)
               for k, val in self.full_policy(self.meta["policy"]).items()
               if pol.get(k) != val]
        if self.meta["seed"] is not None and obj.get("seed") != self.meta["seed"]:
            bad.append("seed %r != %r" % (obj.get("seed"), self.meta["seed"]))
        if self.meta["cpus"] is not None and obj.get("cpus") != self.meta["cpus"]:
            bad.append("cpus %r != %r" % (obj.get("cpus"), self.meta["cpus"]))
        if bad:
            self.fail("check JSON does not echo the configuration", "; ".join(bad), argv)

    def check_compare_table(self, out):
        """Column labels must tell the runs apart when the runs differ."""
        txt = out.decode("utf-8", "replace")
        hdr = [l for l in txt.splitlines() if l.startswith("metric")]
        if not hdr:
            self.fail("compare table without a header line", "no 'metric' line")
            return
        labels = hdr[0].split()[1:]
        if labels and labels[-1] == "ratio":
            labels = labels[:-1]
        pols = self.meta["policies"]
        # full policy of each column: defaults (the workload's own too) + its knobs
        full = [tuple(sorted(self.full_policy(dict(kvs)).items())) for kvs in pols]
        if len(labels) != len(pols):
            if not self.meta.get("partial_run"):
                self.fail("compare table has the wrong number of columns",
                          "%d labels for %d policies" % (len(labels), len(pols)))
            return
        # docs/output.md: a column is labelled by the knobs it sets
        # differently from the first column (the first by its values of
        # every knob some column changes): K=V[,K=V...]
        for i, (lab, f) in enumerate(zip(labels, full)):
            fd = dict(f)
            if lab == "(same)":
                if i == 0 or f != full[0]:
                    self.fail("compare column label does not match its policy",
                              "column %d labelled (same), policy %s, first %s" % (
                                  i + 1, fd, dict(full[0])))
                continue
            items = [x for x in lab.split(",") if x]
            # a label too long for the table ends with ",..." after its
            # last whole knob=value (out.c column_label)
            cut = bool(items) and items[-1] == "..."
            if cut:
                items = items[:-1]
            for item in items:
                k, _, v = item.partition("=")
                if fd.get(k) != v:
                    self.fail("compare column label does not match its policy",
                              "column %d labelled %s, policy %s" % (i + 1, lab, fd))
                    break
            if i > 0:
                first = dict(full[0])
                differ = {k for k in fd if fd[k] != first.get(k)}
                named = {x.partition("=")[0] for x in items}
                if differ and not differ <= named and not cut:
                    self.fail("compare column label misses a knob it changes",
                              "column %d labelled %s; differs from column 1 in %s" % (
                                  i + 1, lab, sorted(differ)))
        if len(set(full)) == len(full) and len(set(labels)) != len(labels):
            self.fail("compare column labels do not tell the runs apart",
                      "labels %s for policies %s" % (labels, pols))

    def check_trace_file(self, kind, rc):
        """After exit 1 the file is the counterexample's trace; after exit 0
        a trace with no events and a null token (docs/checker.md)."""
        path = trace_path(self.cfg, self.opts)[kind]
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            self.fail("--trace file missing after exit %d" % rc, "no file %s" % path)
            return
        try:
            obj = json.loads(data.decode("utf-8"))
            ev = obj.get("traceEvents")
            if not isinstance(ev, list):
                raise ValueError("no traceEvents array")
            other = obj.get("otherData") or {}
        except (ValueError, UnicodeDecodeError, AttributeError) as e:
            self.fail("--trace file is not valid trace JSON", str(e)[:200])
            return
        real = [e for e in ev if isinstance(e, dict) and e.get("ph") != "M"]
        if rc == 1 and not any("VIOLATION" in str(e.get("name", "")) for e in real):
            self.fail("--trace file of a violation has no violation event",
                      "%d events" % len(real))
        if rc == 0 and (real or other.get("token") is not None):
            self.fail("--trace file after exit 0 is not an empty trace",
                      "%d events, token %r" % (len(real), other.get("token")))

    def check_no_tmp_left(self):
        """Only the trace file itself may be left in the configuration's
        directory (the temporary file it is written through is renamed)."""
        d = cfg_dir(self.cfg, self.opts)
        kind = self.meta.get("trace")
        want = os.path.basename(trace_path(self.cfg, self.opts)[kind]) if kind else None
        try:
            names = os.listdir(d)
        except OSError:
            return
        for n in names:
            if n != want:
                self.fail("--trace left a file behind", "%r in the directory of %r" % (
                    n, want))


def violation_of(out):
    """(invariant, token) from check output (JSON or text)."""
    try:
        obj = json.loads(out.decode("utf-8"))
        v = obj.get("violation") or {}
        return v.get("invariant"), v.get("token")
    except (ValueError, UnicodeDecodeError, AttributeError):
        pass
    txt = out.decode("utf-8", "replace")
    m1 = re.search(r"^VIOLATION (\S+):", txt, re.M)
    m2 = re.search(r"^token: (t2\.\S+)", txt, re.M)
    return (m1.group(1) if m1 else None), (m2.group(1) if m2 else None)


def time_limited(out, is_json=True, runs=None):
    """True if the host clock may have shaped a check's result (then it
    depends on host speed and load): the search stopped at --time-limit
    without a violation (no violation, not exhausted, fewer schedules than
    --runs, default 100000), or minimisation stopped at the time limit."""
    runs = runs or 100000
    if not is_json:
        # the budget may also stop the schedule in progress
        if b"NOT fully minimised" in out or b"host-time budget" in out:
            return True
        m = re.search(rb"no violation: ([0-9]+) schedules", out)
        return bool(m) and b"exhausted" not in out and int(m.group(1)) < runs
    try:
        obj = json.loads(out.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return True
    v = obj.get("violation")
    if obj.get("stopped") in ("time limit", "signal"):
        return True
    if isinstance(v, dict):
        return v.get("minimised") in ("time limit", "signal")
    return not obj.get("exhausted") and obj.get("schedules", 0) < runs


def execute(cfg, opts, cat):
    """Run one configuration with all its checks. Returns a result dict."""
    d = cfg_dir(cfg, opts)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d, exist_ok=True)
    try:
        return execute1(cfg, opts, cat)
    finally:
        # the runs' --trace files are not needed afterwards
        shutil.rmtree(d, ignore_errors=True)


def execute1(cfg, opts, cat):
    meta = meta_of(cfg, cat)
    argv = argv_of(cfg, opts)
    ck = Checker(cfg, meta, argv, opts, cat)
    runs = []
    scratch = opts["scratch"]
    tp = trace_path(cfg, opts)[meta["trace"]] if meta.get("trace") in (
        "normal", "long_utf8", "long_name") else os.path.join(cfg_dir(cfg, opts), "none")
    if cfg["cmd"] == "replay":
        return execute_replay(cfg, opts, cat, meta, argv, ck)
    r = run_capped(argv, opts, scratch)
    runs.append(r)
    ck.check_main(r)
    if ck.leak_seen:
        ck.leak_seen = False
        r = run_capped(argv, opts, scratch, leaks=False)
        runs.append(r)
        ck.check_main(r)
    rc = r["rc"]
    cmd = cfg["cmd"]
    ok = rc in (0, 1) and not r["timeout"] and not meta.get("help") and \
        all(f["sig"].startswith("LeakSanitizer") for f in ck.failures)
    # determinism: same command twice -> byte-identical stdout
    if ok and cfg["rerun"] and cmd in ("run", "compare", "check"):
        compare_it = True
        a = r["out"]
        if cmd == "check":
            compare_it = not time_limited(a, meta["json"], meta["runs"])
        if not meta["json"]:
            a = mask_timing(a)
        trace1 = None
        if os.path.exists(tp):
            with open(tp, "rb") as f:
                trace1 = f.read()
        # exit 1 as the first run allows it (check_main): a check, or a
        # run/compare with --fail-on-violation that saw a violation
        r2, ok2 = ck.run(argv, cmd, cmd == "check" or bool(meta.get("fov")), runs)
        if ok2 and compare_it:
            b = r2["out"] if meta["json"] else mask_timing(r2["out"])
            if cmd == "check" and time_limited(r2["out"], meta["json"], meta["runs"]):
                pass        # the second exploration ran out of time: timing, not a bug
            elif r2["rc"] != rc:
                ck.fail("nondeterministic exit status: %s" % cmd,
                        "exit %d then %d" % (rc, r2["rc"]))
            elif a != b:
                ck.fail("nondeterministic stdout: %s" % cmd, first_diff(a, b))
            elif trace1 is not None and os.path.exists(tp):
                with open(tp, "rb") as f:
                    if f.read() != trace1:
                        ck.fail("nondeterministic --trace file", "trace files differ")
    # replay round trip: check found a violation -> --replay TOKEN reproduces it
    if ok and rc == 1 and cmd == "check" and cfg["roundtrip"] and meta["replay"] is None:
        inv, tok = violation_of(r["out"])
        if tok:
            # options go before a possible "--" (after it everything is positional)
            argv2 = argv[:1] + ["--replay", tok, "--json"] + argv[1:]
            r3, ok3 = ck.run(argv2, "check", True, runs)
            if ok3:
                inv3, tok3 = violation_of(r3["out"])
                if r3["rc"] != 1 or inv3 != inv or tok3 != tok:
                    ck.fail("replay of a reported token does not reproduce it",
                            "first run: %s %s; replay: exit %d, %s %s" % (
                                inv, tok, r3["rc"], inv3, tok3), argv2,
                            r3["err"].decode("utf-8", "replace")[:300])
    return summarize(cfg, meta, argv, runs, ck)


def execute_replay(cfg, opts, cat, meta, argv, ck):
    scratch = opts["scratch"]
    runs = []
    argv1 = argv + ["--json"]
    ck.argv = argv1
    r, ok = ck.run(argv1, "check", True, runs)
    if not ok:
        return summarize(cfg, meta, argv1, runs, ck)
    if r["rc"] != 1:
        return summarize(cfg, meta, argv1, runs, ck)
    ck.check_json(r["out"], 1, argv1)
    inv, tok = violation_of(r["out"])
    if not tok:
        return summarize(cfg, meta, argv1, runs, ck)
    tok2, expect = mutate_token(tok, cfg["mutation"], cfg["mut_seed"])
    argv2 = argv + ["--replay", tok2] + (["--json"] if cfg["json2"] else [])
    ck.argv = argv2
    r2, ok2 = ck.run(argv2, "check", True, runs)
    if ok2:
        inv2, tok3 = violation_of(r2["out"])
        if expect == "same" and (r2["rc"] != 1 or inv2 != inv or tok3 != tok):
            ck.fail("replay of a reported token does not reproduce it",
                    "first run %s %s; replay exit %d %s %s" % (inv, tok, r2["rc"], inv2, tok3),
                    argv2, r2["err"].decode("utf-8", "replace")[:300])
        if expect == "error" and r2["rc"] != 2:
            ck.fail("malformed replay token accepted",
                    "token %r (mutation %s of %r) exit %d" % (tok2, cfg["mutation"], tok,
                                                               r2["rc"]), argv2)
        if r2["rc"] in (0, 1) and cfg["json2"]:
            ck.check_json(r2["out"], r2["rc"], argv2)
    return summarize(cfg, meta, argv2, runs, ck)


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "first difference at byte %d: %r vs %r" % (i, a[max(0, i - 30):i + 30],
                                                              b[max(0, i - 30):i + 30])
    return "lengths %d and %d" % (len(a), len(b))


def summarize(cfg, meta, argv, runs, ck):
    return {"index": cfg["index"], "cmd": cfg["cmd"], "argv": argv,
            "rc": runs[0]["rc"] if not runs[0]["timeout"] else "timeout",
            "expect": meta["expect"], "nruns": len(runs),
            "secs": sum(r["secs"] for r in runs),
            "maxrss_mb": max(r["maxrss_kb"] for r in runs) // 1024,
            "failures": ck.failures, "meta": {k: meta[k] for k in ("workload", "hazard", "threads",
                                                                    "policy", "cpus")}}


# ---------------------------------------------------------------------------
# Known defects (reported, but marked "known").
# ---------------------------------------------------------------------------

def known_label(f, res):
    """Failures that are not tlbsim defects: work too large for the harness's
    caps (the README lists no open defects). Everything the harness once
    listed against 46def49 is fixed
    (integer parsing, replay-token strictness, non-UTF-8 JSON, control
    characters, compare labels, the check mmap8 leak, --threads): those
    signatures are no longer excused."""
    sig = f["sig"]
    meta = res["meta"]
    if sig.startswith("timeout") and any(h.startswith("time:") for h in meta["hazard"]):
        return ("not a defect: a configuration whose simulated work is large for the "
                "harness's time cap (%s)" % [h for h in meta["hazard"]
                                              if h.startswith("time:")][0][6:])
    if sig.startswith(("memory cap", "timeout", "killed by SIGABRT")) and \
            any(h.startswith("mem:") for h in meta["hazard"]):
        return ("known: host memory past the harness's cap with huge -w size/touch or "
                "-D rcu_grace_ns (tlbsim's own budget, --max-memory, defaults to half the "
                "machine's memory)")
    return None


# ---------------------------------------------------------------------------
# Minimisation: drop option groups while the same failure signature recurs.
# ---------------------------------------------------------------------------

def minimise(cfg, sig, opts, cat, trials, seconds):
    """Drop option groups (halves, quarters, ..., single groups) while a
    failure with the same signature recurs; at most `trials` runs and about
    `seconds` of wall time."""
    if cfg["cmd"] in ("replay", "other"):
        return cfg, 0
    best = cfg
    used = 0
    t0 = time.monotonic()
    if sig.startswith(("timeout", "memory cap")):
        trials = min(trials, 6)     # every trial may run into the cap

    def removable(c):
        return [i for i, g in enumerate(c["groups"]) if g["k"] != "wl" and not g.get("keep")]

    def still_fails(c):
        res = execute(c, opts, cat)
        return any(f["sig"] == sig for f in res["failures"])

    chunk = max(1, len(removable(best)) // 2)
    while used < trials and time.monotonic() - t0 < seconds:
        idx = removable(best)
        if not idx:
            break
        progress = False
        for start in range(0, len(idx), chunk):
            if used >= trials or time.monotonic() - t0 >= seconds:
                break
            drop = set(idx[start:start + chunk])
            cand = dict(best)
            cand["groups"] = [g for i, g in enumerate(best["groups"]) if i not in drop]
            used += 1
            if still_fails(cand):
                best = cand
                progress = True
                break
        if progress:
            chunk = min(chunk, max(1, len(removable(best)) // 2))
            continue
        if chunk == 1:
            break
        chunk = max(1, chunk // 2)
    return best, used


def minimise_task(args):
    cfg, sig, opts, cat, trials, seconds = args
    best, used = minimise(cfg, sig, opts, cat, trials, seconds)
    return sig, argv_of(best, opts), used


# ---------------------------------------------------------------------------
# Driver.
# ---------------------------------------------------------------------------

def qarg(a):
    b = fsbytes(a)
    if b and re.fullmatch(rb"[A-Za-z0-9_./=:,+%@^-]+", b):
        return a
    try:
        s = b.decode("ascii")
        if all(0x20 <= ord(c) < 0x7f for c in s):
            return shlex.quote(s)
    except UnicodeDecodeError:
        pass
    out = []
    for c in b:
        if c == 0x27:
            out.append("\\'")
        elif c == 0x5c:
            out.append("\\\\")
        elif 0x20 <= c < 0x7f:
            out.append(chr(c))
        else:
            out.append("\\x%02x" % c)
    return "$'" + "".join(out) + "'"


def shell_cmd(binary, argv, maxlen=600):
    parts = [qarg(binary)] + [qarg(a) for a in argv]
    s = " ".join(parts)
    return s


def worker(args):
    cfg, opts, cat = args
    return execute(cfg, opts, cat)


def main():
    ap = argparse.ArgumentParser(description="Randomized robustness harness for tlbsim.")
    ap.add_argument("--tlbsim", default=DEFAULT_BIN, help="binary under test (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="PRNG seed (default 1)")
    ap.add_argument("--count", type=int, default=None,
                    help="stop after N configurations (default 300 unless --budget-seconds)")
    ap.add_argument("--budget-seconds", type=float, default=None,
                    help="stop starting configurations after S seconds")
    ap.add_argument("--start", type=int, default=0, help="first configuration index")
    ap.add_argument("--jobs", type=int, default=1, help="parallel configurations")
    ap.add_argument("--timeout", type=int, default=20, help="wall-time cap per run, s")
    ap.add_argument("--mem-mb", type=int, default=2048, help="memory cap per run, MB")
    ap.add_argument("--keep-going", action="store_true",
                    help="run all configurations (default: stop at the first failing one)")
    ap.add_argument("--verbose", action="store_true", help="print every configuration")
    ap.add_argument("--ignore-known", action="store_true",
                    help="exit 0 if every failure matches a known defect (see known_label)")
    ap.add_argument("--no-minimise", action="store_true",
                    help="do not minimise the first configuration of each failure")
    ap.add_argument("--minimise-trials", type=int, default=60,
                    help="runs per failure signature spent on minimisation (default 60)")
    ap.add_argument("--minimise-seconds", type=float, default=60,
                    help="wall time per failure signature for minimisation (default 60)")
    ap.add_argument("--all-failures", action="store_true",
                    help="list every failing configuration, not just 3 per signature")
    ap.add_argument("--report", help="write all results as JSON to this file")
    ap.add_argument("--scratch", default=None,
                    help="directory for --trace files and the runs' cwd "
                         "(default: $TMPDIR/tlbsim-robust-s<seed>)")
    ap.add_argument("--show", type=int, default=None,
                    help="print the command of configuration N and exit")
    a = ap.parse_args()

    binary = os.path.abspath(a.tlbsim)
    if not os.access(binary, os.X_OK):
        print("harness: %s is not an executable (build it: cmake --workflow --preset asan)"
              % binary, file=sys.stderr)
        return 2
    count = a.count if a.count is not None else (None if a.budget_seconds else 300)
    scratch = a.scratch or os.path.join(tempfile.gettempdir(), "tlbsim-robust-s%d" % a.seed)
    os.makedirs(scratch, exist_ok=True)
    cat = load_catalog(binary)
    knob_defaults = {}
    pol_txt = _list(binary, "policies")
    for line in pol_txt.splitlines():
        m = re.match(r"^  (\w+)=(\S+).*\[default\]", line)
        if m:
            knob_defaults[m.group(1)] = m.group(2)
    opts = {"binary": binary, "timeout": a.timeout, "mem_mb": a.mem_mb, "scratch": scratch,
            "asan": is_asan(binary), "knob_defaults": knob_defaults}

    if a.show is not None:
        cfg = make_config(cat, a.seed, a.show)
        m = meta_of(cfg, cat)
        print(shell_cmd(binary, argv_of(cfg, opts)))
        print("expect:", m["expect"], m["bad"], m["noncanon"], m["unk"])
        if m["hazard"]:
            print("hazard:", "; ".join(m["hazard"]))
        return 0

    t0 = time.monotonic()
    results = {}
    stop = False
    ctx = multiprocessing.get_context("fork")
    nxt = a.start
    end = a.start + count if count is not None else None
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, a.jobs),
                                                mp_context=ctx) as pool:
        inflight = {}
        while True:
            while not stop and len(inflight) < 2 * max(1, a.jobs) and \
                    (end is None or nxt < end) and \
                    (a.budget_seconds is None or time.monotonic() - t0 < a.budget_seconds):
                cfg = make_config(cat, a.seed, nxt)
                inflight[pool.submit(worker, (cfg, opts, cat))] = cfg
                nxt += 1
            if not inflight:
                break
            done, _ = concurrent.futures.wait(list(inflight),
                                              return_when=concurrent.futures.FIRST_COMPLETED)
            for fu in done:
                cfg = inflight.pop(fu)
                res = fu.result()
                res["cfg"] = cfg
                results[res["index"]] = res
                if a.verbose:
                    print("[%5d] %-7s exit %-7s %5.2fs %4dMB %s%s" % (
                        res["index"], res["cmd"], res["rc"], res["secs"], res["maxrss_mb"],
                        shell_cmd("tlbsim", res["argv"])[:200],
                        "  FAIL" if res["failures"] else ""), file=sys.stderr, flush=True)
                if res["failures"] and not a.keep_going:
                    stop = True
        # A stop (first failure without --keep-going) keeps only the
        # configurations before the first failing index, so the summary is the
        # same for every --jobs.
        if stop:
            first_fail = min(i for i, r in results.items() if r["failures"])
            results = {i: r for i, r in results.items() if i <= first_fail}

        order = sorted(results)
        groups = {}
        for i in order:
            res = results[i]
            for f in res["failures"]:
                f["known"] = known_label(f, res)
                groups.setdefault(f["sig"], []).append((res, f))
        minimal = {}
        if groups and not a.no_minimise:
            tasks = []
            for sig, lst in groups.items():
                res, f = lst[0]
                if a.ignore_known and f["known"]:
                    continue        # known defects: not worth the minimisation time
                tasks.append((res["cfg"], sig, opts, cat, a.minimise_trials,
                              a.minimise_seconds))
            for sig, argv, used in pool.map(minimise_task, tasks):
                minimal[sig] = argv
    elapsed = time.monotonic() - t0
    print_summary(a, binary, opts, results, order, groups, minimal)
    print("elapsed: %.1f s wall, %.1f s in runs (jobs %d)" % (
        elapsed, sum(r["secs"] for r in results.values()), a.jobs), file=sys.stderr)
    if a.report:
        with open(a.report, "w") as f:
            json.dump({"seed": a.seed, "binary": binary, "env": env_prefix(opts),
                       "scratch": scratch,
                       "results": [{k: v for k, v in results[i].items() if k != "cfg"}
                                   for i in order],
                       "signatures": {s: {"count": len(l), "known": l[0][1]["known"],
                                          "minimal": minimal.get(s)} for s, l in
                                      groups.items()}},
                      f, indent=1, default=str, ensure_ascii=True)
    if a.ignore_known:
        return 1 if any(l[0][1]["known"] is None for l in groups.values()) else 0
    return 1 if groups else 0


def print_summary(a, binary, opts, results, order, groups, minimal):
    rel = os.path.relpath(binary, ROOT) if binary.startswith(ROOT) else binary
    print("tlbsim robustness harness: seed %d, configurations %d..%d (%d run), binary %s" % (
        a.seed, order[0] if order else a.start, order[-1] if order else a.start - 1,
        len(order), rel))
    print("commands below: run from %s, with cwd-independent paths except --trace -" % ROOT)
    print("caps: %d s wall, %d MB (%s); runs in cwd %s" % (
        opts["timeout"], opts["mem_mb"],
        "ASan hard_rss_limit_mb + peak RSS" if opts["asan"] else "RLIMIT_AS + peak RSS",
        opts["scratch"]))
    print("env:  %s" % env_prefix(opts))
    bycmd = {}
    byrc = {}
    byexp = {}
    nproc = 0
    for i in order:
        r = results[i]
        bycmd[r["cmd"]] = bycmd.get(r["cmd"], 0) + 1
        byrc[str(r["rc"])] = byrc.get(str(r["rc"]), 0) + 1
        byexp[r["expect"]] = byexp.get(r["expect"], 0) + 1
        nproc += r["nruns"]
    print("by command:   " + ", ".join("%s %d" % kv for kv in sorted(bycmd.items())))
    print("by exit code: " + ", ".join("%s: %d" % kv for kv in sorted(byrc.items())))
    print("by oracle:    " + ", ".join("%s %d" % kv for kv in sorted(byexp.items())) +
          "   (tlbsim processes: %d)" % nproc)
    nfail = len({i for i in order if results[i]["failures"]})
    known = sum(1 for l in groups.values() if l[0][1]["known"])
    print("failing configurations: %d; distinct failures: %d (%d known, %d new)" % (
        nfail, len(groups), known, len(groups) - known))
    sigs = sorted(groups, key=lambda s: (groups[s][0][1]["known"] is not None,
                                         groups[s][0][0]["index"]))
    tl = os.path.relpath(binary, ROOT) if binary.startswith(ROOT + os.sep) else binary
    for n, sig in enumerate(sigs, 1):
        lst = groups[sig]
        res, f = lst[0]
        print()
        print("[%d] %s %s" % (n, "KNOWN" if f["known"] else "NEW  ", sig))
        if f["known"]:
            print("    (%s)" % f["known"])
        print("    configurations: %d (first #%d)" % (len({r["index"] for r, _ in lst}),
                                                       res["index"]))
        print("    reason: %s" % f["reason"][:400])
        if sig in minimal and minimal[sig] != f["argv"]:
            print("    minimal: %s" % shell_cmd(tl, minimal[sig]))
        shown = lst if a.all_failures else lst[:3]
        for r, ff in shown:
            print("    #%d: %s" % (r["index"], shell_cmd(tl, ff["argv"])[:2000]))
        if len(lst) > len(shown):
            print("    (+%d more; --all-failures lists them)" % (len(lst) - len(shown)))
        if f["detail"]:
            for line in f["detail"].splitlines()[:12]:
                print("    | " + line[:200])


if __name__ == "__main__":
    sys.exit(main())
