-- folio_perf install script.  The Makefile builds it from the files of
-- sql/parts in name order (000_header first, 150_privileges last): edit
-- those, not the built script.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION folio_perf" to load this file. \quit
