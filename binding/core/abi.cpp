// The ABI version every host checks before it calls anything else.
#include "gh_core.h"

extern "C" uint32_t gh_abi_version(void) { return GH_ABI_VERSION; }
