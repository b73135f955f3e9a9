#include "module_files.h"

#include "pool_settings.h"
#include "wide_text.h"

namespace gh_iis {
namespace {

// Node as a DLL, as the module's build delay-loads it. The fake IIS (test/win32/fake-iis) runs the
// module inside node.exe, where a DLL named libnode.dll would be taken for Node itself by the
// addon's delay-load hook (binding/iis/delay_load_hook.cpp): it loads a stand-in of its own name.
#ifdef GATEHOUSE_FAKE_IIS
constexpr wchar_t kLibnodeDll[] = L"gatehouse-fake-libnode.dll";
#else
constexpr wchar_t kLibnodeDll[] = L"libnode.dll";
#endif

std::wstring parent(const std::wstring& path) { return path.substr(0, path.find_last_of(L"\\/")); }

}  // namespace

std::wstring module_path(HMODULE module) {
  // The buffer grows until the name fits.
  std::wstring path(MAX_PATH, L'\0');
  for (;;) {
    const DWORD length = GetModuleFileNameW(module, path.data(), static_cast<DWORD>(path.size()));
    if (length == 0) return std::wstring();
    if (length < path.size()) {
      path.resize(length);
      return path;
    }
    if (path.size() >= 32768) return std::wstring();
    path.resize(path.size() * 2);
  }
}

std::wstring libnode_path(HMODULE module) { return parent(module_path(module)) + L"\\" + kLibnodeDll; }

std::string boot_script(HMODULE module) {
  const std::wstring configured = environment(L"GATEHOUSE_IIS_BOOT");
  if (!configured.empty()) return utf8(configured);
  std::wstring dir = module_path(module);
  for (int up = 0; up < 3; ++up) dir = parent(dir);
  return utf8(dir + L"\\binding\\iis\\boot.cjs");
}

}  // namespace gh_iis
