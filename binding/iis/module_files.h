// Where the IIS module finds what it loads, from its own DLL's place in the installed package:
// <package>/build/Release/gatehouse_iis.dll, libnode.dll beside it, <package>/binding/iis/boot.cjs
// (docs/in-server-module.md).
#ifndef GATEHOUSE_IIS_MODULE_FILES_H
#define GATEHOUSE_IIS_MODULE_FILES_H

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <string>

namespace gh_iis {

/** The module's DLL, as a path (long paths too), or "". */
std::wstring module_path(HMODULE module);

/** libnode.dll in the module's own directory. */
std::wstring libnode_path(HMODULE module);

/** Node's boot script (UTF-8): binding/iis/boot.cjs of the package, unless GATEHOUSE_IIS_BOOT names another. */
std::string boot_script(HMODULE module);

}  // namespace gh_iis

#endif
