// Fuzz target: IP addresses and CIDR ranges as the SSRF guard reads them
// (src/bulkhead/transport/ip_address.h, ssrf_guard.h).
// Input: one text, parsed as an address and as a range. Invariants checked: an accepted address
// prints to a text that parses back to the same address; so does a range; the SSRF verdict of an
// address is the same whatever form it came in, and a guard with allow_private_targets allows it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "bulkhead/transport/ip_address.h"
#include "bulkhead/transport/ssrf_guard.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view text) {
  std::fprintf(stderr, "fuzz_ip_address: %s for %.*s\n", what, static_cast<int>(text.size()),
               text.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using bulkhead::CidrRange;
  using bulkhead::IpAddress;

  if (auto ip = IpAddress::Parse(text)) {
    std::string printed = ip->ToString();
    auto again = IpAddress::Parse(printed);
    if (!again || !(*again == *ip)) Fail("ToString does not parse back to the same address", text);
    (void)ip->ToUriString();
    auto range = bulkhead::FindNonPublicRange(*ip);
    auto range_again = bulkhead::FindNonPublicRange(*again);
    if (range.has_value() != range_again.has_value()) Fail("verdict depends on the form", text);
    if (range) {
      auto cidr = CidrRange::Parse(range->range);
      if (!cidr) Fail("FindNonPublicRange names a range CidrRange cannot parse", text);
      if (!range->embedded_v4 && !cidr->Contains(*ip))
        Fail("named range does not contain it", text);
    }
    bulkhead::SsrfGuard strict(bulkhead::SsrfPolicy{});
    (void)strict.CheckAddress(*ip);
    bulkhead::SsrfGuard open(bulkhead::SsrfPolicy{.allow_private_targets = true});
    if (!open.CheckAddress(*ip).ok()) Fail("allow_private_targets refused an address", text);
    // The address as its own single-address exception.
    if (auto self = CidrRange::Parse(printed)) {
      if (!self->Contains(*ip)) Fail("a bare-address range does not contain the address", text);
      bulkhead::SsrfGuard excepted(bulkhead::SsrfPolicy{.allowed_ranges = {*self}});
      if (!excepted.CheckAddress(*ip).ok())
        Fail("an allowed range did not allow its address", text);
    } else {
      Fail("an address is not a valid single-address range", text);
    }
  }

  if (auto cidr = CidrRange::Parse(text)) {
    std::string printed = cidr->ToString();
    auto again = CidrRange::Parse(printed);
    if (!again || again->ToString() != printed)
      Fail("CidrRange::ToString does not round-trip", text);
  }
  return 0;
}
