// The request's entity body as the body reader reads it (body_reader.h), from IIS: asynchronous
// reads, and the deadline's cancel (IIS then completes the pending read with an error).
#ifndef GATEHOUSE_IIS_REQUEST_ENTITY_H
#define GATEHOUSE_IIS_REQUEST_ENTITY_H

#include "iis_sdk.h"

#include "body_reader.h"

namespace gh_iis {

class RequestEntity final : public EntitySource {
 public:
  explicit RequestEntity(IHttpContext* context) : context_(context) {}
  DWORD remaining() override { return context_->GetRequest()->GetRemainingEntityBytes(); }
  HRESULT read(void* buffer, DWORD size, DWORD* received, BOOL* pending) override {
    return context_->GetRequest()->ReadEntityBody(buffer, size, TRUE, received, pending);
  }
  void cancel() override { context_->CancelIo(); }

 private:
  IHttpContext* context_;
};

}  // namespace gh_iis

#endif
