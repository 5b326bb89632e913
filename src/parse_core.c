/*-------------------------------------------------------------------------
 *
 * parse_core.c
 *		FOLIO schema-name, application_name and query-text parsing.
 *
 * FOLIO names a tenant's module schema <tenant>_<module>, the module with
 * '-' turned into '_' (fs09000000_mod_source_record_manager).  Tenant ids
 * may contain '_' (cs00000int_0001), so a name cannot be split at the first
 * underscore: we match the longest known module suffix first, then fall back
 * to the first "_mod_" that leaves a well-formed tenant on its left.  A few
 * schemas belong to a module and no tenant (pubsub_config,
 * data_import_global, mod_search__system).  doc/reference.md describes the
 * rule as users see it.
 *
 * Everything here is plain C over (pointer, length) pairs: no allocation,
 * no server calls, no assumption of NUL termination, and every byte value is
 * acceptable input.  test/fuzz/harness.c drives these functions under
 * libFuzzer with AddressSanitizer.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/parse_core.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "parse_core.h"

/*
 * Modules known to keep data in PostgreSQL.  Longer names that extend a
 * shorter one (mod_data_export_worker vs mod_data_export) are handled by
 * preferring the longest match.
 */
static const char *const known_modules[] = {
	"mod_agreements", "mod_audit", "mod_authtoken", "mod_batch_print",
	"mod_bulk_operations", "mod_calendar", "mod_circulation",
	"mod_circulation_item", "mod_circulation_storage", "mod_configuration",
	"mod_consortia", "mod_consortia_keycloak", "mod_courses",
	"mod_data_export", "mod_data_export_spring", "mod_data_export_worker",
	"mod_data_import", "mod_dcb", "mod_di_converter_storage", "mod_email",
	"mod_entities_links", "mod_erm_usage", "mod_erm_usage_harvester",
	"mod_event_config", "mod_feesfines", "mod_finance_storage",
	"mod_fqm_manager", "mod_inn_reach", "mod_inventory",
	"mod_inventory_storage", "mod_invoice", "mod_invoice_storage",
	"mod_kb_ebsco_java", "mod_licenses", "mod_linked_data", "mod_lists",
	"mod_login", "mod_login_keycloak", "mod_marc_migrations", "mod_notes",
	"mod_notify", "mod_oa", "mod_oai_pmh", "mod_orders", "mod_orders_storage",
	"mod_organizations", "mod_organizations_storage",
	"mod_password_validator", "mod_patron_blocks", "mod_permissions",
	"mod_pubsub", "mod_quick_marc", "mod_reading_room",
	"mod_record_specifications", "mod_remote_storage",
	"mod_requests_mediated", "mod_roles_keycloak", "mod_scheduler",
	"mod_search", "mod_sender", "mod_serials_management", "mod_settings",
	"mod_source_record_manager", "mod_source_record_storage", "mod_tags",
	"mod_template_engine", "mod_tlr", "mod_user_import", "mod_users",
	"mod_users_bl", "mod_users_keycloak",
};

/* Schemas that belong to a module but to no tenant. */
static const struct
{
	const char *schema;
	const char *module;
}			global_schemas[] = {
	{"pubsub_config", "mod_pubsub"},
	{"data_import_global", "mod_data_import"},
};

static bool
is_tenant_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/*
 * A tenant id as FOLIO allows it: lower-case letters, digits and '_', not
 * starting or ending with '_', at most 63 bytes.
 */
static bool
valid_tenant(const char *s, size_t len)
{
	size_t		i;

	if (len == 0 || len > FPERF_MAX_IDENT)
		return false;
	if (s[0] == '_' || s[len - 1] == '_')
		return false;
	for (i = 0; i < len; i++)
		if (!is_tenant_char((unsigned char) s[i]))
			return false;
	return true;
}

/*
 * A module name: "mod_" followed by lower-case letters, digits and single
 * underscores, not ending with '_'.
 */
static bool
valid_module(const char *s, size_t len)
{
	size_t		i;

	if (len < 5 || len > FPERF_MAX_IDENT || memcmp(s, "mod_", 4) != 0)
		return false;
	if (s[len - 1] == '_')
		return false;
	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (!is_tenant_char(c))
			return false;
		if (c == '_' && i + 1 < len && s[i + 1] == '_')
			return false;
	}
	return true;
}

static bool
slice_eq(const char *s, size_t len, const char *lit)
{
	size_t		l = strlen(lit);

	return len == l && memcmp(s, lit, l) == 0;
}

