// A stand-in for a Node module (binding/host/delay_load_test.cpp builds it twice, as
// libnode.dll and as node.dll): it exports the one function the test addon imports from
// "node.exe", which says who answered.
#ifndef GH_FAKE_NODE_NAME
#error GH_FAKE_NODE_NAME names the module this build plays
#endif

extern "C" __declspec(dllexport) const char* gh_delay_probe() { return GH_FAKE_NODE_NAME; }
