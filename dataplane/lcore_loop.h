/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_DP_LCORE_LOOP_H
#define FG_DP_LCORE_LOOP_H
/*
 * The loop each worker lcore runs, the top of the data plane's per-packet code: it polls its
 * RX queues, runs the per-burst pipeline (pipeline.h) and sends the answers on the queue the
 * packets came from, with its state in its own struct worker (worker.h).
 */

/*
 * The lcore entry point (rte_eal_remote_launch); arg is a struct worker set up by
 * worker_init(). Runs until *w->stop; returns 0.
 */
int lcore_loop_run(void *arg);

#endif
