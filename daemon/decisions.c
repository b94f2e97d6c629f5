/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: decisions.c, counting fib_resolve's answers
 *
 * Relaxed atomic adds (GCC's __atomic builtins, as liburcu's uatomic
 * does it) into the struct decisions of daemon/decisions.h: one add per
 * non-zero slot of a batch, so the cost per flow is a byte compare and a
 * local increment.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "daemon/decisions.h"

static unsigned
decisions_type_slot(unsigned type)
{
	switch (type) {
	case 0:
		return DECISIONS_NONE;
	case FIB_UNICAST:
		return DECISIONS_UNICAST;
	case FIB_LOCAL:
		return DECISIONS_LOCAL;
	case FIB_BROADCAST:
		return DECISIONS_BROADCAST;
	case FIB_BLACKHOLE:
		return DECISIONS_BLACKHOLE;
	case FIB_UNREACHABLE:
		return DECISIONS_UNREACHABLE;
	case FIB_PROHIBIT:
		return DECISIONS_PROHIBIT;
	case FIB_THROW:
		return DECISIONS_THROW;
	default:
		return DECISIONS_OTHER_TYPE;
	}
}

static unsigned
decisions_error_slot(unsigned err)
{
	switch (err) {
	case 0:
		return DECISIONS_OK;
	case ENETUNREACH:
		return DECISIONS_ENETUNREACH;
	case EHOSTUNREACH:
		return DECISIONS_EHOSTUNREACH;
	case EACCES:
		return DECISIONS_EACCES;
	case EINVAL:
		return DECISIONS_EINVAL;
	default:
		return DECISIONS_OTHER_ERROR;
	}
}

void
decisions_count(struct decisions *ds, const struct fib_decision *d, size_t n)
{
	struct decisions local;

	memset(&local, 0, sizeof(local));
	for (size_t i = 0; i < n; i++) {
		local.type[decisions_type_slot(d[i].type)]++;
		local.error[decisions_error_slot(d[i].error)]++;
	}
	for (unsigned s = 0; s < DECISIONS_TYPES; s++)
		if (local.type[s])
			__atomic_fetch_add(&ds->type[s], local.type[s], __ATOMIC_RELAXED);
	for (unsigned s = 0; s < DECISIONS_ERRORS; s++)
		if (local.error[s])
			__atomic_fetch_add(&ds->error[s], local.error[s], __ATOMIC_RELAXED);
}

void
decisions_read(const struct decisions *ds, struct decisions *out)
{
	for (unsigned s = 0; s < DECISIONS_TYPES; s++)
		out->type[s] = __atomic_load_n(&ds->type[s], __ATOMIC_RELAXED);
	for (unsigned s = 0; s < DECISIONS_ERRORS; s++)
		out->error[s] = __atomic_load_n(&ds->error[s], __ATOMIC_RELAXED);
}

uint64_t
decisions_total(const struct decisions *copy)
{
	uint64_t n = 0;

	for (unsigned s = 0; s < DECISIONS_TYPES; s++)
		n += copy->type[s];
	return n;
}

uint64_t
decisions_errors(const struct decisions *copy)
{
	uint64_t n = 0;

	for (unsigned s = DECISIONS_OK + 1; s < DECISIONS_ERRORS; s++)
		n += copy->error[s];
	return n;
}

const char *
decisions_type_name(unsigned slot)
{
	static const char *const names[DECISIONS_TYPES] = {
	    "none",	   "unicast",  "local", "broadcast", "blackhole",
	    "unreachable", "prohibit", "throw", "other",
	};

	return slot < DECISIONS_TYPES ? names[slot] : "?";
}

const char *
decisions_error_name(unsigned slot)
{
	static const char *const names[DECISIONS_ERRORS] = {
	    "ok", "ENETUNREACH", "EHOSTUNREACH", "EACCES", "EINVAL", "other",
	};

	return slot < DECISIONS_ERRORS ? names[slot] : "?";
}
