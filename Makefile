# Makefile for folio_perf (PGXS)

MODULE_big = folio_perf
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))
PGFILEDESC = "folio_perf - performance windows for schema-per-tenant databases"

EXTENSION = folio_perf
EXTVERSION = 1.0
# The install script is built from its parts (sql/parts/NN_*.sql, in name
# order); upgrade scripts (sql/folio_perf--A--B.sql) are installed as they are.
DATA_built = folio_perf--$(EXTVERSION).sql
DATA = $(sort $(wildcard sql/folio_perf--*--*.sql))

PG_CPPFLAGS = -I$(srcdir)/src -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL = $(libpq)

# pg_regress: inputs under test/sql, expected output in ./expected, a
# temporary instance that preloads pg_stat_statements and folio_perf.
REGRESS = $(patsubst test/sql/%.sql,%,$(sort $(wildcard test/sql/*.sql)))
REGRESS_OPTS = --inputdir=test --temp-instance=$(CURDIR)/tmp_check_regress \
	--temp-config=$(CURDIR)/test/folio_perf.conf

TAP_TESTS = 1
PROVE_TESTS = $(sort $(wildcard test/t/*.pl))
PROVE_FLAGS = -I $(CURDIR)/test/perl

EXTRA_CLEAN = folio_perf--$(EXTVERSION).sql tmp_check_regress test/fuzz/fuzz_parse_schema results regression.diffs regression.out

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

folio_perf--$(EXTVERSION).sql: $(sort $(wildcard $(srcdir)/sql/parts/*.sql))
	cat $^ > $@

# The two halves of installcheck, so that test/run_tests.sh can count them.
.PHONY: installcheck-regress-only installcheck-tap-only
installcheck-regress-only:
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(REGRESS)

installcheck-tap-only:
	$(prove_installcheck)
