/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_CP_DRAW_JOB_H
#define FG_CP_DRAW_JOB_H
/*
 * One event's draw as the draw runner carries it out (struct dr_job), shared by its two halves:
 * draw_runner.c steps it on the control plane's loop, draw_job_thread.c does the work that must
 * not hold the loop up (reading the entrants from Redis, ordering them, writing and loading
 * draw_entrants, setting draw_done_at) on a thread of the job's own. Private to those two files.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/draw.h"
#include "controlplane/draw_decide.h"
#include "store/store_draw.h"

/* Entrants per HSCAN, when the entrants' log does not hold them all (the job's thread, its own
 * Redis connection). Redis is busy with each
 * while other sales' batches wait: 10,000 took it 15-37 ms on a quiet host (docs/benchmarks.md),
 * 2,000 a few ms. */
#define DR_SCAN_COUNT 2000
/* A step that waits for the job's thread (ordering, writing, loading) looks again this much
 * later. */
#define DR_BG_POLL_MS 2
/* The decision rate: samples this far apart, over this long. */
#define DR_RATE_SAMPLE_MS 250
#define DR_RATE_SAMPLES	  9

enum dr_phase {
	DR_FREEZE,   /* freeze (or read) the draw key */
	DR_SCAN,     /* HSCAN the entrants */
	DR_LOAD,     /* read draw_entrants from PostgreSQL by rank (a thread) */
	DR_KEYS,     /* digest, rank keys, sort (a thread) */
	DR_WRITE,    /* COPY to PostgreSQL (a thread) */
	DR_RANKS,    /* publish QUEUED with ranks */
	DR_DECIDE,   /* reserve.lua draw batches */
	DR_FINISH,   /* draw_done_at, FAIR DONE */
	DR_DONE,     /* nothing left */
};

struct dr_rank {
	uint64_t user;
	uint32_t rank;
};

struct dr_keyed {
	uint64_t key; /* the entrant's rank key */
	uint64_t idx; /* its place among the entrants sorted by user */
};

struct dr_job {
	uint32_t event;
	enum dr_phase phase;
	uint64_t retry_ms; /* not before this (monotonic ms; after a failure) */
	uint64_t n;	   /* entrants fixed at the freeze */
	uint64_t next;	   /* the first entrant not decided (the draw key's "next") */
	/* The end of the highest round whose decisions this job published (take_round()): kept
	 * across failures (job_clear()), so that the freeze after one never goes on from a cursor
	 * in Redis behind it; a control plane's restart starts it at 0 again. */
	uint64_t published;
	uint64_t at;	   /* the current phase's progress */
	struct store_entrant *v; /* the entrants: scan order, then rank order */
	size_t nv, cap;
	struct dr_rank *ranked;	 /* DR_KEYS: the ranks by user it made, for DR_WRITE */
	struct dr_rank *by_user; /* sorted by user: ranks for queries */
	bool has_seed;
	uint8_t seed[DRAW_SEED_LEN];
	uint8_t digest[DRAW_DIGEST_LEN];
	uint64_t rate_ms[DR_RATE_SAMPLES], rate_dec[DR_RATE_SAMPLES];
	unsigned rate_at;
	uint64_t failures;
	struct store_draw fz; /* DR_FREEZE: the draw key as the freeze left it */
	bool finishing;	      /* DR_FINISH: its thread was started */
	uint64_t phase_ms; /* when the current phase began (monotonic ms), for the log */
	/* The decisions' thread (DR_DECIDE; NULL: none runs), and its rounds so far: how many,
	 * their time (us), the last size, for the log and stats. */
	struct draw_decide *dec;
	uint64_t rounds, round_us_sum, round_us_max;
	unsigned round_n;
	/* The ordering, the write and the load run on a thread of their own, off the loop
	 * (struct dr_bg); the job's entrants, digest and seed are the thread's meanwhile. */
	struct dr_bg {
		enum {
			DR_BG_NONE,
			DR_BG_GET,
			DR_BG_READ,
			DR_BG_ORDER,
			DR_BG_WRITE,
			DR_BG_LOAD,
			DR_BG_DONE,
		} kind;
		pthread_t th;
		atomic_bool done;
		const char *conninfo;
		const struct store_conn_config *rsc; /* READ: its own Redis connection */
		int rc;
		const char *what; /* what failed */
		char err[256];
		struct dr_rank *by_user; /* WRITE and LOAD: the ranks for queries */
		uint8_t have[DRAW_DIGEST_LEN]; /* WRITE: what PostgreSQL holds (-EEXIST) */
		uint64_t have_n;
		/* GET: the event's draw columns (pg_draw_get(); the seed goes to the job) */
		bool pg_digest;
		uint8_t pg_dg[DRAW_DIGEST_LEN];
		uint64_t pg_n, done_ms;
		unsigned done_delay_ms; /* DONE: DR_TEST_DONE_DELAY_ENV's wait after the commit */
	} bg;
};

/*
 * Starts j's thread for kind (a DR_BG_* value), with the connections' settings it opens its own
 * connections with (conninfo: PostgreSQL's; rsc: Redis's) and DONE's test-only wait after its
 * commit (done_delay_ms, 0 but in tests). The thread's results stay in j->bg. Returns 0, or
 * -errno when no thread could be started (j->bg.kind is DR_BG_NONE then).
 */
int dr_bg_start(struct dr_job *j, int kind, const char *conninfo,
	const struct store_conn_config *rsc, unsigned done_delay_ms);

/*
 * Whether j's thread is over (joined then: its rc, err and by_user stay in j->bg for the caller).
 * While it runs, j->retry_ms is set DR_BG_POLL_MS after now_ms: the job is looked at again then.
 */
bool dr_bg_over(struct dr_job *j, uint64_t now_ms);

/* Waits for j's thread, if one runs (it ends by itself), and drops what it made. */
void dr_bg_join(struct dr_job *j);

#endif
