#include "bulkhead/util/clock.h"

namespace bulkhead {

SystemClock& SystemClock::Instance() {
  static SystemClock clock;
  return clock;
}

}  // namespace bulkhead
