#include "bulkhead/bridge/sidekiq_scripts.h"

#include "bulkhead/bridge/sidekiq_script_text.h"

namespace bulkhead {

const SidekiqScripts& SidekiqScripts::Get() {
  namespace text = sidekiq_script_text;
  static const SidekiqScripts scripts{
      .take = RedisScript(std::string(text::k_take)),
      .settle = RedisScript(std::string(text::k_settle)),
      .heartbeat = RedisScript(std::string(text::k_heartbeat)),
      .reap = RedisScript(std::string(text::k_reap)),
      .stop = RedisScript(std::string(text::k_stop)),
      .push_outcomes = RedisScript(std::string(text::k_push_outcomes)),
  };
  return scripts;
}

}  // namespace bulkhead
