// A stand-in for the addon (binding/host/delay_load_test.cpp): like gatehouse_native.node, it
// imports from "node.exe", delay-loaded, and links binding/iis/delay_load_hook.cpp, which
// decides what "node.exe" is in this process.
extern "C" const char* gh_delay_probe();

extern "C" __declspec(dllexport) const char* gh_delay_which() { return gh_delay_probe(); }
