/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef FG_TESTS_EAL_RUNDIR_H
#define FG_TESTS_EAL_RUNDIR_H
/*
 * EAL creates its runtime directory (/var/run/dpdk/PREFIX) even with --no-shconf and leaves it
 * behind; a test that started EAL calls this once after rte_eal_init() so that the (empty)
 * directory is removed when the process exits. One still in use by another process is not
 * empty and stays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_eal.h>

static char test_eal_rundir[256];

static inline void
test_eal_rundir_remove(void)
{
	if (test_eal_rundir[0] != '\0')
		rmdir(test_eal_rundir);
}

/* Removes EAL's runtime directory at exit (see above). */
static inline void
test_eal_rundir_cleanup_at_exit(void)
{
	snprintf(test_eal_rundir, sizeof(test_eal_rundir), "%s", rte_eal_get_runtime_dir());
	atexit(test_eal_rundir_remove);
}

#endif
