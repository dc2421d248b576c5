/*
 * points.h - the arch back ends' scheduler-visible points and trace events
 * (sim/trace.h). Payloads:
 *   tlbi_issue   a = enum tlbi_kind, b = TLBIs in the batch
 *   dsb_ish      -
 *   arch_flush   a = start, b = end (TLB_FLUSH_ALL: full flush)
 *   ipi_round    -
 *   ipi_send_cpumask (event) a = targets, b = freed_tables
 *   tlbsim_tlbi_hit (event)  a = a CPU the TLBI batch removed entries from,
 *                            b = entries removed there
 *   tlbsim_ipi_target (event) a = a CPU the IPI round interrupts
 *   tlbi_local               a = TLBIs, b = address (a local TLBI + DSB NSH)
 *   local_test               a = the CPU (arm64_local=single_cpu_mm_preemptible)
 *   tlbi_local (form)        a = enum tlbi_kind replaced, b = TLBIs (arm64_local)
 *   invlpgb      a = INVLPGBs issued, b = the global ASID (0: kernel addresses)
 *   tlbsync      -
 *   tso_store (event)  a = CPU, b = enum tso_word buffered
 *   tso_drain (event)  a = CPU, b = enum tso_word made globally visible
 *   tso_fence (event)  a = CPU, b = stores drained << 8 | enum tso_why
 *   tso_load_passes (event) a = CPU, b = buffered stores the tlb_gen read passed
 *   switch_cr3   a = CPU (switch_mm_irqs_off's CR3 write, TSO), b = need_flush
 *   tso_reorder_skip (event) a = CPU a flush left out through a stale read
 *   litmus       a = CPU, b = the value loaded
 *   tlbi_inflight (check mode) a = CPUs a broadcast TLBI has yet to reach
 *                            before the issuer's DSB ISH
 *   tlbi_complete (event)    a = the CPU a pending TLBI reached, b = entries
 *                            removed | at the issuer's DSB << 32 | issuing
 *                            thread << 33
 *   ipi_deliver, ipi_handle, ipi_ack (check mode, events of an entity)
 *                            a = the target CPU, b = (handle) IRQs were off
 */
#ifndef TLBSIM_ARCH_POINTS_H
#define TLBSIM_ARCH_POINTS_H

#include "sim/trace.h"

extern const struct sim_point tp_tlbi_issue, tp_dsb_ish, tp_arch_flush, tp_ipi_round,
	tp_ipi_send_cpumask, tp_tlbi_hit, tp_ipi_target, tp_tlbi_local, tp_kernel_flush, tp_kernel_ipi,
	tp_local_test, tp_tlbi_local_form, tp_invlpgb, tp_tlbsync, tp_tso_store, tp_tso_drain,
	tp_tso_fence, tp_tso_load_passes, tp_switch_cr3, tp_tso_reorder_skip, tp_litmus_store,
	tp_litmus_load, tp_litmus_fence, tp_tlbi_inflight, tp_tlbi_complete, tp_ipi_deliver,
	tp_ipi_handle, tp_ipi_ack;

#define YP_TLBI_ISSUE (&tp_tlbi_issue)
#define YP_DSB (&tp_dsb_ish)
#define YP_ARCH_FLUSH (&tp_arch_flush)
#define YP_IPI (&tp_ipi_round)
#define TR_IPI (&tp_ipi_send_cpumask)
#define TR_TLBI_HIT (&tp_tlbi_hit)
#define YP_TLBI_LOCAL (&tp_tlbi_local)
#define YP_LOCAL_TEST (&tp_local_test)
#define YP_TLBI_LOCAL_FORM (&tp_tlbi_local_form)
#define TR_IPI_TARGET (&tp_ipi_target)
#define YP_KFLUSH (&tp_kernel_flush)
#define TR_KIPI (&tp_kernel_ipi)
#define YP_INVLPGB (&tp_invlpgb)
#define YP_TLBSYNC (&tp_tlbsync)
#define TR_TSO_STORE (&tp_tso_store)
#define TR_TSO_DRAIN (&tp_tso_drain)
#define TR_TSO_FENCE (&tp_tso_fence)
#define TR_TSO_LOAD_PASSES (&tp_tso_load_passes)
#define YP_SWITCH_CR3 (&tp_switch_cr3)
#define TR_TSO_REORDER_SKIP (&tp_tso_reorder_skip)
#define YP_LITMUS_STORE (&tp_litmus_store)
#define YP_LITMUS_LOAD (&tp_litmus_load)
#define YP_LITMUS_FENCE (&tp_litmus_fence)
#define YP_TLBI_INFLIGHT (&tp_tlbi_inflight)
#define TR_TLBI_DONE (&tp_tlbi_complete)

#endif
