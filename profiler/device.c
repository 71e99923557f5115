/*
 * device.c: the registry of device backends (device.h).  Adding a backend
 * is one row in the table below and its hb_device_ops in device.h.
 */
#include <stddef.h>
#include <string.h>

#include "device.h"     /* defines: hb_device_cpu, hb_device_cuda */
#include "hb_config.h"  /* defines: HB_HAVE_GPU */

static const struct hb_device_ops *const backends[] = {
	&hb_device_cpu,
#if HB_HAVE_GPU
	&hb_device_cuda,
#endif
};

const struct hb_device_ops *hb_device_backend(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

const char *hb_device_backend_names(void)
{
#if HB_HAVE_GPU
	return "cpu,cuda";
#else
	return "cpu";
#endif
}
