// The IIS module's answers: the core's response (a decision to respond), or the module's own.
#ifndef GATEHOUSE_IIS_RESPONSE_WRITER_H
#define GATEHOUSE_IIS_RESPONSE_WRITER_H

#include "iis_sdk.h"

#include "../core/owned_decision.h"

namespace gh_iis {

/**
 * Writes the decision's status, headers and body as the response and finishes the request.
 * The status stands as written: IIS's custom error pages do not replace it.
 */
REQUEST_NOTIFICATION_STATUS respond(IHttpContext* context, const gh::OwnedDecision& decision);

/** What the module answers by itself, in the shape of every native error: {"error": message}. */
REQUEST_NOTIFICATION_STATUS refuse(IHttpContext* context, int status, const char* message);

/**
 * The bare status, for when even an answer cannot be written (respond's own failures).
 * Calls only IIS: nothing here allocates or throws.
 */
REQUEST_NOTIFICATION_STATUS fail(IHttpContext* context, USHORT status) noexcept;

/**
 * Closes the client's connection after this response, so the unread rest of a body cannot
 * hold it: on HTTP/1.x only. An HTTP/2 (or HTTP/3) connection carries other requests' streams
 * too, and the response ends this request's stream by itself (http.sys resets what the
 * client still sends on it), so the connection stays. Call it after respond (whose Clear() would undo it).
 */
void disconnect_after_response(IHttpContext* context) noexcept;

}  // namespace gh_iis

#endif
