// Text between UTF-8 (the module's and Node's) and UTF-16 (Windows'), for the IIS module.
#ifndef GATEHOUSE_IIS_WIDE_TEXT_H
#define GATEHOUSE_IIS_WIDE_TEXT_H

#include <string>

namespace gh_iis {

/** UTF-8 → UTF-16; bytes that are not UTF-8 become U+FFFD. */
std::wstring wide(const std::string& text);

/** UTF-16 → UTF-8. */
std::string utf8(const std::wstring& text);

}  // namespace gh_iis

#endif