bool
fperf_folio_schema_split(const char *name, size_t len,
						 FPerfSlice *tenant, FPerfSlice *module)
{
	size_t		i;
	size_t		best = 0;
	const char *best_mod = NULL;

	tenant->ptr = NULL;
	tenant->len = 0;
	module->ptr = NULL;
	module->len = 0;

	if (name == NULL || len == 0 || len > FPERF_MAX_IDENT)
		return false;

	/* Module-owned global schemas. */
	for (i = 0; i < sizeof(global_schemas) / sizeof(global_schemas[0]); i++)
	{
		if (slice_eq(name, len, global_schemas[i].schema))
		{
			module->ptr = global_schemas[i].module;
			module->len = strlen(global_schemas[i].module);
			return true;
		}
	}

	/* "mod_x__anything" (mod_search__system) and a bare "mod_x". */
	if (len > 4 && memcmp(name, "mod_", 4) == 0)
	{
		size_t		modlen = len;

		for (i = 4; i + 1 < len; i++)
		{
			if (name[i] == '_' && name[i + 1] == '_')
			{
				modlen = i;
				break;
			}
		}
		if (valid_module(name, modlen))
		{
			module->ptr = name;
			module->len = modlen;
			return true;
		}
	}

	/* Longest known module suffix with a well-formed tenant before it. */
	for (i = 0; i < sizeof(known_modules) / sizeof(known_modules[0]); i++)
	{
		size_t		ml = strlen(known_modules[i]);

		if (ml + 2 > len || ml <= best)
			continue;
		if (memcmp(name + len - ml, known_modules[i], ml) != 0 ||
			name[len - ml - 1] != '_')
			continue;
		if (!valid_tenant(name, len - ml - 1))
			continue;
		best = ml;
		best_mod = name + len - ml;
	}
	if (best_mod != NULL)
	{
		tenant->ptr = name;
		tenant->len = len - best - 1;
		module->ptr = best_mod;
		module->len = best;
		return true;
	}

	/* Unknown module: the first "_mod_" that splits cleanly. */
	for (i = 1; i + 5 < len; i++)
	{
		if (memcmp(name + i, "_mod_", 5) != 0)
			continue;
		if (valid_tenant(name, i) && valid_module(name + i + 1, len - i - 1))
		{
			tenant->ptr = name;
			tenant->len = i;
			module->ptr = name + i + 1;
			module->len = len - i - 1;
			return true;
		}
	}
	return false;
}

static unsigned char
ascii_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char) (c + ('a' - 'A')) : c;
}

size_t
fperf_appname_module(const char *name, size_t len, char *out, size_t outsize)
{
	size_t		end = len;
	size_t		i;
	size_t		n = 0;

	if (name == NULL || out == NULL || outsize == 0)
		return 0;
	out[0] = '\0';
	if (len < 5)
		return 0;

	/* Must start with "mod-" or "mod_" (case-insensitive). */
	if (ascii_lower((unsigned char) name[0]) != 'm' ||
		ascii_lower((unsigned char) name[1]) != 'o' ||
		ascii_lower((unsigned char) name[2]) != 'd' ||
		(name[3] != '-' && name[3] != '_'))
		return 0;

	/* Strip a version: the first '-' that is followed by a digit. */
	for (i = 4; i + 1 < len; i++)
	{
		if (name[i] == '-' && name[i + 1] >= '0' && name[i + 1] <= '9')
		{
			end = i;
			break;
		}
	}

	for (i = 0; i < end; i++)
	{
		unsigned char c = ascii_lower((unsigned char) name[i]);

		if (c == '-' || c == '.')
			c = '_';
		if (!is_tenant_char(c) || n + 1 >= outsize)
		{
			out[0] = '\0';
			return 0;
		}
		out[n++] = (char) c;
	}
	out[n] = '\0';
	if (!valid_module(out, n))
	{
		out[0] = '\0';
		return 0;
	}
	return n;
}

/* --- query text scanning ------------------------------------------------ */

static bool
is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		c >= 0x80;
}

