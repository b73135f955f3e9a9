// The addon's delay-load hook (Windows). The addon imports Node-API (and the OpenSSL functions
// the core calls) from "node.exe", delay-loaded (/DELAYLOAD:node.exe): the loader resolves them
// on first use, and this hook says from which module, so that the addon works in whatever
// process runs Node:
//   1. libnode.dll: Node built as a shared library, as the IIS module embeds it in w3wp.exe;
//   2. node.dll: other embedders' name for the same (Electron-style builds);
//   3. the process image: node.exe itself, however it is named.
// Only modules already in the process are used (GetModuleHandle, never LoadLibrary): the Node
// the addon must talk to is the one running it. It replaces cmake-js's hook, which tries
// node.dll, nw.dll and the process image but never libnode.dll, so inside w3wp.exe (whose image
// exports no napi_*) the addon's first Node-API call would fail.
#ifdef _WIN32

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <delayimp.h>
#include <string.h>

namespace {

HMODULE node_module() {
  static const char* const kNames[] = {"libnode.dll", "node.dll"};
  for (const char* name : kNames) {
    if (HMODULE loaded = GetModuleHandleA(name)) return loaded;
  }
  return GetModuleHandleA(nullptr);
}

FARPROC WINAPI gatehouse_delay_load_hook(unsigned event, PDelayLoadInfo info) {
  if (event != dliNotePreLoadLibrary || info == nullptr || info->szDll == nullptr) return nullptr;
  if (_stricmp(info->szDll, "node.exe") != 0) return nullptr;  // any other delay-loaded DLL: the loader's own way
  return reinterpret_cast<FARPROC>(node_module());
}

}  // namespace

// The delay-load helper's notification hook (declared by delayimp.h: const with MSVC's
// secure hooks, writable in older SDKs and mingw-w64; decltype takes whichever it is).
decltype(__pfnDliNotifyHook2) __pfnDliNotifyHook2 = gatehouse_delay_load_hook;

#endif
