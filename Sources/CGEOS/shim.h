#ifndef CGEOS_SHIM_H
#define CGEOS_SHIM_H
/* Re-entrant API only: the global-context functions do not even compile. */
#define GEOS_USE_ONLY_R_API
#include <geos_c.h>
#endif
