/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/tap.h"
int
main(void)
{
	return tap_done();
}
