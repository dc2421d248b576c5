/* points.c - text of the arch back ends' points (see points.h). */
#include <inttypes.h>
#include <stdio.h>

#include "arch/arch.h"
#include "arch/points.h"

static const char *const tlbi_names[TLBI_KIND_COUNT] = {
	[TLBI_VALE1IS] = "VALE1IS", [TLBI_VAE1IS] = "VAE1IS", [TLBI_ASIDE1IS] = "ASIDE1IS",
	[TLBI_VAALE1IS] = "VAALE1IS", [TLBI_VMALLE1IS] = "VMALLE1IS", [TLBI_LOCAL] = "VMALLE1 (local)",
	[TLBI_RVALE1IS] = "RVALE1IS", [TLBI_RVAE1IS] = "RVAE1IS",
};

const char *tlbi_name(enum tlbi_kind k)
{
	return (unsigned)k < TLBI_KIND_COUNT ? tlbi_names[k] : "?";
}

static void fmt_tlbi(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_tlbi: %" PRIu64 " x TLBI %s (broadcast)", b,
		 a < TLBI_KIND_COUNT ? tlbi_names[a] : "?");
}

static void fmt_dsb(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)a;
	(void)b;
	snprintf(buf, len, "tlbsim_dsb_ish: TLBIs complete");
}

static void fmt_arch_flush(char *buf, size_t len, uint64_t a, uint64_t b)
{
	if (b == TLB_FLUSH_ALL)
		snprintf(buf, len, "tlb_flush: flush_tlb_mm_range(TLB_FLUSH_ALL)");
	else
		snprintf(buf, len, "tlb_flush: flush_tlb_mm_range(0x%" PRIx64 ", 0x%" PRIx64 ")", a,
			 b);
}

static void fmt_ipi(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "ipi_send_cpumask: %" PRIu64 " CPUs (flush_tlb_func%s)", a,
		 b ? ", lazy CPUs included" : ", lazy CPUs skipped");
}

static void fmt_tlbi_hit(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_tlbi_hit: cpu %" PRIu64 " dropped %" PRIu64 " entries", a, b);
}

static void fmt_kflush(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "flush_tlb_kernel_range(0x%" PRIx64 ", 0x%" PRIx64 ")", a, b);
}

static void fmt_kipi(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "ipi_send_cpumask: %" PRIu64 " CPUs (on_each_cpu: kernel range flush)", a);
}

static void fmt_ipi_target(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "tlbsim_ipi_target: cpu %" PRIu64, a);
}

static void fmt_tlbi_local(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_tlbi: %" PRIu64 " x TLBI VALE1 at 0x%" PRIx64 " (this CPU only)",
		 a, b);
}

static void fmt_local_test(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "tlbsim_local_test: the mm has only run on cpu %" PRIu64
		 " (the flush may stay local; preemptible here)", a);
}

static void fmt_tlbi_local_form(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_tlbi: %" PRIu64 " x TLBI %s in its local form (no IS; DSB NSH: "
		 "this CPU only)", b, a < TLBI_KIND_COUNT ? tlbi_names[a] : "?");
}

static void fmt_invlpgb(char *buf, size_t len, uint64_t a, uint64_t b)
{
	if (b)
		snprintf(buf, len, "tlbsim_invlpgb: %" PRIu64 " x INVLPGB, global ASID %" PRIu64
			 " (every CPU, no IPI)", a, b);
	else
		snprintf(buf, len, "tlbsim_invlpgb: %" PRIu64 " x INVLPGB, kernel addresses (every "
			 "CPU, no IPI)", a);
}

static void fmt_tlbsync(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)a;
	(void)b;
	snprintf(buf, len, "tlbsim_tlbsync: the INVLPGBs completed on every CPU");
}

static void fmt_tlbi_inflight(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "tlbsim_tlbi_inflight: the TLBIs have yet to complete on %" PRIu64
		 " other CPU%s (until this CPU's DSB ISH)", a, a == 1 ? "" : "s");
}

static void fmt_tlbi_complete(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_tlbi_complete: a TLBI of T%" PRIu64 " completed on cpu %" PRIu64
		 "%s, %" PRIu64 " entries dropped", b >> 33, a,
		 (b >> 32) & 1 ? " at the issuer's DSB ISH" : "", b & 0xffffffffu);
}

static void fmt_ipi_deliver(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "tlbsim_ipi_deliver: the flush IPI reached cpu %" PRIu64, a);
}

static void fmt_ipi_handle(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_ipi_handle: cpu %" PRIu64 " %s", a,
		 b ? "has IRQs off: the handler waits for local_irq_enable"
		   : "runs the handler (IRQs on)");
}

static void fmt_ipi_ack(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "tlbsim_ipi_ack: cpu %" PRIu64 " acknowledged the IPI (csd unlocked)", a);
}

