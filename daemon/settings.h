/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: settings, the config mapped onto the modules' own settings
 *
 * conf/ holds what the operator wrote, in the file's units (durations in
 * microseconds); each module takes its own settings struct with its own
 * defaults (fib_params_default, flow_config_default, ingest_conf_default).
 * These functions start from the module's defaults and copy what the
 * config says over them, converting units, so that a field the config
 * does not know keeps the module's default. The config's own defaults
 * (conf_new) must map onto exactly the modules' defaults: one source of
 * defaults, checked by tests/unit/defaults_test.c.
 */
#ifndef FIBD_SETTINGS_H
#define FIBD_SETTINGS_H

#include <stdint.h>

struct conf;
struct fib_params;
struct flow_config;
struct ingest_conf;

/* fib: section onto fib_params. Context: any. */
void settings_fib(const struct conf *c, struct fib_params *p);

/* cache: section onto flow_config, with the hash key secret[2].
 * Context: any. */
void settings_flow(const struct conf *c, const uint64_t secret[2], struct flow_config *f);

/* netlink: section onto ingest_conf (without fibd's command-line
 * overrides). Context: any. */
void settings_ingest(const struct conf *c, struct ingest_conf *ic);

#endif