static bool
is_ident_cont(unsigned char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

static bool
keyword_introduces_relation(const char *kw, size_t len)
{
	static const char *const kws[] = {"from", "join", "into", "update", "table"};
	size_t		i,
				j;

	for (i = 0; i < sizeof(kws) / sizeof(kws[0]); i++)
	{
		size_t		l = strlen(kws[i]);

		if (l != len)
			continue;
		for (j = 0; j < l; j++)
			if (ascii_lower((unsigned char) kw[j]) != kws[i][j])
				break;
		if (j == l)
			return true;
	}
	return false;
}

/* Skip whitespace and comments; returns the new position. */
static size_t
skip_space(const char *s, size_t len, size_t i)
{
	while (i < len)
	{
		unsigned char c = (unsigned char) s[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
			c == '\v')
			i++;
		else if (c == '-' && i + 1 < len && s[i + 1] == '-')
		{
			while (i < len && s[i] != '\n')
				i++;
		}
		else if (c == '/' && i + 1 < len && s[i + 1] == '*')
		{
			int			depth = 1;

			i += 2;
			while (i < len && depth > 0)
			{
				if (s[i] == '*' && i + 1 < len && s[i + 1] == '/')
				{
					depth--;
					i += 2;
				}
				else if (s[i] == '/' && i + 1 < len && s[i + 1] == '*')
				{
					depth++;
					i += 2;
				}
				else
					i++;
			}
		}
		else
			break;
	}
	return i;
}

/*
 * Read one identifier at s[i] (plain or double-quoted) into buf; returns the
 * position after it, or i if there is none.  Plain identifiers are folded to
 * lower case.  Identifiers longer than FPERF_MAX_IDENT bytes are truncated,
 * as the server does: by clip (the database encoding's character boundary)
 * when given, else at the byte limit.
 */
static size_t
read_ident(const char *s, size_t len, size_t i, char *buf, size_t *buflen,
		   bool *is_keyword_candidate, fperf_clip_fn clip)
{
	size_t		n = 0;
	bool		truncated = false;

	*is_keyword_candidate = false;
	*buflen = 0;
	if (i >= len)
		return i;
	if (s[i] == '"')
	{
		i++;
		while (i < len)
		{
			if (s[i] == '"')
			{
				if (i + 1 < len && s[i + 1] == '"')
				{
					if (n < FPERF_MAX_IDENT)
						buf[n++] = '"';
					else
						truncated = true;
					i += 2;
					continue;
				}
				i++;
				break;
			}
			if (n < FPERF_MAX_IDENT)
				buf[n++] = s[i];
			else
				truncated = true;
			i++;
		}
	}
	else
	{
		if (!is_ident_start((unsigned char) s[i]))
			return i;
		*is_keyword_candidate = true;
		while (i < len && is_ident_cont((unsigned char) s[i]))
		{
			if (n < FPERF_MAX_IDENT)
				buf[n++] = (char) ascii_lower((unsigned char) s[i]);
			else
				truncated = true;
			i++;
		}
	}
	if (truncated && clip != NULL)
	{
		size_t		c;

		buf[n] = '\0';
		c = clip(buf, n, FPERF_MAX_IDENT);
		if (c < n)
			n = c;
	}
	*buflen = n;
	return i;
}

void
fperf_scan_query(const char *s, size_t len, fperf_ident_cb cb, void *arg,
				 fperf_clip_fn clip)
{
	size_t		i = 0;
	bool		after_rel_keyword = false;
	char		buf[FPERF_MAX_IDENT + 1];

	if (s == NULL || cb == NULL)
		return;

	while (i < len)
	{
		unsigned char c;

		i = skip_space(s, len, i);
		if (i >= len)
			break;
		c = (unsigned char) s[i];

		if (c == '\'')
		{
			/* string literal; '' is an escaped quote */
			i++;
			while (i < len)
			{
				if (s[i] == '\'')
				{
					if (i + 1 < len && s[i + 1] == '\'')
					{
						i += 2;
						continue;
					}
					i++;
					break;
				}
				i++;
			}
			after_rel_keyword = false;
			continue;
		}
		if (c == '$' && i + 1 < len && (s[i + 1] == '$' ||
										is_ident_start((unsigned char) s[i + 1])))
		{
			/* dollar quoting: $tag$ ... $tag$ */
			size_t		tagstart = i;
			size_t		taglen;
			size_t		j = i + 1;

			while (j < len && s[j] != '$' && is_ident_cont((unsigned char) s[j]))
				j++;
			if (j < len && s[j] == '$')
			{
				taglen = j - tagstart + 1;
				i = j + 1;
				while (i < len)
				{
					if (s[i] == '$' && i + taglen <= len &&
						memcmp(s + i, s + tagstart, taglen) == 0)
					{
						i += taglen;
						break;
					}
					i++;
				}
				after_rel_keyword = false;
				continue;
			}
			i++;
			continue;
		}
		if (c == '"' || is_ident_start(c))
		{
			size_t		n = 0;
			bool		kwcand;
			size_t		next;

			i = read_ident(s, len, i, buf, &n, &kwcand, clip);
			buf[n] = '\0';
			next = skip_space(s, len, i);
			if (next < len && s[next] == '.' && n > 0)
			{
				/* a qualifier; report it, then skip the rest of the name */
				if (!cb(buf, n, true, arg))
					return;
				i = next + 1;
				i = skip_space(s, len, i);
				if (i < len && (s[i] == '"' || is_ident_start((unsigned char) s[i])))
				{
					i = read_ident(s, len, i, buf, &n, &kwcand, clip);
					/* a three-part name: skip one more part */
					next = skip_space(s, len, i);
					if (next < len && s[next] == '.')
					{
						i = skip_space(s, len, next + 1);
						if (i < len && (s[i] == '"' || is_ident_start((unsigned char) s[i])))
							i = read_ident(s, len, i, buf, &n, &kwcand, clip);
					}
				}
				after_rel_keyword = false;
				continue;
			}
			if (after_rel_keyword && n > 0 && kwcand &&
				(slice_eq(buf, n, "only") || slice_eq(buf, n, "lateral")))
				continue;		/* still waiting for the relation name */
			if (after_rel_keyword && n > 0 &&
				!(kwcand && (keyword_introduces_relation(buf, n) ||
							 slice_eq(buf, n, "select") ||
							 slice_eq(buf, n, "set") ||
							 slice_eq(buf, n, "values"))))
			{
				after_rel_keyword = false;
				if (!cb(buf, n, false, arg))
					return;
				continue;
			}
			after_rel_keyword = kwcand && keyword_introduces_relation(buf, n);
			continue;
		}
		/* any other byte */
		after_rel_keyword = false;
		i++;
	}
}
