// The addon's delay-load hook (binding/iis/delay_load_hook.cpp), under wine: which module
// answers the addon's "node.exe" imports, as the modules in the process change. This program
// plays node.exe (it exports gh_delay_probe itself); libnode.dll and node.dll are stand-ins
// that export it too (delay_load_fake_node.cpp); the addon (delay_load_addon.cpp) imports it
// from "node.exe", delay-loaded, with the project's hook. The addon is loaded afresh for each
// case, so each case resolves its import anew.
//   gatehouse_delay_load_test.exe <dir holding gh_delay_addon.dll, libnode.dll, node.dll>
// Prints "N checks passed" or the failures, and exits non-zero on any.
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <cstdio>
#include <cstring>
#include <string>

extern "C" __declspec(dllexport) const char* gh_delay_probe() { return "process image"; }

namespace {

int failures = 0;
int passed = 0;
std::string dir;

void check(bool ok, const std::string& what) {
  if (ok) {
    ++passed;
  } else {
    ++failures;
    std::printf("FAIL %s\n", what.c_str());
  }
}

HMODULE load(const char* name) { return LoadLibraryA((dir + "\\" + name).c_str()); }

// Loads the addon, asks it which module answered its import, unloads it.
std::string answered_by() {
  HMODULE addon = load("gh_delay_addon.dll");
  if (addon == nullptr) return "(the addon did not load)";
  using Which = const char* (*)();
  auto which = reinterpret_cast<Which>(reinterpret_cast<void*>(GetProcAddress(addon, "gh_delay_which")));
  std::string out = which == nullptr ? "(no gh_delay_which)" : which();
  FreeLibrary(addon);
  if (GetModuleHandleA("gh_delay_addon.dll") != nullptr) out += " (the addon stayed loaded)";
  return out;
}

void expect(const char* situation, const char* module) {
  const std::string got = answered_by();
  check(got == module, std::string(situation) + ": expected " + module + ", got " + got);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::printf("usage: gatehouse_delay_load_test.exe <dir>\n");
    return 2;
  }
  dir = argv[1];
  expect("neither libnode.dll nor node.dll loaded (node.exe)", "process image");
  HMODULE node_dll = load("node.dll");
  check(node_dll != nullptr, "the stand-in node.dll loads");
  expect("node.dll loaded", "node.dll");
  HMODULE libnode = load("libnode.dll");
  check(libnode != nullptr, "the stand-in libnode.dll loads");
  expect("libnode.dll and node.dll loaded", "libnode.dll");
  FreeLibrary(node_dll);
  expect("libnode.dll loaded (w3wp.exe with the IIS module)", "libnode.dll");
  FreeLibrary(libnode);
  check(GetModuleHandleA("libnode.dll") == nullptr, "the stand-in libnode.dll unloaded");
  expect("both unloaded again (the hook loads neither)", "process image");
  if (failures != 0) {
    std::printf("%d checks failed\n", failures);
    return 1;
  }
  std::printf("%d checks passed\n", passed);
  return 0;
}
