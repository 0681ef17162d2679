#include "bulkhead/util/utf8_cut.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(CutUtf8Test, ShortTextIsKept) {
  EXPECT_EQ(CutUtf8("", 3), "");
  EXPECT_EQ(CutUtf8("abc", 3), "abc");
}

TEST(CutUtf8Test, LongTextIsCutBeforeASequenceWithAnEllipsis) {
  EXPECT_EQ(CutUtf8("abcd", 3), "abc…");
  // "é" is 2 bytes at offsets 2-3: a cut at 3 would split it.
  EXPECT_EQ(CutUtf8("ab\xC3\xA9z", 3), "ab…");
  EXPECT_EQ(CutUtf8("ab\xC3\xA9z", 4), "ab\xC3\xA9…");
}

}  // namespace
}  // namespace bulkhead
