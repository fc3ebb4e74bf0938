/* Fault points of txlm serve, for tests (docs/reliability.md, "Fault
 * injection"): TXLM_FAULT_SERVE holds the names of those to trigger,
 * separated by commas; nothing changes unless it is set.
 *   slow-new-session  a session made waits 0.5 s before its answer is written
 *   hang-pass         the scheduler's next pass never returns, as a device
 *                     that hangs without reporting it
 *   short-stop-wait   the stop waits 2 s, not 30, for a pass in a device
 *                     call (a test of hang-pass need not wait 30 s) */
#ifndef TXLM_SRV_FAULT_H
#define TXLM_SRV_FAULT_H

/* Whether the fault point `name` is on. */
int srv_fault(const char *name);
/* Sleeps 0.5 s when `name` is on. */
void srv_fault_pause(const char *name);

#endif
