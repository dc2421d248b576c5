/*
 * irq.c - IRQs-off windows and the delivery of IPIs (arch.h).
 *
 * Mirrors kernel/smp.c (smp_call_function_many_cond, v6.4..v6.10) as far as
 * timing goes: the sender queues a call on each target and, with wait=1,
 * spins until every target has run it (csd_lock_wait); a target takes the
 * CALL_FUNCTION vector only with IRQs enabled, so a CPU inside
 * local_irq_disable() (write_lock_irq spinning or holding) runs the call when
 * it enables IRQs again (__flush_smp_call_function_queue).
 */
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "sim/grow.h"

void local_irq_disable(struct sim *s)
{
	machine_of(s)->irq[cur_cpu(s)].off = true;
}

static struct ipi_call *call_alloc(struct sim *s)
{
	struct machine *mc = machine_of(s);
	struct ipi_call *c = mc->call_free;
	if (c) {
		mc->call_free = c->next;
		return c;
	}
	if (GROW(&mc->call_all, &mc->cap_calls, mc->ncalls, (size_t)mc->ncalls + 1, 16)) {
		sim_oom(s, "IPI calls");
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		sim_oom(s, "IPI calls");
		return NULL;
	}
	mc->call_all[mc->ncalls++] = c;
	return c;
}

/* local_irq_enable(): the queued calls run now, one after another; each
 * round they belong to may complete */
void local_irq_enable(struct sim *s)
{
	struct machine *mc = machine_of(s);
	int cpu = cur_cpu(s);
	struct irq_cpu *ic = &mc->irq[cpu];
	ic->off = false;
	uint64_t t = s->now + (s->curr ? s->curr->pending_ns : 0);
	while (ic->head) {
		struct ipi_call *c = ic->head;
		ic->head = c->next;
		if (!ic->head)
			ic->tail = NULL;
		uint64_t start = t > c->arrive ? t : c->arrive;
		s->m.ipi_wait_irqs_off_ns += start - c->arrive;
		uint64_t work = (uint64_t)P(s, P_ipi_handler_ns) + c->fn(s, cpu, c->data);
		s->m.ipi_received++;
		sim_charge_sys(s, work);
		t = start + work;
		struct ipi_round *r = c->round;
		if (t > r->finish)
			r->finish = t;
		if (--r->outstanding == 0 && r->waiter) {
			uint64_t now = s->now + s->curr->pending_ns;
			sim_wake(s, r->waiter, r->finish > now ? r->finish - now : 0);
			r->waiter = NULL;
		}
		c->next = mc->call_free;
		mc->call_free = c;
	}
}

bool ipi_deliver(struct sim *s, struct ipi_round *r, int cpu, uint64_t arrive, ipi_fn fn,
		 const void *data, size_t len, uint64_t *done)
{
	struct machine *mc = machine_of(s);
	struct irq_cpu *ic = &mc->irq[cpu];
	if (!ic->off) {
		uint64_t work = (uint64_t)P(s, P_ipi_handler_ns) + fn(s, cpu, data);
		s->m.ipi_received++;
		sim_steal_at(s, cpu, arrive, work);
		*done = arrive + work;
		return true;
	}
	struct ipi_call *c = call_alloc(s);
	if (!c)
		return true;
	SIM_BUG_ON(s, len > sizeof(c->data));
	c->next = NULL;
	c->round = r;
	c->arrive = arrive;
	c->fn = fn;
	memcpy(c->data, data, len);
	if (ic->tail)
		ic->tail->next = c;
	else
		ic->head = c;
	ic->tail = c;
	r->outstanding++;
	*done = arrive;
	return false;
}

void ipi_round_wait(struct sim *s, struct ipi_round *r)
{
	uint64_t now = s->now + s->curr->pending_ns;
	if (r->outstanding) {
		r->waiter = s->curr;
		sim_spin_wait(s);
		now = s->now + s->curr->pending_ns;
	}
	if (r->finish > now)
		sim_charge_sys(s, r->finish - now);
}
