// SPDX-License-Identifier: BSD-2-Clause
/*
 * DOC: libFuzzer target for the config parser
 *
 * Feeds arbitrary bytes to conf_parse_buf(). A config that parses must
 * print, parse back and compare equal (conf_diff() == 0); one that fails
 * must carry at least one error. Built by `make conf-fuzz` (clang only),
 * run by `make conf-fuzz-run` from the seeds in tests/fuzz/conf_corpus.
 * Every difference aborts (the NEL round trip it found, seed
 * nel-in-quoted-path, is fixed: tests/fuzz/README.md).
 */
#include "conf/conf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf_errors errs = { 0 };
	struct conf *c = NULL, *back = NULL;
	char *text, line[1280];
	size_t i;
	int rc;

	rc = conf_parse_buf((const char *)data, size, "fuzz", &c, &errs);
	if (rc == -EINVAL) {
		if (errs.count == 0)
			abort();
		for (i = 0; i < errs.count; i++)
			conf_error_format(&errs, i, line, sizeof(line));
	} else if (rc == 0) {
		if (conf_format(c, &text) != 0)
			abort();
		if (conf_parse_buf(text, strlen(text), "printed", &back, &errs) != 0)
			abort();
		if (conf_diff(c, back) != 0)
			abort();
		free(text);
		conf_free(back);
		conf_free(c);
	}
	conf_errors_free(&errs);
	return 0;
}
