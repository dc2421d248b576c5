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
#include "arch/points.h"
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

enum ipi_phase { IPI_DELIVER, IPI_HANDLE, IPI_ACK };
static void ipi_entity(struct sim *s, void *arg, uint64_t data);

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
		if (c->phase == IPI_HANDLE && async_completion(s)) {
			c->phase = IPI_ACK;	/* check mode: the ack is its own point */
			sim_call_entity(s, ipi_entity, c, 0, ENTITY_PROMPT);
			continue;
		}
		if (--r->outstanding == 0 && r->waiter) {
			uint64_t now = s->now + (s->curr ? s->curr->pending_ns : 0);
			sim_wake(s, r->waiter, r->finish > now ? r->finish - now : 0);
			r->waiter = NULL;
		}
		c->next = mc->call_free;
		mc->call_free = c;
	}
}

/* queue c on cpu's list of calls waiting for local_irq_enable() */
static void irq_queue(struct irq_cpu *ic, struct ipi_call *c)
{
	c->next = NULL;
	if (ic->tail)
		ic->tail->next = c;
	else
		ic->head = c;
	ic->tail = c;
}

/*
 * Check mode (async_completion): an IPI is three entities the explorer
 * schedules one after another - delivered (the CALL_FUNCTION vector reaches
 * the target), handled (the handler runs there, if the target has IRQs on;
 * else it waits for local_irq_enable as in run mode), acknowledged (the
 * handler returned: csd_unlock, the sender's csd_lock_wait may end) - while
 * the sender spins in ipi_round_wait. kernel/smp.c
 * (__flush_smp_call_function_queue, csd_unlock; v6.10).
 */
static void ipi_ack(struct sim *s, struct ipi_call *c)
{
	struct machine *mc = machine_of(s);
	struct ipi_round *r = c->round;
	if (--r->outstanding == 0 && r->waiter) {
		sim_wake(s, r->waiter, 0);
		r->waiter = NULL;
	}
	c->next = mc->call_free;
	mc->call_free = c;
}

static void ipi_entity(struct sim *s, void *arg, uint64_t data)
{
	(void)data;
	struct machine *mc = machine_of(s);
	struct ipi_call *c = arg;
	switch (c->phase) {
	case IPI_DELIVER:
		sim_trace_cpu(s, c->cpu, &tp_ipi_deliver, (uint64_t)c->cpu, 0);
		c->phase = IPI_HANDLE;
		sim_call_entity(s, ipi_entity, c, 0, ENTITY_PROMPT);
		return;
	case IPI_HANDLE: {
		struct irq_cpu *ic = &mc->irq[c->cpu];
		sim_trace_cpu(s, c->cpu, &tp_ipi_handle, (uint64_t)c->cpu, ic->off);
		if (ic->off) {
			irq_queue(ic, c);	/* local_irq_enable runs and acks it */
			return;
		}
		c->fn(s, c->cpu, c->data);
		s->m.ipi_received++;
		c->phase = IPI_ACK;
		sim_call_entity(s, ipi_entity, c, 0, ENTITY_PROMPT);
		return;
	}
	default:
		sim_trace_cpu(s, c->cpu, &tp_ipi_ack, (uint64_t)c->cpu, 0);
		ipi_ack(s, c);
		return;
	}
}

bool ipi_deliver(struct sim *s, struct ipi_round *r, int cpu, uint64_t arrive, ipi_fn fn,
		 const void *data, size_t len, uint64_t *done)
{
	struct machine *mc = machine_of(s);
	struct irq_cpu *ic = &mc->irq[cpu];
	if (async_completion(s)) {
		struct ipi_call *c = call_alloc(s);
		if (!c)
			return true;
		SIM_BUG_ON(s, len > sizeof(c->data));
		*c = (struct ipi_call){.round = r, .arrive = arrive, .fn = fn, .phase = IPI_DELIVER,
				       .cpu = cpu};
		memcpy(c->data, data, len);
		r->outstanding++;
		sim_call_entity(s, ipi_entity, c, 0, ENTITY_PROMPT);
		*done = arrive;
		return false;
	}
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
	c->round = r;
	c->arrive = arrive;
	c->fn = fn;
	memcpy(c->data, data, len);
	irq_queue(ic, c);
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
