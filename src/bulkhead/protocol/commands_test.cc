// The command table's properties, pinned per verb, and the admission rule the session applies
// before a handler runs (fwp_server_test.cc checks the same over a socket).
#include "bulkhead/protocol/commands.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "bulkhead/protocol/replies.h"

namespace bulkhead {
namespace {

struct Expected {
  bool needs_identity = true;
  bool opens_session = false;
  bool may_block = false;
  bool allowed_while_stopping = false;
  const char* enterprise_only = nullptr;
};

// Every verb of the protocol with the properties it must have (docs/protocol.md).
const std::map<std::string, Expected>& ExpectedTable() {
  static const std::map<std::string, Expected> table = {
      {"HELLO", {.needs_identity = false, .opens_session = true, .may_block = true}},
      {"PUSH", {}},
      {"PUSHB", {}},
      {"FETCH", {.may_block = true}},
      {"ACK", {.allowed_while_stopping = true}},
      {"FAIL", {.allowed_while_stopping = true}},
      {"BEAT", {}},
      {"INFO", {}},
      {"FLUSH", {}},
      {"END", {.needs_identity = false, .allowed_while_stopping = true}},
      {"MUTATE", {}},
      {"QUEUE", {}},
      {"BATCH", {}},
      {"TRACK", {}},
  };
  return table;
}

TEST(CommandTableTest, EveryVerbHasItsProperties) {
  const auto& expected = ExpectedTable();
  EXPECT_EQ(Commands().size(), expected.size()) << "a verb was added or removed: pin it here";
  for (const Command& c : Commands()) {
    SCOPED_TRACE(std::string(c.verb));
    auto it = expected.find(std::string(c.verb));
    ASSERT_NE(it, expected.end()) << "not pinned in ExpectedTable()";
    const Expected& e = it->second;
    EXPECT_EQ(c.needs_identity, e.needs_identity);
    EXPECT_EQ(c.opens_session, e.opens_session);
    EXPECT_EQ(c.may_block, e.may_block);
    EXPECT_EQ(c.allowed_while_stopping, e.allowed_while_stopping);
    if (e.enterprise_only == nullptr) {
      EXPECT_EQ(c.enterprise_only, nullptr);
      EXPECT_NE(c.handler, nullptr);
    } else {
      ASSERT_NE(c.enterprise_only, nullptr);
      EXPECT_STREQ(c.enterprise_only, e.enterprise_only);
      EXPECT_EQ(c.handler, nullptr);
    }
    EXPECT_EQ(FindCommand(c.verb), &c);
  }
}

TEST(CommandTableTest, VerbsAreCaseSensitive) {
  EXPECT_NE(FindCommand("FETCH"), nullptr);
  EXPECT_EQ(FindCommand("fetch"), nullptr);
  EXPECT_EQ(FindCommand("FETCHX"), nullptr);
  EXPECT_EQ(FindCommand(""), nullptr);
}

TEST(AdmitTest, TheFirstLineMustBeAHelloWithAJsonObjectOrEnd) {
  const Command* hello = FindCommand("HELLO");
  EXPECT_EQ(Admit(hello, "{\"v\":2}", false, false), Admission::kRun);
  EXPECT_EQ(Admit(hello, "", false, false), Admission::kCloseQuietly);
  EXPECT_EQ(Admit(hello, "[1]", false, false), Admission::kCloseQuietly);
  EXPECT_EQ(Admit(FindCommand("END"), "", false, false), Admission::kRun);
  EXPECT_EQ(Admit(nullptr, "", false, false), Admission::kCloseQuietly);
  for (const Command& c : Commands()) {
    if (!c.needs_identity) continue;
    EXPECT_EQ(Admit(&c, "{}", false, false), Admission::kCloseQuietly) << c.verb;
    EXPECT_EQ(Admit(&c, "{}", false, true), Admission::kCloseQuietly) << c.verb;
  }
  // Identified, a HELLO runs whatever follows it (its handler answers "already received").
  EXPECT_EQ(Admit(hello, "", true, false), Admission::kRun);
}

TEST(AdmitTest, WhileStoppingOnlyTheAllowedCommandsRun) {
  for (const Command& c : Commands()) {
    Admission stopping = Admit(&c, "{}", true, true);
    if (c.allowed_while_stopping) {
      EXPECT_EQ(stopping, Admission::kRun) << c.verb;
    } else {
      EXPECT_EQ(stopping, Admission::kShuttingDown) << c.verb;
    }
  }
  EXPECT_EQ(Admit(nullptr, "", true, true), Admission::kShuttingDown);
  EXPECT_EQ(Admit(FindCommand("END"), "", false, true), Admission::kRun);
  EXPECT_EQ(Admit(FindCommand("HELLO"), "{}", false, true), Admission::kShuttingDown);
}

TEST(AdmitTest, UnknownAndEnterpriseOnlyCommandsAreAnsweredWithoutAHandler) {
  EXPECT_EQ(Admit(nullptr, "", true, false), Admission::kUnknown);
  EXPECT_EQ(Admit(FindCommand("BATCH"), "NEW {}", true, false), Admission::kRun);
  EXPECT_EQ(Admit(FindCommand("TRACK"), "GET x", true, false), Admission::kRun);
  for (const Command& c : Commands()) {
    if (c.handler == nullptr) continue;
    EXPECT_EQ(Admit(&c, "{}", true, false), Admission::kRun) << c.verb;
  }
}

}  // namespace
}  // namespace bulkhead
