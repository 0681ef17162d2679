// StoreScripts: the registry CMakeLists.txt generates from redis_scripts/*.lua.
#include "bulkhead/store/redis_scripts.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "bulkhead/store/redis_script_text.h"

namespace bulkhead {
namespace {

namespace lua = redis_script_text;

std::string JoinedScriptParts(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out += (out.empty() ? "" : "\n") + std::string(p);
  return out;
}

TEST(StoreScriptsTest, AScriptIsThePreludeTheLibrariesItsFirstLineNamesAndItsFile) {
  const StoreScripts& scripts = StoreScripts::Get();
  EXPECT_EQ(&scripts, &StoreScripts::Get()) << "built once";
  EXPECT_EQ(scripts[Script::kClaimCron].source(),
            JoinedScriptParts({lua::k_prelude, lua::k_claim_cron}));
  EXPECT_EQ(scripts[Script::kPush].source(),
            JoinedScriptParts({lua::k_prelude, lua::k_push_lib, lua::k_push}));
  EXPECT_TRUE(lua::k_fetch.starts_with("-- uses: track_lib\n"));
  EXPECT_EQ(scripts[Script::kFetch].source(),
            JoinedScriptParts({lua::k_prelude, lua::k_track_lib, lua::k_fetch}));
  EXPECT_EQ(scripts[Script::kAck].source(),
            JoinedScriptParts({lua::k_prelude, lua::k_batch_lib, lua::k_track_lib, lua::k_ack}));
}

TEST(StoreScriptsTest, EveryScriptHasItsFileNameAndItsOwnSha1) {
  const StoreScripts& scripts = StoreScripts::Get();
  ASSERT_EQ(scripts.all().size(), kScriptCount);
  EXPECT_EQ(StoreScripts::Name(Script::kFetchThrottled), "fetch_throttled");
  EXPECT_EQ(StoreScripts::Name(Script::kAck), "ack");
  std::set<std::string_view> names;
  std::set<std::string> hashes;
  for (size_t i = 0; i < kScriptCount; ++i) {
    std::string_view name = StoreScripts::Name(static_cast<Script>(i));
    EXPECT_NE(name, "prelude");
    EXPECT_FALSE(name.ends_with("_lib")) << name << ": a library is no script";
    names.insert(name);
    const RedisScript& script = scripts[static_cast<Script>(i)];
    EXPECT_EQ(&script, &scripts.all()[i]);
    EXPECT_EQ(script.sha1().size(), 40u);
    hashes.insert(script.sha1());
  }
  EXPECT_EQ(names.size(), kScriptCount);
  EXPECT_EQ(hashes.size(), kScriptCount);
}

}  // namespace
}  // namespace bulkhead
