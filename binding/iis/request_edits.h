// What a request the core lets through carries on to the app: the identity headers edited as
// the decision says, and the body the module read given back.
#ifndef GATEHOUSE_IIS_REQUEST_EDITS_H
#define GATEHOUSE_IIS_REQUEST_EDITS_H

#include "iis_sdk.h"

#include <string>

#include "../core/owned_decision.h"

namespace gh_iis {

/**
 * Removes the decision's headers, then sets its own: removed first, so a spoofed alias never
 * survives next to the identity set after it. On a failure, S_OK is not returned and `call`
 * names the IIS method that failed.
 */
HRESULT edit_headers(IHttpRequest* request, const gh::OwnedDecision& decision, const char** call);

/**
 * The body the module read (an auth-route POST the core lets through), given back to IIS, or
 * the app would read only what the module left unread. IIS keeps the buffer, uncopied, until
 * the app has read it: request-lifetime memory.
 */
HRESULT give_body_back(IHttpContext* context, const std::string& body);

}  // namespace gh_iis

#endif
