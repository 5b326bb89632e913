/* placeholder until the sampler lands: see issue 4 */
#include "folio_perf.h"

void
fperf_sampler_define_gucs(void)
{
}

Size
fperf_sampler_shmem_size(void)
{
	return 0;
}

void
fperf_sampler_shmem_init(void)
{
}

void
fperf_sampler_register(void)
{
}