const struct sim_point tp_tlbi_inflight = {"tlbi_inflight", fmt_tlbi_inflight, 0};
const struct sim_point tp_tlbi_complete = {"tlbi_complete", fmt_tlbi_complete, 0};
const struct sim_point tp_ipi_deliver = {"ipi_deliver", fmt_ipi_deliver, 0};
const struct sim_point tp_ipi_handle = {"ipi_handle", fmt_ipi_handle, 0};
const struct sim_point tp_ipi_ack = {"ipi_ack", fmt_ipi_ack, 0};
const struct sim_point tp_invlpgb = {"invlpgb", fmt_invlpgb, 0};
const struct sim_point tp_tlbsync = {"tlbsync", fmt_tlbsync, 0};
const struct sim_point tp_tlbi_issue = {"tlbi_issue", fmt_tlbi, 0};
const struct sim_point tp_local_test = {"local_test", fmt_local_test, 0};
const struct sim_point tp_tlbi_local_form = {"tlbi_local", fmt_tlbi_local_form, 0};
const struct sim_point tp_tlbi_local = {"tlbi_local", fmt_tlbi_local, 0};
const struct sim_point tp_tlbi_hit = {"tlbi_hit", fmt_tlbi_hit, SP_QUIET | SP_FLOW_TLBI};
const struct sim_point tp_ipi_target = {"ipi_target", fmt_ipi_target, SP_QUIET | SP_FLOW_IPI};
const struct sim_point tp_dsb_ish = {"dsb_ish", fmt_dsb, 0};
const struct sim_point tp_arch_flush = {"arch_flush", fmt_arch_flush, 0};
const struct sim_point tp_ipi_round = {"ipi_round", NULL, 0};
const struct sim_point tp_ipi_send_cpumask = {"ipi_send_cpumask", fmt_ipi, 0};
const struct sim_point tp_kernel_flush = {"flush_tlb_kernel_range", fmt_kflush, 0};
const struct sim_point tp_kernel_ipi = {"ipi_send_cpumask", fmt_kipi, 0};

/* ---- --memory-model tso ---- */
static const char *const tso_words[TSO_W_COUNT] = {
	[TSO_W_LOADED_MM] = "cpu_tlbstate.loaded_mm", [TSO_W_IS_LAZY] = "cpu_tlbstate_shared.is_lazy",
	[TSO_W_X] = "x", [TSO_W_Y] = "y",
};
static const char *const tso_whys[TSO_WHY_COUNT] = {
	[TSO_MFENCE] = "MFENCE", [TSO_LOCKED] = "locked instruction",
	[TSO_SERIALISING] = "serialising instruction",
};

static const char *word_name(uint64_t w)
{
	return w < TSO_W_COUNT ? tso_words[w] : "?";
}

static void fmt_tso_store(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_tso_store: cpu %" PRIu64 " buffers its store to %s", a,
		 word_name(b));
}

static void fmt_tso_drain(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_tso_drain: cpu %" PRIu64 "'s store to %s is globally visible",
		 a, word_name(b));
}

static void fmt_tso_fence(char *buf, size_t len, uint64_t a, uint64_t b)
{
	uint64_t why = b & 0xff;
	snprintf(buf, len, "tlbsim_tso_fence: cpu %" PRIu64 " drains %" PRIu64 " stores (%s)", a,
		 b >> 8, why < TSO_WHY_COUNT ? tso_whys[why] : "?");
}

static void fmt_tso_load_passes(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_tso_load: cpu %" PRIu64 " reads next's tlb_gen past %" PRIu64
		 " buffered stores", a, b);
}

static void fmt_switch_cr3(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "switch_mm_irqs_off: cpu %" PRIu64 " writes CR3 (%s), then loaded_mm",
		 a, b ? "flush" : "no flush");
}

static void fmt_tso_reorder_skip(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "tlbsim_tso_reorder: should_flush_tlb leaves out cpu %" PRIu64
		 " on a value it has stored but not made visible", a);
}

static void fmt_litmus_store(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "litmus: cpu %" PRIu64 " stores 1 to %s", a, word_name(b));
}

static void fmt_litmus_load(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "litmus: cpu %" PRIu64 " loads %" PRIu64, a, b);
}

static void fmt_litmus_fence(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "litmus: cpu %" PRIu64 " MFENCE", a);
}

const struct sim_point tp_tso_store = {"tso_store", fmt_tso_store, 0};
const struct sim_point tp_tso_drain = {"tso_drain", fmt_tso_drain, 0};
const struct sim_point tp_tso_fence = {"tso_fence", fmt_tso_fence, 0};
const struct sim_point tp_tso_load_passes = {"tso_load", fmt_tso_load_passes, 0};
const struct sim_point tp_switch_cr3 = {"switch_cr3", fmt_switch_cr3, 0};
const struct sim_point tp_tso_reorder_skip = {"tso_reorder", fmt_tso_reorder_skip, 0};
const struct sim_point tp_litmus_store = {"litmus_store", fmt_litmus_store, 0};
const struct sim_point tp_litmus_load = {"litmus_load", fmt_litmus_load, 0};
const struct sim_point tp_litmus_fence = {"litmus_fence", fmt_litmus_fence, 0};
