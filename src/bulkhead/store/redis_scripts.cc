#include "bulkhead/store/redis_scripts.h"

#include "bulkhead/store/redis_script_text.h"

namespace bulkhead {

StoreScripts::StoreScripts() {
  scripts_.reserve(kScriptCount);
  for (const ScriptSource& source : kScriptSources) {
    std::string text;
    for (std::string_view part : source.parts) {
      if (!text.empty()) text += '\n';
      text += part;
    }
    scripts_.emplace_back(std::move(text));
  }
}

const StoreScripts& StoreScripts::Get() {
  static const StoreScripts scripts;
  return scripts;
}

std::string_view StoreScripts::Name(Script script) {
  return kScriptSources[static_cast<size_t>(script)].name;
}

}  // namespace bulkhead
