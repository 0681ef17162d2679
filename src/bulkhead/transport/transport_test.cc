#include "bulkhead/transport/transport.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(TransportErrorTest, TimeoutsAreTheDeadlinesAndTheLowSpeedCut) {
  for (TransportError e : {TransportError::kConnectTimeout, TransportError::kTimeoutFirstByte,
                           TransportError::kTimeoutTotal, TransportError::kLowSpeed}) {
    EXPECT_TRUE(IsTimeout(e)) << TransportErrorName(e);
  }
  for (TransportError e :
       {TransportError::kNone, TransportError::kDns, TransportError::kConnectRefused,
        TransportError::kTls, TransportError::kReset, TransportError::kSsrfRefused,
        TransportError::kTooManyRedirects, TransportError::kCancelled, TransportError::kOther}) {
    EXPECT_FALSE(IsTimeout(e)) << TransportErrorName(e);
  }
}

}  // namespace
}  // namespace bulkhead
