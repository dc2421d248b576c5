/*
 * params.h - named, documented, overridable cost and hardware parameters.
 *
 * Every number the cost model uses lives in this table: a name, a unit, a value
 * for the x86-64 profiles and one for the arm64 profiles, and where the number
 * comes from (a published per-operation measurement named by its hardware and
 * Message-ID, commit or URL, or a first-principles argument).
 * `tlbsim list params` prints the table; `-D name=value` overrides an entry.
 *
 * Rule (DEVELOPERS.md): values come from per-operation measurements in
 * ../shared/docs/calibration.md or from first principles written here, never
 * from a workload-level result.
 *
 * All times are integer nanoseconds of simulated time; counts are plain
 * integers; switches are 0/1.
 */
#ifndef TLBSIM_PARAMS_H
#define TLBSIM_PARAMS_H

#include <stdint.h>

/* X(name, unit, x86 default, arm64 default, source) */
#define TLBSIM_PARAMS(X)                                                         \
  X(syscall_ns, "ns", 100, 150,                                                  \
    "first principles: syscall entry+exit ~250-400 cycles at 2.5-2.6 GHz")       \
  X(lock_op_ns, "ns", 20, 25,                                                    \
    "first principles: one uncontended atomic RMW on a shared line")             \
  X(line_transfer_ns, "ns", 51, 72,                                             \
    "core-to-core-latency (github.com/nviennot/core-to-core-latency: CAS "   \
    "ping-pong, round trip / 2, median): x86: Xeon "     \
    "Platinum 8375C 51 ns within a socket; arm64: no Falkor figure, Kunpeng "   \
    "920-6426 72 ns, the higher of the two 2019 arm64 server figures "          \
    "(Graviton2 47 ns); paid on top of lock_op_ns by an atomic on a line last "  \
    "written by another CPU")                                                    \
  X(vma_op_ns, "ns", 300, 300,                                                   \
    "first principles: find_vma + vm_area_struct alloc/link/free ~800 cycles")   \
  X(unmapped_area_ns, "ns", 200, 200,                                            \
    "first principles: get_unmapped_area gap search ~500 cycles")                \
  X(pte_scan_ns, "ns", 1, 1,                                                     \
    "first principles: a PTE slot read, 8 slots per 64-byte line")               \
  X(pte_zap_ns, "ns", 50, 50,                                                    \
    "first principles: clear a present PTE + page ref/rmap/counter ~130 cycles") \
  X(page_alloc_ns, "ns", 150, 150,                                               \
    "first principles: buddy/pcp allocation ~400 cycles")                        \
  X(page_free_ns, "ns", 100, 100,                                                \
    "first principles: pcp free ~250 cycles")                                    \
  X(zero_4k_ns, "ns", 300, 300,                                                  \
    "clear_page of a page not in the CPU's cache, per 4 KiB. x86: rep stosq "   \
    "13.7 GB/s in 4 KiB chunks = 299 ns (AMD Milan, commit cb431accb36e "        \
    "x86/clear_page: introduce clear_pages()); arm64: no published DC ZVA "      \
    "figure for a server core; DC ZVA, like rep stos, allocates lines without "  \
    "reading them, so the same store-bandwidth bound is taken")                  \
  X(zero_warm_4k_ns, "ns", 60, 50,                                               \
    "clear_page of a page whose lines are in the CPU's cache, per 4 KiB. "       \
    "first principles: x86 clear_page_erms at one 32-byte store per cycle = "    \
    "128 cycles + ~20 setup at 2.5 GHz; arm64 DC ZVA of 64-byte blocks at one "  \
    "per cycle = 64 cycles + loop at 2.6 GHz")                                   \
  X(zero_cache_kb, "KiB", 1024, 256,                                             \
    "per-CPU cache a cleared page stays warm in: x86 1 MiB L2 per core "         \
    "(Skylake-SP and later server cores); Falkor 512 KiB L2 per duplex of two "  \
    "cores (Qualcomm Centriq 2400); 0 = always cold")                            \
  X(fault_ns, "ns", 1000, 1380,                                                  \
    "arm64: 1.38 us per spurious-fault round trip on the 2019 Falkor (perf "   \
    "stat of the stall loop in the report, Message-ID 1817839533.20996552."     \
    "1557065445233.JavaMail.zimbra@redhat.com); x86: first "           \
    "principles (no published x86 figure found), exception entry+exit and "    \
    "handle_mm_fault dispatch ~2500 cycles")                                     \
  X(walk_level_ns, "ns", 25, 25,                                                 \
    "first principles (no published per-level figure): one table read per "    \
    "level, mostly "    \
    "from L2/L3 cache")                                                          \
  X(user_access_ns, "ns", 2, 2,                                                  \
    "first principles: one store that hits the TLB and L1")                      \
  X(user_loop_ns, "ns", 5, 5,                                                    \
    "first principles: per-iteration user-space overhead of a workload loop")    \
  X(ctx_switch_ns, "ns", 1500, 1500,                                             \
    "first principles: schedule() + switch_mm on an otherwise idle CPU; a task " \
    "sleeping on a CPU with nothing else to run pays half (schedule() out), a "  \
    "task woken on an idle CPU the other half (schedule() in)")                  \
  X(sched_slice_ns, "ns", 3000000, 3000000,                                      \
    "first principles: CFS sched_latency 6 ms shared by two runnable tasks; "    \
    "sched_min_granularity 0.75 ms")                                             \
  X(wakeup_ns, "ns", 1000, 1000,                                                 \
    "first principles: the woken task's latency from its waker's "              \
    "try_to_wake_up to its CPU's scheduler: the reschedule IPI's delivery and "  \
    "interrupt entry, then the queued wake-up's enqueue on the target "         \
    "(sched_ttwu_pending); the waker's own part is wake_per_task_ns")           \
  X(idle_exit_ns, "ns", 2000, 1000,                                              \
    "x86: intel_idle C1 exit_latency 2 us; arm64: cpuidle WFI state "           \
    "exit_latency 1 us (drivers/cpuidle, kernel constants)")                      \
  X(idle_entry_ns, "ns", 400, 400,                                               \
    "first principles (no published idle-entry figure): do_idle -> "     \
    "cpuidle_idle_call before the idle instruction: tick_nohz_idle_stop_tick "   \
    "(one hrtimer reprogram), the menu governor's state choice, rcu_idle_enter "  \
    "and the idle-state bookkeeping ~1000 cycles at 2.5-2.6 GHz; a wake-up "     \
    "that arrives before the CPU is idle waits for the entry and skips the "     \
    "idle exit (the idle loop sees need_resched)")                               \
  X(wake_per_task_ns, "ns", 600, 600,                                            \
    "first principles: the waker's try_to_wake_up per task (wake_up_q after "    \
    "__rwsem_mark_wake, v5.1): the task's pi_lock, its state and on_rq, "        \
    "select_task_rq's look at the target runqueues, the enqueue or wake-list "   \
    "add on the target and the reschedule IPI's send: ~8 cache lines last "      \
    "written by another CPU at 46-72 ns each (line_transfer_ns figures) plus "  \
    "~250 cycles of code. "   \
    "With wakeup_ns, idle_exit_ns and half a ctx_switch_ns this gives 3.35 us "  \
    "from an arm64 wake to the woken task running, against 3.52 us per "  \
    "pipe hand-over from WFI idle (which also holds two syscalls) of perf "     \
    "bench sched pipe on Graviton2 metal ('arm64: cpuidle: Add arm_poll_idle', " \
    "LKML 2024-04)")              \
  X(rcu_grace_ns, "ns", 3000000, 3000000,                                        \
    "first principles: an RCU-sched grace period takes a few jiffies (HZ=1000)") \
  X(pagecache_lookup_ns, "ns", 150, 150,                                         \
    "first principles: find_get_page on a cached page: an xarray walk, "         \
    "lock_page and get_page, a handful of cache lines (~400 cycles)")            \
  X(copy_4k_ns, "ns", 600, 600,                                                  \
    "first principles: a 4 KiB copy into a page not in the CPU's cache: the "    \
    "destination costs a cold clear (zero_4k_ns, 300) and reading the source "   \
    "about as much again; per 4 KiB")                                            \
  X(shmem_setup_ns, "ns", 2000, 2000,                                            \
    "first principles (no published shmem file figure): shmem_zero_setup " \
    "-> __shmem_file_setup (v5.1) under mmap_sem: shmem_acct_size "            \
    "(vm_committed_as), shmem_get_inode (inode slab alloc and "                 \
    "inode_init_always over ~10 lines, sb inode list and stat_lock), "          \
    "d_alloc_pseudo, alloc_file_pseudo (file slab alloc, nr_files) and the "     \
    "LSM alloc hooks: 3 slab objects and ~4 shared cache lines (46-72 ns each, " \
    "line_transfer_ns) "  \
    "~5000 cycles at 2.5 GHz")                                                   \
  X(shmem_evict_ns, "ns", 1500, 1500,                                            \
    "first principles: the deferred final fput of a tmpfs file (task_work -> "   \
    "__fput -> dput, iput -> evict -> shmem_evict_inode, v5.1) besides its "     \
    "page frees (page_free_ns each): fsnotify, the pseudo dentry's kill, "       \
    "shmem_unacct_size, the truncation's page-cache walk, shmem_free_inode, "    \
    "the sb list removal, LSM frees and three call_rcu frees ~3750 cycles at "   \
    "2.5 GHz")                                                                   \
  X(page_mkwrite_ns, "ns", 400, 400,                                             \
    "first principles: ext4_page_mkwrite on an allocated page: "                 \
    "sb_start_pagefault, file_update_time, i_mmap_sem, block_page_mkwrite "       \
    "(page lock, buffer walk, set_page_dirty) ~1000 cycles")                     \
  X(dirty_account_ns, "ns", 100, 100,                                            \
    "first principles: account_page_dirtied: per-CPU and per-wb counters, "      \
    "bdp_ratelimits and the task's nr_dirtied (~250 cycles)")                    \
  X(writeback_page_ns, "ns", 2000, 2000,                                         \
    "first principles: write_cache_pages per page: clear_page_dirty_for_io, "    \
    "page_mkclean's rmap walk, bio setup (no device time)")                      \
  X(fault_around_bytes, "bytes", 65536, 65536,                                   \
    "kernel default fault_around_bytes (mm/memory.c): 16 pages on 4K, 4 on 16K, " \
    "off on 64K")                                                                \
  X(ram_mb, "MiB", 65536, 131072,                                                \
    "first principles: memory of the profile's machine (64 GiB for a 24-core "   \
    "x86 VM, 128 GiB for a 46-core arm64 server); sets the dirty thresholds")    \
  X(dirty_ratio, "percent", 20, 20,                                              \
    "kernel default vm.dirty_ratio (mm/page-writeback.c)")                       \
  X(dirty_background_ratio, "percent", 10, 10,                                   \
    "kernel default vm.dirty_background_ratio (mm/page-writeback.c)")            \
  X(writeback_bw_mbs, "MB/s", 500, 500,                                          \
    "first principles: one SATA SSD's sequential write bandwidth; sets how long " \
    "balance_dirty_pages sleeps when over the limits")                           \
  X(hw_afdbm, "bool", 0, 0,                                                      \
    "arm64 hardware access flag and dirty state (ARMv8.1 HAFDBS): off, the "    \
    "v8.0-era behaviour (access-flag and permission faults)")                    \
  X(thread_create_ns, "ns", 20000, 20000,                                        \
    "first principles: clone() + stack setup ~50k cycles")                       \
  X(tlbi_op_ns, "ns", 0, 468,                                                    \
    "468 ns per broadcast TLBI VA op: least squares over 1-256 pages of "      \
    "__flush_tlb_range timed on a Huawei arm64 server with 4K pages "           \
    "(linux-arm-kernel 2020-06-09, Message-ID 504c7588-97e5-e014-fca0-"       \
    "c5511ae0d256@huawei.com): the "     \
    "issuing CPU's latency per op")                                              \
  X(dvm_occupancy_pct, "percent", 0, 100,                                        \
    "first principles: the share of each broadcast op's issuer latency during "  \
    "which the shared DVM path is held, so other CPUs' broadcasts queue; the "  \
    "tlbi_op_ns measurement "    \
    "measures the issuer only and no figure separates the two: 100 = fully "     \
    "serial (every broadcast waits for all earlier ones; the upper bound), 0 = " \
    "no contention (docs/sensitivity.md has the sweep)")                         \
  X(tlbi_recv_ns, "ns", 0, 0,                                                    \
    "no per-operation figure: time a running CPU loses per broadcast TLBI op it " \
    "receives (its TLB and walk-cache lookup of the DVM message), handling the " \
    "ops one after another; the issuer's DSB ISH completes when every receiver " \
    "has handled them; 0 until measured")                                       \
  X(tlbi_asid_ns, "ns", 0, 547,                                                  \
    "full ASID flush 1508 ns minus the 961 ns fixed part (the tlbi_op_ns "    \
    "measurement)")                   \
  X(tlbi_all_ns, "ns", 0, 547,                                                   \
    "first principles: VMALLE1IS assumed to cost as ASIDE1IS (tlbi_asid_ns)")              \
  X(dsb_ns, "ns", 0, 961,                                                        \
    "fixed part of a __flush_tlb_range call (DSB ISH completion), from the "  \
    "tlbi_op_ns measurement")           \
  X(tlbi_local_ns, "ns", 0, 40,                                                  \
    "first principles: non-broadcast TLBI + DSB NSH stays inside the core")      \
  X(asid_bits, "bits", 0, 16,                                                    \
    "ID_AA64MMFR0_EL1.ASIDBits: 16 on Falkor and most v8.1+ parts; 8 on some "   \
    "older cores")                                                               \
  X(kpti, "bool", 0, 0,                                                          \
    "page-table isolation (arm64 KPTI, x86 PTI): unknown on the 2019 hosts; off; " \
    "when on, every syscall pays pti_syscall_ns and arm64 doubles user TLBIs")   \
  X(pti_syscall_ns, "ns", 139, 0,                                                \
    "x86: getppid 339 ns -> 478 ns with PTI and PCID on Haswell with INVPCID "   \
    "(FreeBSD review D13985): the CR3 switches of entry and exit; arm64: no "    \
    "published figure for the KPTI trampoline (0)")                              \
  X(repeat_tlbi, "bool", 0, 0,                                                   \
    "ARM64_WORKAROUND_REPEAT_TLBI errata (arch/arm64/kernel/cpu_errata.c): "  \
    "Falkor part 0xc00 is not in the 2019 list; TLBI;DSB;TLBI "  \
    "when on")                                                                   \
  X(invlpg_ns, "ns", 100, 0,                                                     \
    "'each single flush is about 100 ns' (arch/x86/mm/tlb.c ceiling "        \
    "rationale); the 2014 ceiling patch (a5102476a24b, Message-ID "          \
    "20140218193017.ECDF1089@viggo.jf.intel.com): ~260 cycles "    \
    "per extra page")                                                            \
  X(cr3_flush_ns, "ns", 50, 0,                                                   \
    "CR3 write 96-124 cycles (Haswell/Westmere) at ~2.5 GHz (thread 'TLB "  \
    "flush multiple pages per IPI v5', Message-ID "                            \
    "20150608195237.GA15429@gmail.com)")                \
  X(flush_ceiling, "pages", 33, 0,                                               \
    "tlb_single_page_flush_ceiling default (arch/x86/mm/tlb.c)")                                 \
  X(flush_all_ns, "ns", 350, 0,                                                  \
    "a global flush (CR4.PGE toggle / INVPCID all) 746-960 cycles on "      \
    "Haswell/Westmere Xeon (the cr3_flush_ns thread); 960 cycles at 2.7 GHz")                              \
  X(ipi_send_ns, "ns", 68, 0,                                                    \
    "+68 ns per additional shootdown target (serial CSD queue + ICR write): "  \
    "MADV_DONTNEED+touch with 0, 1 and 3 remote CPUs on Haswell (RFC 'x86/mm: " \
    "Flush remote and local TLBs concurrently', Message-ID "                  \
    "20190525082203.6531-1-namit@vmware.com)") \
  X(ipi_handler_ns, "ns", 300, 0,                                                \
    "first principles: IRQ entry, EOI, exit ~750 cycles (flush work charged "    \
    "separately)")                                                               \
  X(ipi_latency_ns, "ns", 307, 0,                                                \
    "775 ns first-target cost (the ipi_send_ns measurement) minus send (68), " \
    "handler (300) and one "       \
    "INVLPG (100)")                                                              \
  X(pcid, "bool", 1, 0, "x86: PCID in use (Haswell and later)")                  \
  X(spec_walks, "bool", 0, 0,                                                    \
    "allow speculative walks on lazy x86 CPUs; checker use")  \
  X(tlb_sets, "sets", 128, 128,                                                  \
    "first principles: 1024-entry second-level TLB, 8 ways")                     \
  X(tlb_ways, "ways", 8, 8, "first principles: 8-way")                           \
  X(wc_sets, "sets", 8, 8,                                                       \
    "first principles: 32-entry walk cache / paging-structure cache, 4 ways")    \
  X(wc_ways, "ways", 4, 4, "first principles: 4-way")                            \
  X(livelock_faults, "faults", 1000, 1000,                                       \
    "checker: identical faults without a PTE change that count as a livelock")                                                                                \
  X(kasan_slowdown, "x", 3, 3,                                                   \
    "lib/Kconfig.kasan (KASAN_GENERIC help): 'The performance slowdown is ~x3'; "\
    "multiplies the first-principles kernel costs of fork/exec/exit/wait4 when "  \
    "-w kasan=on, divides the KASAN-measured tasklist write hold when off")       \
  X(tasklist_write_hold_ns, "ns", 123000, 123000,                                \
    "lock_stat posted in the 2024 review thread of 9e9e085effe9 (256-core "    \
    "bare-metal x86 KASAN "    \
    "kernel): tasklist_lock write hold avg ~123 us, used for every write "      \
    "section (copy_process, exit_notify, release_task); a KASAN figure (kasan=off:" \
    " / kasan_slowdown); arm64: no figure, the x86 one")                         \
  X(wait_child_ns, "ns", 60, 60,                                                 \
    "first principles: __do_wait's read section per child looked at "           \
    "(wait_consider_task reads exit_state etc. of a task_struct last written by " \
    "another CPU: one cache-line transfer, 46-72 ns as line_transfer_ns); "   \
    "without KASAN")          \
  X(exec_ns, "ns", 30000, 30000,                                                 \
    "first principles: execve's own work besides the mm (path walk, ELF "       \
    "headers from the page cache, argv/envp copy, bprm/cred/signal setup, the "  \
    "binary's mappings) ~75k cycles at 2.5 GHz; without KASAN")                  \
  X(exit_ns, "ns", 10000, 10000,                                                 \
    "first principles: do_exit's work besides the mm and tasklist_lock "        \
    "(exit_files, exit_fs, signals, cgroup, task_work) ~25k cycles; without "    \
    "KASAN")                                                                     \
  X(watchdog_thresh_s, "s", 10, 10,                                              \
    "kernel default watchdog_thresh (kernel/watchdog.c); a soft lockup is a CPU " \
    "that has not scheduled for 2 x watchdog_thresh while in kernel mode; 0: off") \
  X(jitter, "percent", 5, 5,                                                     \
    "first principles: every charged operation cost and wake-up delay is drawn " \
    "within +-jitter percent of its value (256 even levels; cache and TLB state, " \
    "interrupts, SMT and frequency make a real operation's time vary by a few "  \
    "percent), so that no run phase-locks on exact costs; 0: exact mode "        \
    "(run mode only; check explores orders, not times)")                      \
  X(invlpgb, "bool", 0, 0,                                                       \
    "x86: the CPU has INVLPGB/TLBSYNC (AMD Zen 3 and later, CPUID "             \
    "0x80000008 EBX[3]) and the kernel may use it (needs PCID; off with PTI); " \
    "0 on the Intel profiles, 1 on milan-72; x86_flush=invlpgb uses it")        \
  X(invlpgb_ns, "ns", 107, 0,                                                    \
    "first principles: the issuing core's cost of one INVLPGB without a wait "  \
    "(the _nosync forms): the request leaves the core complex for the data "    \
    "fabric, taken as one cross-CCX cache-line transfer, EPYC 7R13 (Milan) "    \
    "107 ns (nviennot core-to-core-latency); remote cores are not charged")     \
  X(tlbsync_ns, "ns", 394, 0,                                                    \
    "first principles: TLBSYNC waits until every core acknowledged the "        \
    "INVLPGBs this core issued: a round trip to the farthest core, EPYC 7R13 "  \
    "cross-socket cache-line transfer 197 ns x 2 (nviennot "                    \
    "core-to-core-latency; no published INVLPGB/TLBSYNC latency)")              \
  X(invlpgb_count_max, "pages", 8, 0,                                            \
    "x86: pages one INVLPGB may cover, CPUID 0x80000008 EDX[15:0] + 1 "         \
    "(invlpgb_count_max, arch/x86/kernel/cpu/amd.c, v6.15); the Milan value is " \
    "not published in a source this project has: 8 assumed")                   \
  X(global_asids, "ASIDs", 2039, 0,                                              \
    "x86: global ASIDs the kernel can hand out, global_asid_available = "       \
    "MAX_ASID_AVAILABLE - TLB_NR_DYN_ASIDS - 1 with MAX_ASID_AVAILABLE 2046 "   \
    "(11 PCID bits with CONFIG_MITIGATION_PAGE_TABLE_ISOLATION, minus 2); "     \
    "d504d1247e36, v6.15; lower it to see exhaustion")                         \
  X(table_batch_fail, "bool", 0, 0,                                              \
    "fault injection, not hardware: 1 makes every allocation of an mmu_gather "   \
    "table batch page (tlb_remove_table's __get_free_page(GFP_NOWAIT)) fail, "  \
    "so each table takes tlb_remove_table_one (knob table_free_one)")          \
  X(table_sync_ns, "ns", 1000, 1000,                                             \
    "first principles: tlb_remove_table_sync_one's smp_call_function(_, _, 1) " \
    "to every other CPU and its wait, taken as one IPI round trip: send, "      \
    "latency and handler ~2.5k cycles (x86 ipi_send_ns + ipi_latency_ns + "    \
    "ipi_handler_ns = 675 ns, rounded up for the wait on the slowest CPU)")      \
  X(ttl, "bool", 0, 0,                                                           \
    "arm64: the CPU implements FEAT_TTL (ARMv8.4-TTL, ID_AA64MMFR2_EL1.TTL): "   \
    "the kernel puts a level hint in its TLBIs (knob arm64_ttl) and the TLB "  \
    "may keep entries of other levels; none of the built-in parts (Falkor, "    \
    "Cortex-A72/Neoverse N1 class, ARMv8.0-8.2) has it")                        \
  X(ttl_ignored, "bool", 0, 0,                                                   \
    "arm64: a part that advertises FEAT_TTL but ignores the hint (invalidates " \
    "every level, as the architecture allows); no part is documented here as "  \
    "doing so: a toggle to contrast with ttl=1")                                \
  X(tlbi_range, "bool", 0, 0,                                                    \
    "arm64: FEAT_TLBIRANGE (ARMv8.4-TLBI, ID_AA64ISAR0_EL1.TLB=2): the kernel "  \
    "flushes a user range with TLBI RVAE1IS / RVALE1IS ops of (scale, num) "    \
    "encoding (__flush_tlb_range_op, d1d3aa98b1d4, v5.9); not on the "          \
    "built-in parts")                                                            \
  X(tlbi_range_op_ns, "ns", 0, 470,                                              \
    "arm64: issuer latency of one range TLBI, whatever the pages it covers: "   \
    "the range-TLBI measurement (calibration C2, an ARMv8.4 FPGA) gives the "   \
    "shape only, a cost flat in the pages covered; taken equal to one "        \
    "classic TLBI (tlbi_op_ns) for lack of an absolute figure")                 \
  X(invlpg_global_miss, "bool", 0, 0,                                            \
    "x86: INVLPG with PCIDs enabled may leave Global TLB entries (kernel "      \
    "mappings) unflushed: Intel Alder Lake and Raptor Lake (models in "        \
    "invlpg_miss_ids, ce0b15d11ad8 \"x86/mm: Avoid incomplete Global INVLPG "  \
    "flushes\", v6.4); knob x86_invlpg_miss says what the kernel does about it") \
  X(async_completion, "bool", 1, 1,                                             \
    "checker: 1 = a broadcast TLBI (x86: INVLPGB) completes on each other CPU " \
    "at a point the explorer chooses before the issuer's DSB ISH (TLBSYNC) "    \
    "(Arm ARM DDI 0487, 'Ordering and completion of TLB maintenance "           \
    "instructions': only a DSB of the issuing PE guarantees completion), and an x86 flush IPI is delivered, handled and "          \
    "acknowledged at three scheduling points; 0 = all at issue (the checker "   \
    "before this parameter). Ignored by run mode")

enum param_id {
#define X(name, unit, x86, arm, src) P_##name,
  TLBSIM_PARAMS(X)
#undef X
  P_COUNT
};

struct param_desc {
  const char *name;
  const char *unit;
  int64_t x86_default;
  int64_t arm64_default;
  const char *source;
};

extern const struct param_desc tlbsim_param_desc[P_COUNT];

/* The largest value of a parameter of unit ns: one operation, or one RCU
 * grace period, longer than a simulated second is not a machine anyone
 * runs (core.c param_check refuses more). */
#define PARAM_NS_MAX 1000000000ll

/* Find a parameter by name; returns -1 if unknown. */
int param_lookup(const char *name);

#endif
