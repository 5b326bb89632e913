# Makefile for folio_perf (PGXS)
#
#   make && make install                 build and install (PG_CONFIG=...)
#   make installcheck                    pg_regress against the running server
#                                        (PGHOST, PGPORT, PGUSER; configured as
#                                        test/folio_perf.conf) and the TAP tests
#   make installcheck-regress-only       pg_regress on a temporary instance
#   make installcheck-tap-only           the TAP tests (PROVE_TESTS=...)
#
# Works out of tree as well (VPATH, as pg_buildext builds):
#   make -f /path/to/folio_perf/Makefile VPATH=/path/to/folio_perf
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

# the directory of this Makefile, whatever the build directory
fperf_src := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

MODULE_big = folio_perf
OBJS = $(patsubst $(fperf_src)/%.c,%.o,$(sort $(wildcard $(fperf_src)/src/*.c)))
PGFILEDESC = "folio_perf - performance windows for schema-per-tenant databases"

EXTENSION = folio_perf
EXTVERSION := $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(fperf_src)/folio_perf.control)
# The install script is built from its parts (sql/parts/NNN_*.sql, in name
# order).  An upgrade script to the current version is built from its
# hand-written part (sql/folio_perf--A--$(EXTVERSION).sql: drops, tables,
# columns, types, data) followed by every function and view of the install
# script as CREATE OR REPLACE and its privileges (sql/upgrade_tail.pl).
# Upgrade scripts to older versions and the install scripts of released
# versions (sql/folio_perf--A.sql, saved as they were built, so that a test
# can install them) are installed as they are.
fperf_upgrades := $(notdir $(wildcard $(fperf_src)/sql/folio_perf--*--$(EXTVERSION).sql))
DATA_built = folio_perf--$(EXTVERSION).sql $(fperf_upgrades)
DATA = $(filter-out $(addprefix sql/,$(fperf_upgrades)),$(patsubst $(fperf_src)/%,%,$(sort $(wildcard $(fperf_src)/sql/folio_perf--*.sql))))

PG_CPPFLAGS = -I$(fperf_src)/src -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL = $(libpq)

# pg_regress: inputs under test/sql, expected output in expected/.
# installcheck uses the running server; installcheck-regress-only a
# temporary instance that preloads pg_stat_statements and folio_perf.
REGRESS = $(patsubst $(fperf_src)/test/sql/%.sql,%,$(sort $(wildcard $(fperf_src)/test/sql/*.sql)))
REGRESS_OPTS = --inputdir=$(fperf_src)/test
REGRESS_TEMP_OPTS = --temp-instance=$(CURDIR)/tmp_check_regress \
	--temp-config=$(fperf_src)/test/folio_perf.conf

TAP_TESTS = 1
PROVE_TESTS = $(patsubst $(fperf_src)/%,%,$(sort $(wildcard $(fperf_src)/test/t/*.pl)))

EXTRA_CLEAN = folio_perf--$(EXTVERSION).sql $(fperf_upgrades) tmp_check_regress test/fuzz/fuzz_parse_schema \
	results regression.diffs regression.out

# Out of tree: objects go to src/ of the build directory, and pg_regress
# (which looks for expected/ in its output directory first) finds the
# expected output of the source tree.  Before PGXS, which reads
# REGRESS_PREP into its installcheck rule.
ifdef VPATH
$(shell mkdir -p src)
REGRESS_PREP = $(CURDIR)/expected
endif

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

ifdef VPATH
$(CURDIR)/expected:
	ln -s $(fperf_src)/expected expected
endif

# Header dependencies are not tracked by PGXS without --enable-depend: every
# object (and its JIT bitcode) is rebuilt when any header changes.
$(OBJS) $(OBJS:.o=.bc): $(wildcard $(fperf_src)/src/*.h)

folio_perf--$(EXTVERSION).sql: $(sort $(wildcard $(fperf_src)/sql/parts/*.sql))
	cat $^ > $@

$(fperf_upgrades): folio_perf--%--$(EXTVERSION).sql: $(fperf_src)/sql/folio_perf--%--$(EXTVERSION).sql \
		folio_perf--$(EXTVERSION).sql $(fperf_src)/sql/upgrade_tail.pl
	perl $(fperf_src)/sql/upgrade_tail.pl $< folio_perf--$(EXTVERSION).sql > $@

# The two halves of the temporary-instance check, so that
# test/run_tests.sh can count them.
.PHONY: installcheck-regress-only installcheck-tap-only
installcheck-regress-only: $(REGRESS_PREP)
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(REGRESS_TEMP_OPTS) $(REGRESS)

installcheck-tap-only:
	$(prove_installcheck)
