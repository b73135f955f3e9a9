// The IIS SDK's native-code API (httpserv.h) with the Windows headers it needs, in the order
// it needs them (winsock2.h before windows.h: http.h takes the sockets' types from it).
// Every file of the module that speaks to IIS includes this first.
#ifndef GATEHOUSE_IIS_SDK_H
#define GATEHOUSE_IIS_SDK_H

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <winsock2.h>
#include <windows.h>
#include <httpserv.h>

#endif
